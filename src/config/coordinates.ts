/**
 * Per-run coordinates: where to deploy. From the environment, overridden by flags, validated
 * with zod. They never come from the group plan. Secret files are referred to by path only:
 * their contents never enter the graph (the tools read them at run time).
 */
import { z } from 'zod';
import { DURATION_RULES, durationProblem, parseDuration, type Duration, type DurationRule } from './duration.js';
import { labelProblem } from './names.js';
import { parseMaxUnavailable, type MaxUnavailable } from './max-unavailable.js';
import type { InputIssue } from '../errors.js';
import { absoluteFile } from '../paths.js';

import { COORDINATES, ON_FAILURE, type CoordinateFlags, type OnFailure } from './coordinate-table.js';
import { resolveSpireCoordinates, type SpireCoordinates } from './spire-coordinates.js';
import { readRegistryCa, REGISTRY_CA_ENV } from './registry-ca.js';

export { COORDINATES, ON_FAILURE, type CoordinateFlags, type OnFailure };

const quantity = z.string().regex(/^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/, 'must be a Kubernetes quantity such as 1Gi or 500Mi');

/** A duration parsed from its text (duration.ts), checked against its rule. */
function durationSchema(rule: DurationRule) {
  return z.custom<Duration>().superRefine((d, ctx) => {
    // an optional one given as text that is no duration arrives as null (not absent)
    const problem = durationProblem((d as Duration | null) ?? undefined, rule);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  });
}

/** --on-failure, DEPLOY_ON_FAILURE and the group plan's onFailure. */
export const onFailureSchema = z.enum(ON_FAILURE, { error: 'must be node (a failed rollout sets back the failed node alone) or group (it also sets back every node this run changed)' });

const coordinatesSchema = z.object({
  registry: z
    .string({ error: 'is not set: name the registry the nodes are pushed to, e.g. K8S_REGISTRY=registry.example.org:5000' })
    .min(1, 'is empty: name the registry the nodes are pushed to, e.g. K8S_REGISTRY=registry.example.org:5000')
    .regex(/^[a-zA-Z0-9.-]+(:[0-9]{1,5})?(\/[a-z0-9._-]+)*$/, 'must be host[:port][/path] without a scheme or a trailing slash')
    .refine((s) => s === s.toLowerCase() || !s.includes('/'), 'repository paths must be lower case'),
  kubeconfig: z.string().min(1).optional(),
  namespace: z.string().superRefine((s, ctx) => {
    const p = labelProblem(s);
    if (p) ctx.addIssue({ code: 'custom', message: `"${s}" ${p}` });
  }),
  storageClass: z.string().min(1).optional(),
  stateSize: quantity,
  runtimeClass: z.string().superRefine((s, ctx) => {
    const p = labelProblem(s, 253);
    if (p) ctx.addIssue({ code: 'custom', message: `"${s}" ${p}` });
  }),
  rolloutTimeout: durationSchema(DURATION_RULES.rolloutTimeout),
  stopTimeout: durationSchema(DURATION_RULES.stopTimeout),
  probePeriod: durationSchema(DURATION_RULES.probePeriod),
  registryTlsVerify: z.boolean(),
  /** The wave size (order-rules.ts): absent, no limit. */
  maxUnavailable: z.custom<MaxUnavailable>((v) => v !== null, { error: 'must be a whole number of nodes (at least 1) or a percentage of the target\'s nodes (1%-100%), e.g. 10 or 20%' }).optional(),
  /** The soak (rollout/soak.ts): absent, the group plan's, else none. */
  soak: durationSchema(DURATION_RULES.soak).optional(),
  /** What a failed rollout sets back (workflow/target/group-rollback.ts): absent, the group plan's, else `node`. */
  onFailure: onFailureSchema.optional(),
});

/**
 * `spire`: present only when the SPIRE coordinates are set (K8S_SPIRE_NODE).
 * `registryCaFile`: K8S_REGISTRY_CA_FILE made absolute, present only when set (registry-ca.ts).
 */
export type Coordinates = z.infer<typeof coordinatesSchema> & { readonly spire?: SpireCoordinates; readonly registryCaFile?: string };

/** `{[key]: parse(text)}` when the text is given, `{}` when not (so the schema sees it absent). */
function optionalText<K extends string, T>(key: K, text: string | undefined, parse: (t: string) => T): { [k in K]?: T } {
  return text === undefined ? {} : ({ [key]: parse(text) } as { [k in K]?: T });
}

function pick(flag: string | undefined, envValue: string | undefined): string | undefined {
  if (flag !== undefined) return flag;
  return envValue === '' ? undefined : envValue;
}

/**
 * Flags override the environment. Returns every problem at once. The files named (kubeconfig,
 * registry CA, SSH key) come back absolute, by src/paths.ts absoluteFile's rule against `cwd`.
 */
