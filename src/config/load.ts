/**
 * Group plan + coordinates -> one TargetModel per target. Parse, normalise, then the rules
 * of the method; every problem is collected and reported at once (ConfigError, exit 2).
 * Nothing here writes anything.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { ConfigError, type InputIssue } from '../errors.js';
import { archivePath, sharedArchiveProblems } from './build-rules.js';
import { resolveCoordinates, type CoordinateFlags, type Coordinates } from './coordinates.js';
import { findDuplicateKeys } from './json-duplicates.js';
import { labelProblem, names } from './names.js';
import { parseDuration } from './duration.js';
import { identityProblems } from './identity-rules.js';
import { orderProblems, targetOrderProblems } from './order-rules.js';
import { parseMaxUnavailable, waveSize, type MaxUnavailable } from './max-unavailable.js';
import { groupPlanSchema, type GroupPlan } from './plan-schema.js';
import { spireGraphCoordinates } from './spire-coordinates.js';
import { ALL_TARGET, chooseTargets } from './target-choice.js';
import type { DegradeNote, NodeModel, TargetModel } from './target-model.js';

const jsonPath = (path: readonly PropertyKey[]) =>
  path.length === 0 ? '$' : '$' + path.map((p) => (typeof p === 'number' ? `[${p}]` : /^[A-Za-z_][\w]*$/.test(String(p)) ? `.${String(p)}` : `[${JSON.stringify(String(p))}]`)).join('');

/** Reads and validates a group plan file. */
export async function readGroupPlan(file: string): Promise<GroupPlan> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'does not exist' : code === 'EACCES' ? 'is not readable (permission denied)' : code === 'EISDIR' ? 'is a directory' : `cannot be read (${code ?? String(err)})`;
    throw new ConfigError(`cannot read the group plan`, [{ where: file, message: why }], {
      hint: 'pass the group plan with --plan FILE (see examples/group.json)',
      cause: err,
    });
  }
  return parseGroupPlan(text, file);
}

export function parseGroupPlan(text: string, file: string): GroupPlan {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new ConfigError('the group plan is not valid JSON', [{ where: file, message: (err as Error).message }], {
      hint: 'fix the JSON syntax; a plan looks like examples/group.json',
    });
  }
  const issues: InputIssue[] = findDuplicateKeys(text).map((d) => ({
    where: `${file}:${jsonPath(d.path)}`,
    message: `key "${d.key}" appears more than once: each node, and each field, may appear once`,
  }));
  const parsed = groupPlanSchema.safeParse(data);
  if (!parsed.success) {
    for (const i of parsed.error.issues) {
      if (i.code === 'unrecognized_keys') {
        for (const k of i.keys) issues.push({ where: `${file}:${jsonPath([...i.path, k])}`, message: `unknown field "${k}": remove it or check its spelling (see the plan format in docs/group-plan.md)` });
      } else if (i.code === 'invalid_key') {
        issues.push({ where: `${file}:${jsonPath(i.path)}`, message: `invalid node name: ${i.issues.map((x) => x.message).join('; ')}` });
      } else {
        issues.push({ where: `${file}:${jsonPath(i.path)}`, message: i.message });
      }
    }
  }
  if (issues.length > 0 || !parsed.success) {
    throw new ConfigError(`the group plan ${file} has ${issues.length} problem${issues.length === 1 ? '' : 's'}`, issues, {
      hint: 'fix each field named above; nothing was changed',
    });
  }
  return parsed.data;
}

/** Coordinates from flags and environment, or a ConfigError naming every bad variable. */
export function loadCoordinates(flags: CoordinateFlags, env: NodeJS.ProcessEnv, cwd: string): Coordinates {
  const r = resolveCoordinates(flags, env, cwd);
  if (!r.ok) {
    throw new ConfigError('the coordinates of this run are incomplete or invalid', r.issues, {
      hint: 'set the variables (or flags) named above; `deploy plan --help` lists them all',
    });
  }
  return r.value;
}

/** The targets a plan has: `all`, then each app, sorted. */
export function targetsOf(plan: GroupPlan): string[] {
  const apps = new Set<string>();
  for (const n of Object.values(plan.nodes)) for (const a of n.apps) apps.add(a);
  return [ALL_TARGET, ...[...apps].sort()];
}

/**
 * The method's rules over a valid plan and coordinates. `planFile` anchors relative archive
 * paths. `targets`: the --target values; none means `all` only, `*` every target
 * (target-choice.ts).
 */
