/**
 * The verified no-op check (issue 22): answer "no changes" without a tofu refresh when that is
 * certain, and run the full plan on any doubt.
 *
 * A plan that found no changes, or an apply that ended well, leaves a record on this machine
 * (`<DEPLOY_STATE_DIR>/noop/<state key>.json`): what the run was made of (the graph's bytes,
 * tofu, the providers' settings, the kubeconfig, the backend), the state's lineage and serial,
 * and a fingerprint of every object of the target as the cluster held it (the namespace, the
 * RuntimeClass, and every Deployment, claim, service account and NetworkPolicy of the
 * namespace). The next plan is answered without tofu when all of these hold:
 *   - the graph is byte-identical and tofu, its providers, the kubeconfig and the backend are
 *     the same ones;
 *   - the state has the same lineage and serial (nobody applied since, from anywhere);
 *   - one LIST per kind shows the same objects, each with the same uid and the same fields
 *     but for what only the cluster writes (resourceVersion, managedFields, status, the
 *     Deployment's revision and the rollout step's last-rollout annotations): a field changed
 *     by anyone, an object deleted, added or made again, all send the run to the full plan;
 *   - no /var/lib claim of a node is at risk (being deleted, gone, Lost, on a Released or
 *     Failed volume: claim-risk.ts), which no fingerprint shows (status is left out of it);
 *   - every node's tag is read from the registry (in-process: src/tools/registry-digest.ts),
 *     and none is gone; a tag that points elsewhere than the digest recorded at its push is
 *     reported as the full plan reports it (FR-003, moved-tags.ts).
 * When only some nodes' blocks of the graph differ and all else holds (their own objects may
 * differ: their plan reads them), those nodes are planned alone: a scoped plan (-target of
 * their addresses, plan-target.ts), without tofu's refresh when their own objects are as
 * recorded too (the refresh would find what the state holds; measured: it also made tofu
 * compare every resource of the state for drift, 3 s of a 1-node apply at 50 nodes) and the
 * kubernetes provider is the patched build that plans a changed manifest's computed fields
 * (annotations, labels) as unknown: without it, an annotation another writer set since the
 * state was written (the rollout step's last-rollout, the controller's revision) fails the
 * apply "Provider produced inconsistent result". Anything else (no record, a target with SPIRE steps, a
 * kubeconfig only the full client can use, a registry this client cannot read,
 * DEPLOY_FAST_PLAN=off) runs the full plan, and the run says why on one line.
 *
 * Why the record is safe: record.ts. The parts: fingerprint.ts (what is compared), compare.ts
 * (what differs), record.ts (what is kept), and this verdict.
 */
import { whyNoComputedFieldsPatch } from '../../tools/providers.js';
import { readTagDigests, type TagDigest } from '../../tools/registry-digest.js';
import { claimRisksOf } from '../guard/claim-risk.js';
import { shortHandEdit, undoes, type HandEdit } from '../drift/hand-edits.js';
import type { TargetObjects } from '../drift/target-objects.js';
import { movedFrom, recordedPushDigests, type MovedTag } from '../target/moved-tags.js';
import type { NoopCheckContext } from './check-context.js';
import { compare } from './compare.js';
import { takeFingerprint, type TargetFingerprint } from './fingerprint.js';
import type { GraphDocument } from '../../contract/graph/graph-document.js';
import { FAST_PLAN_ENV } from './fast-plan-switch.js';
import { readRecord } from './record.js';

export type NoopVerdict =
  | {
      /** no changes, verified without tofu */
      readonly kind: 'verified';
      readonly movedTags: ReadonlyMap<string, MovedTag>;
      readonly outputs: Record<string, { value: unknown }>;
      /** the line that says so */
      readonly sentence: string;
    }
  | {
      /** only these nodes' parts of the graph changed, and the rest is verified unchanged: plan them alone (-target) */
      readonly kind: 'scoped';
      readonly nodes: readonly string[];
      /** the graph addresses of those nodes, as the graph has them now and as the record had them */
      readonly targets: readonly string[];
      /** the other nodes whose tag moved (their digest data sources are not read by a targeted plan) */
      readonly movedTags: ReadonlyMap<string, MovedTag>;
      readonly outputs: Record<string, { value: unknown }>;
      /**
       * false: those nodes' own objects are in the cluster as the record has them, so tofu's
       * refresh of them would find what the state holds: their plan skips it (-refresh=false;
       * the data sources, their tags' digests, are read all the same). true: one of them
       * differs, is gone or was made again: their plan reads them.
       */
      readonly refresh: boolean;
      /** the line that says so */
      readonly sentence: string;
      readonly fingerprint: TargetFingerprint;
    }
  | {
      readonly kind: 'full';
      /** why the full plan runs, in words */
      readonly reason: string;
      /** the fingerprint taken now, before the full plan (for its record), when one could be taken */
      readonly fingerprint?: TargetFingerprint | undefined;
    };

/**
 * Compares the target now (`seen`: its objects and state as read for this run, or why they could
 * not be read; `graph`: the run's cdk.tf.json as written, parsed once) with its record; never throws (a failure is a reason for the full plan). A hand
 * edit that the apply would undo (hand-edits.ts) is never answered here: the full plan runs.
 */