export function resolveCoordinates(
  flags: CoordinateFlags,
  env: NodeJS.ProcessEnv,
  /** The run's working directory (RunContext.cwd): relative files are its. */
  cwd: string,
): { ok: true; value: Coordinates } | { ok: false; issues: InputIssue[] } {
  const where: Record<string, string> = {};
  for (const c of COORDINATES) where[c.key] = `${c.env} (or ${c.flag.split(' ')[0]})`;
  where.registryTlsVerify = 'K8S_REGISTRY_TLS_VERIFY';

  const timeoutText = pick(flags.rolloutTimeout, env.DEPLOY_ROLLOUT_TIMEOUT) ?? DURATION_RULES.rolloutTimeout.defaultText;
  const stopText = pick(flags.stopTimeout, env.DEPLOY_STOP_TIMEOUT) ?? DURATION_RULES.stopTimeout.defaultText;
  const probeText = pick(flags.probePeriod, env.DEPLOY_PROBE_PERIOD) ?? DURATION_RULES.probePeriod.defaultText;
  const tls = (env.K8S_REGISTRY_TLS_VERIFY ?? 'true').toLowerCase();
  const raw = {
    // K8S_REGISTRY set to "" counts as unset, but is reported as empty to name the mistake
    registry: flags.registry ?? env.K8S_REGISTRY,
    kubeconfig: pick(flags.kubeconfig, env.KUBE_CONFIG_PATH),
    namespace: pick(flags.namespace, env.K8S_NAMESPACE) ?? 'fediversity',
    storageClass: pick(flags.storageClass, env.K8S_STORAGE_CLASS),
    stateSize: pick(flags.stateSize, env.K8S_STATE_SIZE) ?? '1Gi',
    runtimeClass: pick(flags.runtimeClass, env.K8S_RUNTIME_CLASS) ?? 'systemd',
    rolloutTimeout: parseDuration(timeoutText),
    stopTimeout: parseDuration(stopText),
    probePeriod: parseDuration(probeText),
    maxUnavailable: parseMaxUnavailable(pick(flags.maxUnavailable, env.DEPLOY_MAX_UNAVAILABLE)),
    // unset stays unset: the group plan's default comes next (load.ts)
    ...optionalText('soak', pick(flags.soak, env.DEPLOY_SOAK), (t) => parseDuration(t) ?? null),
    ...optionalText('onFailure', pick(flags.onFailure, env.DEPLOY_ON_FAILURE), (t) => t.trim()),
    registryTlsVerify: tls === 'false' || tls === '0' || tls === 'no' ? false : tls === 'true' || tls === '1' || tls === 'yes' ? true : undefined,
  };
  const files: InputIssue[] = [];
  if (raw.kubeconfig !== undefined) {
    const k = absoluteFile(raw.kubeconfig, { cwd, env });
    if (k.ok) raw.kubeconfig = k.path;
    else files.push({ where: where.kubeconfig!, message: k.problem });
  }
  const parsed = coordinatesSchema.safeParse(raw);
  const spire = resolveSpireCoordinates(env, cwd);
  const order = stopWithinRollout(raw.stopTimeout, raw.rolloutTimeout);
  const ca = registryCaFile(env, raw.registryTlsVerify, cwd);
  if (order) return { ok: false, issues: [...(parsed.success ? [] : issuesOf(parsed.error.issues)), { where: where.stopTimeout!, message: order }, ...files, ...ca.issues, ...(spire.ok ? [] : spire.issues)] };
  if (parsed.success && spire.ok && ca.issues.length === 0 && files.length === 0) {
    return { ok: true, value: { ...parsed.data, ...(ca.file !== undefined ? { registryCaFile: ca.file } : {}), ...(spire.value !== undefined ? { spire: spire.value } : {}) } };
  }
  return {
    ok: false,
    issues: [
      ...(parsed.success ? [] : issuesOf(parsed.error.issues)),
      ...files,
      ...ca.issues,
      ...(spire.ok ? [] : spire.issues),
    ],
  };

  function issuesOf(issues: readonly { path: readonly PropertyKey[]; message: string }[]): InputIssue[] {
    return issues.map((i) => {
      const key = String(i.path[0] ?? '');
      const message = key === 'registryTlsVerify' ? `"${env.K8S_REGISTRY_TLS_VERIFY}" must be true or false` : i.message;
      return { where: where[key] ?? key, message };
    });
  }
}

/**
 * K8S_REGISTRY_CA_FILE, absolute (a relative one is read from the working directory), when it
 * is set and its file holds PEM certificates (registry-ca.ts). A CA with verification off
 * (K8S_REGISTRY_TLS_VERIFY=false) is refused: one of the two settings is a mistake, and which
 * one cannot be guessed.
 */
function registryCaFile(env: NodeJS.ProcessEnv, tlsVerify: boolean | undefined, cwd: string): { file?: string; issues: InputIssue[] } {
  const given = env[REGISTRY_CA_ENV];
  if (given === undefined || given === '') return { issues: [] };
  const absolute = absoluteFile(given, { cwd, env });
  if (!absolute.ok) return { issues: [{ where: REGISTRY_CA_ENV, message: absolute.problem }] };
  const file = absolute.path;
  if (tlsVerify === false) {
    return { issues: [{ where: REGISTRY_CA_ENV, message: `${given} is set while K8S_REGISTRY_TLS_VERIFY=false turns the registry's certificate checks off: unset one of the two` }] };
  }
  const read = readRegistryCa(file);
  if (!read.ok) return { issues: [{ where: REGISTRY_CA_ENV, message: `${given}${given === file ? '' : ` (${file})`} ${read.problem}` }] };
  return { file, issues: [] };
}

/**
 * Recreate stops the old pod inside the rollout's deadline (and the failed one inside the
 * rollback's): a node allowed to take as long to stop as its rollout may take in all would
 * fail its rollout while it still stops cleanly. Checked beside the schema, so that it is
 * reported with every other problem.
 */
function stopWithinRollout(stop: Duration | undefined, rollout: Duration | undefined): string | undefined {
  if (stop === undefined || rollout === undefined || stop.seconds < rollout.seconds) return undefined;
  return `${stop.text} must be shorter than the rollout timeout (${rollout.text}), which includes stopping the previous pod: lower the stop timeout or raise DEPLOY_ROLLOUT_TIMEOUT (--rollout-timeout)`;
}