export function buildTargets(plan: GroupPlan, coords: Coordinates, planFile: string, targets?: readonly string[]): TargetModel[] {
  const issues: InputIssue[] = [];
  const at = (path: readonly PropertyKey[]) => `${planFile}:${jsonPath(path)}`;

  for (const [name, node] of Object.entries(plan.nodes)) {
    if (node.tpm) {
      issues.push({
        where: at(['nodes', name, 'tpm']),
        message: `node "${name}" needs a TPM, and a pod has none (an OpenBao node seals its key to the TPM): run it with another deployment method`,
      });
    }
  }
  const spiffe = plan.roster.spiffeProvider;
  if (spiffe && spiffe.group === plan.group) {
    issues.push({
      where: at(['roster', 'spiffeProvider']),
      message: `group "${plan.group}" names its own node "${spiffe.node}" as spiffe provider; that spire node would be a pod of this same deployment. Use the spire node of a central group (see the specification's Known Deviations)`,
    });
  }
  issues.push(...identityProblems(plan, coords.spire?.node, at));
  issues.push(...sharedArchiveProblems(plan, dirname(resolve(planFile)), at));
  issues.push(...orderProblems(plan, at));
  for (const [i, off] of (plan.submission?.turnsOff ?? []).entries()) {
    if (!(off in plan.nodes)) issues.push({ where: at(['submission', 'turnsOff', i]), message: `node "${off}" is not a node of group "${plan.group}"` });
  }
  const known = targetsOf(plan);
  for (const app of known.slice(1)) {
    const problem = labelProblem(names.appNamespace(coords.namespace, app));
    if (problem) issues.push({ where: `app "${app}"`, message: `its namespace "${names.appNamespace(coords.namespace, app)}" ${problem}: use a shorter app name or K8S_NAMESPACE` });
  }
  const { chosen, issues: targetIssues } = chooseTargets(known, targets, plan.group);
  issues.push(...targetIssues);
  const off = new Set(plan.submission?.turnsOff ?? []);
  const nodesOf = (t: string) =>
    Object.keys(plan.nodes)
      .filter((n) => !off.has(n))
      .filter((n) => t === ALL_TARGET || plan.nodes[n]!.apps.includes(t))
      .sort();
  for (const t of chosen) issues.push(...targetOrderProblems(plan, t, nodesOf(t), at));
  if (issues.length > 0) {
    throw new ConfigError(`group "${plan.group}" cannot be deployed with the k8s method`, issues, {
      hint: 'fix the plan as each line says; nothing was changed',
    });
  }

  const base = dirname(resolve(planFile));
  // flag or environment, else the plan's default (validated by the schema)
  const maxUnavailable = coords.maxUnavailable ?? parseMaxUnavailable(plan.maxUnavailable) ?? undefined;
  const soak = coords.soak ?? (plan.soak !== undefined ? parseDuration(String(plan.soak)) : undefined);
  const onFailure = coords.onFailure ?? plan.onFailure ?? 'node';
  return chosen.map((t) => {
    const namespace = t === ALL_TARGET ? coords.namespace : names.appNamespace(coords.namespace, t);
    const nodeNames = nodesOf(t);
    const nodes: NodeModel[] = nodeNames.map((n) => {
      const img = plan.nodes[n]!.image;
      const repository = names.imageRepository(coords.registry, namespace, n);
      return {
        name: n,
        archive: archivePath(img.archive, base),
        tag: img.tag,
        repository,
        tagRef: `${repository}:${img.tag}`,
        // only when set, so that a node without a build is modelled (and pushed) as before
        ...(img.build !== undefined ? { build: { argv: img.build, dir: base } } : {}),
        // only when set, so that a graph without an order is as it was
        ...(plan.nodes[n]!.after.length > 0 ? { after: [...plan.nodes[n]!.after].sort() } : {}),
      };
    });
    return {
      group: plan.group,
      target: t,
      namespace,
      stateKey: names.stateKey(plan.group, t),
      registry: coords.registry,
      registryTlsVerify: coords.registryTlsVerify,
      // only when set, so that a model (and its graph) without a CA is as it was
      ...(coords.registryCaFile !== undefined ? { registryCaFile: coords.registryCaFile } : {}),
      runtimeClass: coords.runtimeClass,
      storageClass: coords.storageClass,
      stateSize: coords.stateSize,
      rolloutTimeout: coords.rolloutTimeout,
      stopTimeout: coords.stopTimeout,
      probePeriod: coords.probePeriod,
      submissionId: plan.submission?.id,
      nodes,
      degrade: nodeNames.flatMap((n) => degradeNotes(n, plan)),
      // only when it cuts the nodes into waves, so that a graph without waves is as it was
      ...wavesOf(maxUnavailable, nodes.length),
      // values of the run, never of the graph (rollout/soak.ts, group-rollback.ts): only when
      // they differ from the defaults, so that a model without them is as it was
      ...(soak !== undefined && soak.seconds > 0 ? { soak } : {}),
      ...(onFailure === 'group' ? { onFailure } : {}),
      // only when set, so that a model (and its graph) without SPIRE is as it was
      ...(coords.spire !== undefined ? { spire: spireGraphCoordinates(coords.spire) } : {}),
      // only when the admin's, so that a model (and its graph) of deploy's own namespace is as it was
      ...(plan.namespaceManagedBy === 'admin' ? { namespaceManagedBy: 'admin' as const } : {}),
    };
  });
}

/** The target's wave size, only when it cuts its nodes into several waves. */
function wavesOf(max: MaxUnavailable | undefined, nodes: number): { waveSize?: number } {
  const size = max === undefined ? undefined : waveSize(max, nodes);
  return size !== undefined && size < nodes ? { waveSize: size } : {};
}

function degradeNotes(name: string, plan: GroupPlan): DegradeNote[] {
  const node = plan.nodes[name]!;
  const notes: DegradeNote[] = [];
  for (const p of node.persistentPaths) {
    if (p !== '/var/lib' && !p.startsWith('/var/lib/')) {
      notes.push({
        node: name,
        kind: 'persistent-path-outside-var-lib',
        message: `${p} is not under /var/lib: only /var/lib is on the node's volume, so ${p} is lost at every pod replacement`,
      });
    }
  }
  const fw = node.firewall;
  const sources = [...(fw?.internalSources ?? []), ...(fw?.adminSources ?? [])];
  if (sources.length > 0) {
    notes.push({
      node: name,
      kind: 'host-firewall-sources',
      message: `host firewall sources (${sources.join(', ')}) do not apply on the pod network: the NetworkPolicy admits every pod of the namespace, on every port`,
    });
  }
  return notes;
}