export async function checkNoop(ctx: NoopCheckContext, seen: TargetObjects | string, handEdits: readonly HandEdit[], graph: GraphDocument): Promise<NoopVerdict> {
  let fingerprint: TargetFingerprint | undefined;
  try {
    if (typeof seen === 'string') return { kind: 'full', reason: `the check could not read everything it needs (${oneLine(seen)})` };
    if (!seen.complete) return { kind: 'full', reason: `the check could not read everything it needs (${seen.partialReason ?? 'only the Deployments were read'})` };
    const state = seen.state;
    if (state?.untrusted !== undefined) return { kind: 'full', reason: state.untrusted };
    // law 18: never an answer over a /var/lib claim at risk (claim-risk.ts): a claim's phase and
    // its volume are not in the fingerprint, so the record cannot see them; the full plan names it (and keeps no record while it is so)
    const risks = claimRisksOf(ctx.model, seen);
    if (typeof risks === 'string') return { kind: 'full', reason: `the check could not judge the /var/lib claims (${risks})` };
    if (risks.length > 0) return { kind: 'full', reason: `/var/lib claim${risks.length === 1 ? '' : 's'} at risk in the cluster (${risks.map((r) => `${r.claim}: ${r.dangers.join(', ')}`).join('; ')})` };
    const record = await readRecord(ctx);
    fingerprint = await takeFingerprint(ctx, seen, graph);
    // (a typed object's hand edit is tofu's to see: its refresh reads every field of the schema)
    const edits = handEdits.filter((e) => e.kind === 'Deployment' && undoes(e));
    if (edits.length > 0) {
      const named = edits.slice(0, 3).map((e) => `${e.node ?? e.kind}: ${shortHandEdit(e)}`);
      return { kind: 'full', reason: `hand edits in the cluster (${named.join('; ')}${edits.length > 3 ? `; and ${edits.length - 3} more` : ''})`, fingerprint };
    }
    if (record === undefined) return { kind: 'full', reason: 'no record of a verified plan of this state on this machine yet (this plan makes one)', fingerprint };
    const since = `since the ${record.recordedBy} of ${record.recordedAt}`;
    const diff = compare(record, fingerprint);
    if (diff.kind === 'differs') return { kind: 'full', reason: `${diff.reason} ${since}`, fingerprint };
    if (state === undefined) return { kind: 'full', reason: 'the state is empty', fingerprint };
    const changed = new Set(diff.kind === 'nodes' ? diff.nodes : []);
    const tags = await readTags(ctx, changed, seen.tags);
    if ('reason' in tags) return { kind: 'full', reason: tags.reason, fingerprint };
    const moved = movedFrom(recordedPushDigests(state.resources), tags.digests);
    const objects = `${Object.keys(fingerprint.objects).length} objects of the cluster`;
    if (diff.kind === 'nodes') {
      const nodes = [...changed].sort();
      // without the provider's computed-fields patch, a plan without a refresh can fail its
      // apply on an annotation another writer set since (providers.ts COMPUTED_FIELDS_PATCH)
      const skipRefresh = diff.ownObjectsAsRecorded && whyNoComputedFieldsPatch(ctx.env) === undefined;
      return {
        kind: 'scoped',
        nodes,
        targets: diff.addresses,
        movedTags: moved,
        outputs: state.outputs,
        refresh: !skipRefresh,
        fingerprint,
        sentence: `only node${nodes.length === 1 ? '' : 's'} ${nodes.join(', ')} changed in the graph: planned alone (-target)${skipRefresh ? ` without a refresh (${nodes.length === 1 ? 'its' : 'their'} objects are as recorded)` : ''}; the rest of the graph, the state (serial ${state.serial}), the other ${objects} and the other nodes' tags are as the ${record.recordedBy} of ${record.recordedAt} left them (${FAST_PLAN_ENV}=off runs the full plan)`,
      };
    }
    return {
      kind: 'verified',
      movedTags: moved,
      outputs: state.outputs,
      sentence: `no changes, verified without a refresh: the graph, the state (serial ${state.serial}) and ${objects} are as the ${record.recordedBy} of ${record.recordedAt} left them, and every tag is in the registry (${FAST_PLAN_ENV}=off runs the full plan)`,
    };
  } catch (err) {
    return { kind: 'full', reason: `the check could not read everything it needs (${oneLine((err as Error).message)})`, fingerprint };
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

/** The tag of every node but the `skipped` ones (their plan reads them), in-process, or as read with the target's objects. */
async function readTags(ctx: NoopCheckContext, skipped: ReadonlySet<string>, readBefore: ReadonlyMap<string, TagDigest> | undefined): Promise<{ digests: Map<string, string> } | { reason: string }> {
  const nodes = ctx.model.nodes.filter((n) => !skipped.has(n.name));
  const read =
    readBefore ??
    (await readTagDigests(
      nodes.map((n) => n.tagRef),
      { tlsVerify: ctx.model.registryTlsVerify, caFile: ctx.model.registryCaFile, env: ctx.env },
    ));
  const digests = new Map<string, string>();
  for (const n of nodes) {
    const d = read.get(n.tagRef);
    if (d?.kind === 'gone') return { reason: `node ${n.name}: its tag ${n.tagRef} is gone from the registry` };
    if (d?.kind !== 'digest') return { reason: `node ${n.name}: the tag ${n.tagRef} could not be read in-process (${d?.why ?? 'no answer'})` };
    digests.set(n.name, d.digest);
  }
  return { digests };
}
