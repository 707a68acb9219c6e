/**
 * The fingerprint of a target (what the verified no-op check compares, and what its record
 * keeps): sha256 digests of what the run is made of, of the graph's blocks by address, and of
 * every object of the target as the cluster holds it, with the state's lineage and serial and
 * the writers of the objects that are not deploy's own.
 */
import type { GraphDocument } from '../../contract/graph/graph-document.js';
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { FIELD_MANAGER, ROLLBACK_FIELD_MANAGER } from '../../contract/field-managers.js';
import { LAST_ROLLOUT_ANNOTATION } from '../../rollout/last-rollout.js';
import { requireKubeAccess } from '../../kube/kubeconfig.js';
import { cacheDir, stateDir } from '../../paths.js';
import { findProviderConfig } from '../../tools/providers.js';
import { stableJson } from '../../contract/stable-json.js';
import { readTargetObjects, type TargetObjects } from '../drift/target-objects.js';
import type { NoopCheckContext } from './check-context.js';

/** Annotations only the cluster and the rollout step write; no plan reads them. */
const CLUSTER_ANNOTATIONS = new Set(['deployment.kubernetes.io/revision', LAST_ROLLOUT_ANNOTATION]);

/**
 * The writers an apply's record accepts: the graph's server-side apply, the rollout step, the
 * provider's typed resources (its client's user agent, HashiCorp/1.0, names its updates) and
 * the controllers that bind claims and keep Deployments.
 */
const OWN_MANAGERS = new Set([FIELD_MANAGER, ROLLBACK_FIELD_MANAGER, 'HashiCorp', 'kube-controller-manager', 'kube-scheduler']);

/** What a record holds, and what the check takes to compare with it. */
export interface TargetFingerprint {
  /** sha256 of what the run is made of but the graph (tofu, providers' settings, kubeconfig, backend). */
  readonly inputs: string;
  /** the graph: sha256 of each resource's and data source's block by address, and of the rest */
  readonly graph: GraphFingerprint;
  readonly lineage: string;
  readonly serial: number;
  /** `Kind/name` -> sha256 of the object's fingerprint (uid and fields). */
  readonly objects: Readonly<Record<string, string>>;
  /**
   * `Kind/name: manager at <time>` of each writer that is not deploy's own. An apply's fingerprint is
   * not recorded with one that the fingerprint before the plan did not have (a write since then).
   */
  readonly foreignWriters: readonly string[];
}

export interface GraphFingerprint {
  readonly rest: string;
  readonly resources: Readonly<Record<string, string>>;
}

