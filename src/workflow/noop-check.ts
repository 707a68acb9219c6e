/**
 * The verified no-op check (issue 22): answer "no changes" without a tofu refresh when that is
 * certain, and run the full plan on any doubt.
 *
 * A plan that found no changes, or an apply that ended well, leaves a record on this machine
 * (`<DEPLOY_STATE_DIR>/noop/<state key>.json`): what the run was made of (the graph's bytes,
 * tofu, the providers' settings, the kubeconfig, the backend), the state's lineage and serial,
 * and a print of every object of the target as the cluster held it (the namespace, the
 * RuntimeClass, and every Deployment, claim, service account and NetworkPolicy of the
 * namespace). The next plan is answered without tofu when all of these hold:
 *   - the graph is byte-identical and tofu, its providers, the kubeconfig and the backend are
 *     the same ones;
 *   - the state has the same lineage and serial (nobody applied since, from anywhere);
 *   - one LIST per kind shows the same objects, each with the same uid and the same fields
 *     but for what only the cluster writes (resourceVersion, managedFields, status, the
 *     Deployment's revision and the rollout step's last-rollout annotations): a field changed
 *     by anyone, an object deleted, added or made again, all send the run to the full plan;
 *   - every node's tag is read from the registry (in-process: src/tools/registry-digest.ts),
 *     and none is gone; a tag that points elsewhere than the digest recorded at its push is
 *     reported as the full plan reports it (FR-003, moved-tags.ts).
 * When only some nodes' blocks of the graph differ and all else holds (their own objects may
 * differ: their plan reads them), those nodes are planned alone: a scoped plan (-target of
 * their addresses, run-target.ts). Anything else (no record, a target with SPIRE steps, a
 * kubeconfig only the full client can use, a registry this client cannot read,
 * DEPLOY_FAST_PLAN=off) runs the full plan, and the run says why on one line.
 *
 * Why the record is safe: a plan's record holds the print taken before its refresh, so a
 * change made while tofu ran differs from it next time. An apply's record is taken after the
 * rollout; it is written only when every writer of each object's fields is one of deploy's
 * own (the graph's field managers, the provider's typed resources, the controllers) or was
 * there already, with the same time, before the plan, so that a hand edit in the seconds after
 * the apply cannot be recorded as verified. (managedFields times have a second's precision: a
 * second write by the same foreign writer within the second of its first is not told apart.)
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FIELD_MANAGER, ROLLBACK_FIELD_MANAGER } from '../contract/field-managers.js';
import { LAST_ROLLOUT_ANNOTATION } from '../rollout/last-rollout.js';
import type { TargetModel } from '../config/target-model.js';
import { names } from '../config/names.js';
import { describeGraphAddress, graphPartOf } from '../contract/graph-ids.js';
import { cacheDir, stateDir } from '../paths.js';
import { findProviderConfig } from '../tools/providers.js';
import type { RunTools } from '../tools/preflight.js';
import { shortHandEdit, stableJson, undoes, type HandEdit } from './hand-edits.js';
import { readTargetObjects, type StateView, type TargetObjects } from './target-objects.js';
import { movedFrom, recordedPushDigests, type MovedTag } from './moved-tags.js';

/** DEPLOY_FAST_PLAN=off: every plan is a full plan, and no record is kept. */
export const FAST_PLAN_ENV = 'DEPLOY_FAST_PLAN';

/** 2: the inputs hold the resolved cluster identity (src/kube/kubeconfig.ts), not the kubeconfig's bytes. */
const RECORD_VERSION = 2;

/** Annotations only the cluster and the rollout step write; no plan reads them. */
const CLUSTER_ANNOTATIONS = new Set(['deployment.kubernetes.io/revision', LAST_ROLLOUT_ANNOTATION]);

/**
 * The writers an apply's record accepts: the graph's server-side apply, the rollout step, the
 * provider's typed resources (its client's user agent, HashiCorp/1.0, names its updates) and
 * the controllers that bind claims and keep Deployments.
 */
const OWN_MANAGERS = new Set([FIELD_MANAGER, ROLLBACK_FIELD_MANAGER, 'HashiCorp', 'kube-controller-manager', 'kube-scheduler']);

export interface NoopCheckContext {
  readonly model: TargetModel;
  readonly graphDir: string;
  readonly tools: RunTools;
  readonly kubeconfig: string;
  readonly env: NodeJS.ProcessEnv;
  /** The state's backend: its address and TF_HTTP_* credentials. */
  readonly backend: { readonly address: string; readonly embedded: boolean; readonly env: Readonly<Record<string, string>> };
  readonly signal: AbortSignal;
}

/** What a record holds, and what the check takes to compare with it. */
export interface TargetPrint {
  /** sha256 of what the run is made of but the graph (tofu, providers' settings, kubeconfig, backend). */
  readonly inputs: string;
  /** the graph: sha256 of each resource's and data source's block by address, and of the rest */
  readonly graph: GraphPrint;
  readonly lineage: string;
  readonly serial: number;
  /** `Kind/name` -> sha256 of the object's print (uid and fields). */
  readonly objects: Readonly<Record<string, string>>;
  /**
   * `Kind/name: manager at <time>` of each writer that is not deploy's own. An apply's print is
   * not recorded with one that the print before the plan did not have (a write since then).
   */
  readonly foreignWriters: readonly string[];
}

export interface GraphPrint {
  readonly rest: string;
  readonly resources: Readonly<Record<string, string>>;
}

interface NoopRecord extends Omit<TargetPrint, 'foreignWriters'> {
  readonly version: number;
  readonly recordedAt: string;
  readonly recordedBy: 'plan' | 'apply';
}

export type { StateView };

export type NoopVerdict =
  | {
      readonly verified: true;
      readonly movedTags: ReadonlyMap<string, MovedTag>;
      readonly outputs: Record<string, { value: unknown }>;
      /** for the line that says so */
      readonly words: string;
    }
  | {
      /** only these nodes' parts of the graph changed, and the rest is verified unchanged: plan them alone (-target) */
      readonly verified: 'nodes';
      readonly nodes: readonly string[];
      /** the graph addresses of those nodes, as the graph has them now and as the record had them */
      readonly targets: readonly string[];
      /** the other nodes whose tag moved (their digest data sources are not read by a targeted plan) */
      readonly movedTags: ReadonlyMap<string, MovedTag>;
      readonly outputs: Record<string, { value: unknown }>;
      readonly words: string;
      readonly print: TargetPrint;
    }
  | {
      readonly verified: false;
      /** why the full plan runs, in words */
      readonly reason: string;
      /** the print taken now, before the full plan (for its record), when one could be taken */
      readonly print?: TargetPrint | undefined;
    };

/** Whether this run may use the check and keep records: off by DEPLOY_FAST_PLAN=off, and for targets with SPIRE steps (their reads reach another machine). */
export function fastPlanAllowed(ctx: Pick<NoopCheckContext, 'env' | 'model'>): string | undefined {
  if ((ctx.env[FAST_PLAN_ENV] ?? '').toLowerCase() === 'off') return `${FAST_PLAN_ENV}=off`;
  if (ctx.model.spire !== undefined) return 'the target has SPIRE steps, whose reads the fast path does not make';
  return undefined;
}

function recordFile(ctx: Pick<NoopCheckContext, 'env' | 'model'>): string {
  return join(stateDir(ctx.env), 'noop', `${ctx.model.stateKey}.json`);
}

/**
 * Compares the target now (`seen`: its objects and state as read for this run, or why they could
 * not be read; `graphText`: the run's cdk.tf.json) with its record; never throws (a failure is a reason for the full plan). A hand
 * edit that the apply would undo (hand-edits.ts) is never answered here: the full plan runs.
 */