/** The fingerprint of the target now, with the objects and state it was taken from, or why it cannot be taken. */
export async function fingerprintTarget(ctx: NoopCheckContext, graph: GraphDocument): Promise<{ readonly fingerprint: TargetFingerprint; readonly seen: TargetObjects } | string> {
  try {
    const seen = await readTargetObjects(ctx);
    if (!seen.complete) return seen.partialReason ?? 'only the Deployments were read';
    return { fingerprint: await takeFingerprint(ctx, seen, graph), seen };
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * The graph's fingerprint: each resource's and data source's block by address, and the rest.
 * A node's blocks are made of that node alone (and the target's settings): another node's
 * image never changes them (stacks/target-stack.ts), so a change of one node scopes its plan.
 */
export function graphFingerprint(doc: GraphDocument): GraphFingerprint {
  const { resource, data, ...rest } = doc;
  const resources: Record<string, string> = {};
  for (const [type, byName] of Object.entries(resource ?? {})) for (const [name, block] of Object.entries(byName)) resources[`${type}.${name}`] = sha256(stableJson(block));
  for (const [type, byName] of Object.entries(data ?? {})) for (const [name, block] of Object.entries(byName)) resources[`data.${type}.${name}`] = sha256(stableJson(block));
  return { rest: sha256(stableJson(rest)), resources };
}

export function takeFingerprint(ctx: NoopCheckContext, seen: TargetObjects, graph: GraphDocument): Promise<TargetFingerprint> {
  return inputsFingerprint(ctx, seen.server).then((inputs) => {
    const fingerprints: Record<string, string> = {};
    const foreign: string[] = [];
    for (const { kind, object } of seen.objects) {
      const key = `${kind}/${object.metadata?.name ?? '?'}`;
      fingerprints[key] = objectFingerprint(object);
      // the RuntimeClass is the cluster operator's, only read by the graph: its writers are theirs
      if (kind === 'RuntimeClass') continue;
      // every writer but the status subresource's (the controllers): `kubectl scale` writes
      // under the scale subresource, and is a writer like any other
      for (const m of object.metadata?.managedFields ?? []) {
        if (m.subresource !== 'status' && m.manager !== undefined && !OWN_MANAGERS.has(m.manager)) foreign.push(`${key}: ${m.manager}${m.subresource ? ` (${m.subresource})` : ''} at ${m.time ?? '?'}`);
      }
    }
    return { inputs, graph: graphFingerprint(graph), lineage: seen.state?.lineage ?? '', serial: seen.state?.serial ?? -1, objects: fingerprints, foreignWriters: foreign };
  });
}

interface KubeObject {
  metadata?: {
    name?: string;
    annotations?: Record<string, string>;
    [k: string]: unknown;
  };
  [k: string]: unknown;
}

/** sha256 of the object without what only the cluster writes; its uid stays in. */
export function objectFingerprint(object: KubeObject): string {
  const { status: _status, ...rest } = object;
  const { resourceVersion: _rv, managedFields: _mf, annotations, ...metadata } = object.metadata ?? {};
  const kept = Object.fromEntries(Object.entries(annotations ?? {}).filter(([k]) => !CLUSTER_ANNOTATIONS.has(k)));
  return sha256(stableJson({ ...rest, metadata: { ...metadata, annotations: kept } }));
}

/**
 * What the run is made of besides the graph: tofu, the providers' settings, the cluster and
 * identity the kubeconfig resolves to, and the backend. The kubeconfig part is
 * src/kube/kubeconfig.ts KubeAccess.identity (taken once per run): the file(s) as the provider merges them, the
 * context of KUBE_CTX, the cluster (server, CA, TLS name, proxy-url), the user (how it
 * authenticates: a token's digest, a client certificate, an exec plugin's command, args and env,
 * never the credential the plugin prints), the impersonation, and the KUBE_*, proxy and
 * TF_CLI_ARGS* variables. So KUBE_CTX naming another context, or HTTPS_PROXY set since, is a
 * full plan; an edit of another context of the same file is not.
 */
async function inputsFingerprint(ctx: NoopCheckContext, server: string): Promise<string> {
  // resolved once for the run (src/kube/kubeconfig.ts KubeAccess.identity), not read again here
  const { identity } = requireKubeAccess(ctx.kube);
  const tofu = await stat(ctx.tools.tofu).then((s) => `${s.size} ${s.mtimeMs}`, () => 'absent');
  const settings = providerSettings(ctx.env);
  const backend = ctx.backend.embedded ? `embedded ${stateDir(ctx.env)}` : ctx.backend.http.address;
  // the registry's CA (K8S_REGISTRY_CA_FILE): its path and its bytes; absent, the fingerprint is as it was without the setting
  const ca = ctx.model.registryCaFile === undefined ? {} : { registryCa: `${ctx.model.registryCaFile} ${sha256(await readFile(ctx.model.registryCaFile))}` };
  return sha256(stableJson({ identity: sha256(identity), server, tofu: `${ctx.tools.tofu} ${tofu}`, tools: ctx.tools.env, settings, backend, ...ca }));
}

/**
 * The providers' settings as they take effect: the CLI configuration tofu gets and the cache
 * directory, not the variables as written. `DEPLOY_CACHE_DIR` unset and set to its default
 * are one setting (`npm run demo` exports it, an operator's shell does not: the first plan
 * after the demo was a full one for that alone).
 */
export function providerSettings(env: Readonly<Record<string, string | undefined>>): string {
  return JSON.stringify({ providers: findProviderConfig(env), cache: cacheDir(env) });
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