export async function checkNoop(ctx: NoopCheckContext, seen: TargetObjects | string, handEdits: readonly HandEdit[], graphText: string): Promise<NoopVerdict> {
  let print: TargetPrint | undefined;
  try {
    if (typeof seen === 'string') return { verified: false, reason: `the check could not read everything it needs (${oneLine(seen)})` };
    if (!seen.complete) return { verified: false, reason: `the check could not read everything it needs (${seen.partialReason ?? 'only the Deployments were read'})` };
    const state = seen.state;
    if (state?.untrusted !== undefined) return { verified: false, reason: state.untrusted };
    const record = await readRecord(ctx);
    print = await takePrint(ctx, seen, graphText);
    // (a typed object's hand edit is tofu's to see: its refresh reads every field of the schema)
    const edits = handEdits.filter((e) => e.kind === 'Deployment' && undoes(e));
    if (edits.length > 0) {
      const named = edits.slice(0, 3).map((e) => `${e.node ?? e.kind}: ${shortHandEdit(e)}`);
      return { verified: false, reason: `hand edits in the cluster (${named.join('; ')}${edits.length > 3 ? `; and ${edits.length - 3} more` : ''})`, print };
    }
    if (record === undefined) return { verified: false, reason: 'no record of a verified plan of this state on this machine yet (this plan makes one)', print };
    const since = `since the ${record.recordedBy} of ${record.recordedAt}`;
    const diff = compare(record, print);
    if (diff.kind === 'differs') return { verified: false, reason: `${diff.reason} ${since}`, print };
    if (state === undefined) return { verified: false, reason: 'the state is empty', print };
    const changed = new Set(diff.kind === 'nodes' ? diff.nodes : []);
    const tags = await readTags(ctx, changed);
    if ('reason' in tags) return { verified: false, reason: tags.reason, print };
    const moved = movedFrom(recordedPushDigests(state.resources), tags.digests);
    const objects = `${Object.keys(print.objects).length} objects of the cluster`;
    if (diff.kind === 'nodes') {
      const nodes = [...changed].sort();
      return {
        verified: 'nodes',
        nodes,
        targets: diff.addresses,
        movedTags: moved,
        outputs: state.outputs,
        print,
        words: `only node${nodes.length === 1 ? '' : 's'} ${nodes.join(', ')} changed in the graph: planned alone (-target); the rest of the graph, the state (serial ${state.serial}), the other ${objects} and the other nodes' tags are as the ${record.recordedBy} of ${record.recordedAt} left them (${FAST_PLAN_ENV}=off runs the full plan)`,
      };
    }
    return {
      verified: true,
      movedTags: moved,
      outputs: state.outputs,
      words: `no changes, verified without a refresh: the graph, the state (serial ${state.serial}) and ${objects} are as the ${record.recordedBy} of ${record.recordedAt} left them, and every tag is in the registry (${FAST_PLAN_ENV}=off runs the full plan)`,
    };
  } catch (err) {
    return { verified: false, reason: `the check could not read everything it needs (${oneLine((err as Error).message)})`, print };
  }
}

/**
 * A message on one line, for the plan's "full plan: <why>" line: a ConfigError's summary and its
 * issues (`The kubeconfig cannot be used.\n  - env KUBE_CTX: ...`) as `summary: issue; issue`.
 */
export function oneLine(message: string): string {
  const [first = '', ...rest] = message.split('\n').map((l) => l.trim().replace(/^- /, '')).filter((l) => l !== '');
  return rest.length === 0 ? first : `${first.replace(/\.$/, '')}: ${rest.join('; ')}`;
}

/** The print of the target now, with the objects and state it was taken from, or why it cannot be taken. */
export async function printTarget(ctx: NoopCheckContext, graphText: string): Promise<{ readonly print: TargetPrint; readonly seen: TargetObjects } | string> {
  try {
    const seen = await readTargetObjects(ctx);
    if (!seen.complete) return seen.partialReason ?? 'only the Deployments were read';
    return { print: await takePrint(ctx, seen, graphText), seen };
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * Keeps `print` as the verified state of the target. An apply's print is kept only when each
 * foreign writer of its objects was already there, with the same time, in `before` (the print
 * taken before the plan): a writer that is new or wrote again since may have changed a field
 * after tofu read it (see the module comment); and when the caller found nothing written during
 * the run (`stoppedAlready`: hand edits in the objects as read after the apply, objects the apply
 * did not change that differ from `before`). Returns what stopped it.
 */
export async function recordNoop(ctx: Pick<NoopCheckContext, 'env' | 'model'>, print: TargetPrint, by: 'plan' | 'apply', before?: TargetPrint, stoppedAlready: readonly string[] = []): Promise<readonly string[]> {
  const known = new Set(before?.foreignWriters ?? []);
  const since = [...stoppedAlready, ...(by === 'apply' ? print.foreignWriters.filter((w) => !known.has(w)) : [])];
  if (since.length > 0) {
    await forgetNoop(ctx);
    return since;
  }
  const { foreignWriters: _, ...kept } = print;
  const record: NoopRecord = { version: RECORD_VERSION, recordedAt: new Date().toISOString(), recordedBy: by, ...kept };
  const file = recordFile(ctx);
  await mkdir(join(file, '..'), { recursive: true });
  await writeFile(`${file}.tmp`, JSON.stringify(record, null, 1) + '\n');
  await rename(`${file}.tmp`, file);
  return [];
}

/**
 * The objects whose print differs between `before` (taken before the plan) and `after` (after
 * the apply), among the graph's own (`ofTheGraph`: not the namespace's default service account,
 * which its controller makes with it), but for those the apply changed (`changedByApply` of
 * `Kind/name`): a write by someone else during the run, even one that only removed fields and
 * left no field manager.
 */
export function changedBehindTheApply(before: TargetPrint, after: TargetPrint, changedByApply: (key: string) => boolean, ofTheGraph: (key: string) => boolean): string[] {
  const keys = new Set([...Object.keys(before.objects), ...Object.keys(after.objects)]);
  return [...keys].filter((k) => ofTheGraph(k) && !changedByApply(k) && before.objects[k] !== after.objects[k]).map((k) => `${k}: ${after.objects[k] === undefined ? 'gone' : before.objects[k] === undefined ? 'appeared' : 'changed'} during the run`).sort();
}

/** Drops the record (an apply is about to change the target). */
export async function forgetNoop(ctx: Pick<NoopCheckContext, 'env' | 'model'>): Promise<void> {
  await rm(recordFile(ctx), { force: true });
}

async function readRecord(ctx: NoopCheckContext): Promise<NoopRecord | undefined> {
  const text = await readFile(recordFile(ctx), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const r = JSON.parse(text) as NoopRecord;
    return r.version === RECORD_VERSION ? r : undefined;
  } catch {
    return undefined;
  }
}

export type Difference =
  | { readonly kind: 'same' }
  /** only the graph parts of these nodes (and their objects) differ */
  | { readonly kind: 'nodes'; readonly nodes: readonly string[]; readonly addresses: readonly string[] }
  | { readonly kind: 'differs'; readonly reason: string };

type Comparable = Omit<TargetPrint, 'foreignWriters'>;

/**
 * What differs between a record and a print: nothing; only some nodes' parts of the graph
 * (then their own objects may differ too, as their plan will tell); or anything else, in words.
 */
export function compare(record: Comparable, now: Comparable): Difference {
  if (record.inputs !== now.inputs) return { kind: 'differs', reason: 'tofu, its providers, the cluster or identity the kubeconfig and KUBE_* resolve to, or the backend changed' };
  if (record.graph.rest !== now.graph.rest) return { kind: 'differs', reason: 'the graph changed outside the nodes (providers, outputs, backend)' };
  if (record.lineage !== now.lineage || record.serial !== now.serial) return { kind: 'differs', reason: `the state changed (serial ${record.serial} -> ${now.serial})` };
  // each address, as the graph has it now or as the record had it, with the node it belongs to
  const nodeOf = new Map([...Object.keys(record.graph.resources), ...Object.keys(now.graph.resources)].map((a) => [a, graphPartOf(a)]));
  const nodes = new Set<string>();
  for (const [a, part] of nodeOf) {
    if (record.graph.resources[a] === now.graph.resources[a]) continue;
    if (part?.scope !== 'node') return { kind: 'differs', reason: `the graph changed outside the nodes (${describeGraphAddress(a) ?? a})` };
    nodes.add(part.node);
  }
  const addresses = [...nodeOf].filter(([a, part]) => part?.scope === 'node' && nodes.has(part.node) && !a.startsWith('data.')).map(([a]) => a);
  const owned = new Set([...nodes].flatMap((n) => [`Deployment/${names.deployment(n)}`, `PersistentVolumeClaim/${names.stateClaim(n)}`, `ServiceAccount/${names.serviceAccount(n)}`]));
  for (const [k, h] of Object.entries(record.objects)) {
    if (owned.has(k)) continue;
    const n = now.objects[k];
    if (n === undefined) return { kind: 'differs', reason: `${k} is gone from the cluster` };
    if (n !== h) return { kind: 'differs', reason: `${k} changed in the cluster` };
  }
  for (const k of Object.keys(now.objects)) if (!(k in record.objects) && !owned.has(k)) return { kind: 'differs', reason: `${k} appeared in the cluster` };
  return nodes.size === 0 ? { kind: 'same' } : { kind: 'nodes', nodes: [...nodes].sort(), addresses: addresses.sort() };
}

/**
 * The graph's print: each resource's and data source's block by address, and the rest.
 *
 * A push's `depends_on` on another node's push is left out of its print. It is only an order
 * (nodes sharing an archive wait for the first of them by name to upload it, then mount its
 * layers: stacks/target-stack.ts), it never changes what the node's resources are, and it
 * moves to the next node whenever that first node changes its image: with it, a new image for
 * one node changed the print of every node sharing its old archive, and the plan of one node
 * became a plan of all of them (seen: a 1-node change of a 50-node group planned 49 nodes).
 */
export function graphPrint(text: string): GraphPrint {
  const doc = JSON.parse(text) as { resource?: Record<string, Record<string, unknown>>; data?: Record<string, Record<string, unknown>>; [k: string]: unknown };
  const { resource, data, ...rest } = doc;
  const resources: Record<string, string> = {};
  for (const [type, byName] of Object.entries(resource ?? {})) for (const [name, block] of Object.entries(byName)) resources[`${type}.${name}`] = sha256(stableJson(withoutPushOrder(`${type}.${name}`, block)));
  for (const [type, byName] of Object.entries(data ?? {})) for (const [name, block] of Object.entries(byName)) resources[`data.${type}.${name}`] = sha256(stableJson(block));
  return { rest: sha256(stableJson(rest)), resources };
}

/** A node's push block without its `depends_on` entries that name other nodes' pushes. */
function withoutPushOrder(address: string, block: unknown): unknown {
  const part = graphPartOf(address);
  const deps = block !== null && typeof block === 'object' ? (block as { depends_on?: unknown }).depends_on : undefined;
  if (part?.scope !== 'node' || part.part !== 'push' || !Array.isArray(deps)) return block;
  const isOtherPush = (d: unknown) => {
    const p = typeof d === 'string' ? graphPartOf(d) : undefined;
    return p?.scope === 'node' && p.part === 'push' && p.node !== part.node;
  };
  return { ...(block as object), depends_on: deps.filter((d) => !isOtherPush(d)) };
}

function takePrint(ctx: NoopCheckContext, seen: TargetObjects, graphText: string): Promise<TargetPrint> {
  return inputsPrint(ctx, seen.server).then((inputs) => {
    const prints: Record<string, string> = {};
    const foreign: string[] = [];
    for (const { kind, object } of seen.objects) {
      const key = `${kind}/${object.metadata?.name ?? '?'}`;
      prints[key] = objectPrint(object);
      // the RuntimeClass is the cluster operator's, only read by the graph: its writers are theirs
      if (kind === 'RuntimeClass') continue;
      // every writer but the status subresource's (the controllers): `kubectl scale` writes
      // under the scale subresource, and is a writer like any other
      for (const m of object.metadata?.managedFields ?? []) {
        if (m.subresource !== 'status' && m.manager !== undefined && !OWN_MANAGERS.has(m.manager)) foreign.push(`${key}: ${m.manager}${m.subresource ? ` (${m.subresource})` : ''} at ${m.time ?? '?'}`);
      }
    }
    return { inputs, graph: graphPrint(graphText), lineage: seen.state?.lineage ?? '', serial: seen.state?.serial ?? -1, objects: prints, foreignWriters: foreign };
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
export function objectPrint(object: KubeObject): string {
  const { status: _status, ...rest } = object;
  const { resourceVersion: _rv, managedFields: _mf, annotations, ...metadata } = object.metadata ?? {};
  const kept = Object.fromEntries(Object.entries(annotations ?? {}).filter(([k]) => !CLUSTER_ANNOTATIONS.has(k)));
  return sha256(stableJson({ ...rest, metadata: { ...metadata, annotations: kept } }));
}

/**
 * What the run is made of besides the graph: tofu, the providers' settings, the cluster and
 * identity the kubeconfig resolves to, and the backend. The kubeconfig part is
 * src/kube/kubeconfig.ts clusterIdentityText: the file(s) as the provider merges them, the
 * context of KUBE_CTX, the cluster (server, CA, TLS name, proxy-url), the user (how it
 * authenticates: a token's digest, a client certificate, an exec plugin's command, args and env,
 * never the credential the plugin prints), the impersonation, and the KUBE_*, proxy and
 * TF_CLI_ARGS* variables. So KUBE_CTX naming another context, or HTTPS_PROXY set since, is a
 * full plan; an edit of another context of the same file is not.
 */
async function inputsPrint(ctx: NoopCheckContext, server: string): Promise<string> {
  const { clusterIdentityText } = await import('../kube/kubeconfig.js');
  const identity = clusterIdentityText({ ...ctx.env, KUBE_CONFIG_PATH: ctx.kubeconfig });
  const tofu = await stat(ctx.tools.tofu).then((s) => `${s.size} ${s.mtimeMs}`, () => 'absent');
  const settings = providerSettings(ctx.env);
  const backend = ctx.backend.embedded ? `embedded ${stateDir(ctx.env)}` : ctx.backend.address;
  // the registry's CA (K8S_REGISTRY_CA_FILE): its path and its bytes; absent, the print is as it was without the setting
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

/** The tag of every node but the `skipped` ones (their plan reads them), in-process. */
async function readTags(ctx: NoopCheckContext, skipped: ReadonlySet<string>): Promise<{ digests: Map<string, string> } | { reason: string }> {
  const { readTagDigests } = await import('../tools/registry-digest.js');
  const nodes = ctx.model.nodes.filter((n) => !skipped.has(n.name));
  const read = await readTagDigests(
    nodes.map((n) => n.tagRef),
    { tlsVerify: ctx.model.registryTlsVerify, caFile: ctx.model.registryCaFile, env: ctx.env },
  );
  const digests = new Map<string, string>();
  for (const n of nodes) {
    const d = read.get(n.tagRef);
    if (d?.kind === 'gone') return { reason: `node ${n.name}: its tag ${n.tagRef} is gone from the registry` };
    if (d?.kind !== 'digest') return { reason: `node ${n.name}: the tag ${n.tagRef} could not be read in-process (${d?.why ?? 'no answer'})` };
    digests.set(n.name, d.digest);
  }
  return { digests };
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
