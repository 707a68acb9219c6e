/**
 * A saved plan (`tofu show -json`) -> what happens to each node, in words an operator reads:
 * what will be pushed, replaced, restarted, removed. Pure.
 */
import type { DegradeNote, TargetModel } from '../../config/target-model.js';
import { waitsFor } from '../../config/order-rules.js';
import { describeClaimLoss, findClaimLosses, type ClaimLoss, type ClaimLossOptions } from '../guard/claim-guard.js';
import { describeGraphAddress, nodeResourceOf, resourceNameOf, spirePartOf, type SpirePart } from '../../contract/graph/graph-ids.js';
import type { PlannedChange } from '../../contract/graph/planned-change.js';
import { describeMovedTag, type MovedTag } from '../target/moved-tags.js';
import { describeHandEdit, shortHandEdit, undoes, type HandEdit } from '../drift/hand-edits.js';
import { podFateOf, type PodFate } from './pod-fate.js';

export type Change = 'create' | 'update' | 'replace' | 'delete' | 'none';

export interface NodeSummary {
  node: string;
  /** push of the image: create/replace means a push */
  push: Change;
  deployment: Change;
  claim: Change;
  /** the attributes of its claim that an update changes (names only): what the claim's words say */
  claimFields?: string[];
  /** the service account `node-<node>` (set back when someone changed it) */
  account?: Change;
  /** the rollout step: create/replace means the pod is replaced and waited for */
  rollout: Change;
  /** the node is leaving the target: its Deployment and claim (with /var/lib) go */
  removed: boolean;
  /** the registry lost the node's tag: its image is pushed again (the same archive, the same digest) */
  tagGone: boolean;
  /** the tag points at another digest than the one deploy pushed: reported, not followed (FR-003, moved-tags.ts) */
  tagMoved?: MovedTag;
  /** the Deployment is made again or set back (drift), and the rollout step follows it (SC-001) */
  rolloutForDrift: boolean;
  /**
   * What the apply does to its running pod when its rollout step runs on a Deployment that stays
   * (pod-fate.ts): replaced, with the changes of its pod template as causes, or kept and only
   * checked. Absent when the step does not run, or the Deployment is made or replaced.
   */
  pod?: PodFate;
  /** the last rollout failed and was rolled back: this apply tries it again (US2 AS3) */
  retryAfterRollback: boolean;
  /** the digest record (FR-003) is made without a push: a state from before it (the first plan after upgrading) */
  recordsDigest?: boolean;
  /** fields of the node's objects that another writer set or removed, and what the apply does about each (hand-edits.ts) */
  handEdits?: HandEdit[];
  /** the nodes whose rollout its Deployment waits for (`after` in the plan, config/order-rules.ts) */
  after?: string[];
  /**
   * After an apply whose rollout of another node failed: the failed node this node comes after,
   * so its planned change was not made (its Deployment and pod are as they were).
   */
  heldBackBy?: string;
  /** how it waited for that node: its `after` (directly or through another node), or the waves */
  heldBackThrough?: 'after' | 'wave';
  /** its wave and the number of waves of the target (--max-unavailable), when there are several */
  wave?: { n: number; of: number };
  /** --soak: how long its pod must stay `running` once Ready before its rollout counts (rollout/soak.ts), when its pod changes */
  soakSeconds?: number;
  /** --on-failure group: a failed rollout of another node of this run sets it back too, when its pod changes */
  setBackWithGroup?: boolean;
  /** one line for people */
  words: string;
}

export interface TargetSummary {
  target: string;
  namespace: string;
  stateKey: string;
  changes: boolean;
  nodes: NodeSummary[];
  /** resources outside the nodes: namespace, NetworkPolicy, SPIRE RBAC; `fields`: the attributes an update changes */
  other: { address: string; change: Change; fields?: string[] }[];
  /** what changes for workload identity (the hand-off, the ConfigMap spire-agent), in words */
  spire: string[];
  /** every /var/lib claim the plan deletes or replaces, and whether the run may (claim-guard.ts) */
  claimLosses: ClaimLoss[];
  degrade: readonly DegradeNote[];
  /** answered by the verified no-op check, without a tofu refresh (noop/verdict.ts) */
  verifiedNoop?: boolean;
  /** hand edits of the namespace and the NetworkPolicy (a node's are in its summary) */
  handEdits?: HandEdit[];
  /** --soak of the run, when above 0 */
  soakSeconds?: number;
  /** --on-failure of the run, when `group` */
  onFailure?: 'group';
}

function changeOf(actions: readonly string[]): Change {
  if ((actions.includes('delete') && actions.includes('create')) || actions.includes('replace')) return 'replace';
  if (actions.includes('create')) return 'create';
  if (actions.includes('delete')) return 'delete';
  if (actions.includes('update')) return 'update';
  return 'none';
}

export function summarizePlan(
  model: TargetModel,
  planned: readonly PlannedChange[],
  hasChanges: boolean,
  claims: ClaimLossOptions = { destroy: false, allowed: new Set() },
  /**
   * Nodes whose push is planned again because the registry lost their tag (missing-tags.ts);
   * nodes whose tag points elsewhere than their recorded digest (moved-tags.ts).
   */
  facts: { readonly pushedAgain?: ReadonlySet<string>; readonly movedTags?: ReadonlyMap<string, MovedTag>; readonly handEdits?: readonly HandEdit[] } = {},
): TargetSummary {
  const nodes = new Map<string, NodeSummary>();
  const other: TargetSummary['other'] = [];
  const spire: string[] = [];
  const get = (n: string) => {
    let s = nodes.get(n);
    if (!s) nodes.set(n, (s = { node: n, push: 'none', deployment: 'none', claim: 'none', rollout: 'none', removed: false, tagGone: false, rolloutForDrift: false, retryAfterRollback: false, words: '' }));
    return s;
  };
  for (const n of model.nodes) get(n.name);
  const templates = new Map<string, NonNullable<PlannedChange['templateChanges']>>();
  for (const rc of planned) {
    if (rc.address.startsWith('data.')) continue;
    const change = changeOf(rc.actions);
    // the SPIRE part (stacks/spire-identity.ts) is described in words
    const sp = spirePartOf(rc.name);
    if (sp !== undefined && change !== 'none') {
      // in words, and in `other` as every resource outside the nodes (--json readers)
      spire.push(describeSpire(sp, change, rc.changedKeys ?? [], model));
      other.push({ address: rc.address, change });
      continue;
    }
    const m = nodeResourceOf(rc.name);
    if (!m) {
      if (change !== 'none') other.push({ address: rc.address, change, ...(rc.changedAttributes !== undefined && rc.changedAttributes.length > 0 ? { fields: [...rc.changedAttributes] } : {}) });
      continue;
    }
    const s = get(m.node);
    switch (m.part) {
      case 'push':
        s.push = change;
        break;
      case 'deployment':
        s.deployment = change;
        if (rc.templateChanges !== undefined) templates.set(m.node, rc.templateChanges);
        break;
      case 'state':
        s.claim = change;
        if (rc.changedAttributes !== undefined) s.claimFields = [...rc.changedAttributes];
        break;
      case 'account':
        if (change !== 'none') s.account = change;
        break;
      case 'pushed-digest':
        if (change === 'create') s.recordsDigest = true;
        break;
      case 'rollout':
        s.rollout = change;
        if (rc.actionReason === 'replace_because_tainted' || rc.wasTainted === true) s.retryAfterRollback = true;
        // replaced only because its Deployment is made or changed (replace_triggered_by), with
        // the image, machine ID and pod template as they were: the cluster drifted
        else if (change === 'replace' && rc.actionReason === 'replace_by_triggers' && rc.changedKeys !== undefined && rc.changedKeys.length === 0) s.rolloutForDrift = true;
        break;
    }
  }
  const present = new Set(model.nodes.map((n) => n.name));
  const waveOf = waitsFor(model.nodes, model.waveSize);
  const byName = new Map(model.nodes.map((n) => [n.name, n]));
  for (const s of nodes.values()) {
    // gone from the group, or the whole target is destroyed
    s.removed = s.deployment === 'delete' || s.claim === 'delete' || (!present.has(s.node) && s.push === 'delete');
    // drift is a Deployment made again or set back; a replaced one has its own reason (the claim)
    if (s.deployment !== 'create' && s.deployment !== 'update') s.rolloutForDrift = false;
    s.tagGone = facts.pushedAgain?.has(s.node) === true;
    // with a push the record follows it; said only when it is the whole change
    if (s.push !== 'none' || s.removed) delete s.recordsDigest;
    // only a digest read at plan time says where the tag points now: not one read after a push
    const moved = facts.movedTags?.get(s.node);
    if (moved !== undefined && s.push === 'none' && !s.tagGone && !s.removed) s.tagMoved = moved;
    const edits = (facts.handEdits ?? []).filter((e) => e.node === s.node);
    if (edits.length > 0 && !s.removed) s.handEdits = edits;
    const stepRuns = s.rollout === 'create' || s.rollout === 'replace';
    if (stepRuns && !s.removed && (s.deployment === 'update' || s.deployment === 'none')) {
      const fate = podFateOf(s.deployment === 'update', templates.get(s.node), s.handEdits);
      // after a rollback the cluster runs the previous template while the state holds the one
      // that failed: tofu's update of the Deployment (its refresh saw the rollback) sets the
      // graph's template again, which the template diff (state against graph) cannot see
      s.pod = s.retryAfterRollback && s.deployment === 'update' && fate.kind !== 'replaced' ? { kind: 'replaced', causes: ['its Deployment runs the previous template since the rollback'] } : fate;
    }
    s.words = describe(s, byName.get(s.node)?.tagRef, byName.get(s.node)?.build ? 'build and push' : 'push');
    const after = byName.get(s.node)?.after;
    if (after !== undefined && after.length > 0) {
      s.after = [...after];
      if (touchesPod(s)) s.words += `; only once ${after.join(' and ')} ${after.length === 1 ? 'is' : 'are'} ready (after)`;
    }
    const w = waveOf.get(s.node);
    if (w !== undefined && w.waves > 1) {
      s.wave = { n: w.wave, of: w.waves };
      if (touchesPod(s)) s.words += `; in wave ${w.wave} of ${w.waves} (at most ${model.waveSize} nodes down at once)`;
    }
    if (touchesPod(s)) runWords(s, model, w === undefined || w.wave === w.waves);
  }
  const targetEdits = (facts.handEdits ?? []).filter((e) => e.node === undefined);
  // a hand edit the apply undoes is a change even when tofu has none: an annotation of a
  // Deployment, or any edit of its spec, which the ownership step writes back before tofu plans
  // (undo-hand-edits.ts), so that tofu then plans nothing for it
  const undone = (facts.handEdits ?? []).some((e) => undoes(e) && (e.node === undefined || present.has(e.node)));
  return {
    target: model.target,
    namespace: model.namespace,
    stateKey: model.stateKey,
    changes: hasChanges || undone,
    ...(targetEdits.length > 0 ? { handEdits: targetEdits } : {}),
    ...(model.soak !== undefined ? { soakSeconds: model.soak.seconds } : {}),
    ...(model.onFailure !== undefined ? { onFailure: model.onFailure } : {}),
    nodes: [...nodes.values()].sort((a, b) => a.node.localeCompare(b.node)),
    other,
    spire,
    claimLosses: findClaimLosses(model, planned, claims),
    degrade: model.degrade,
  };
}

/**
 * The run's soak and --on-failure group, said of a node whose pod the apply changes: what its
 * rollout step waits for after Ready, and that a failure elsewhere sets it back. `lastWave`:
 * no wave comes after it (the soak then holds the run's verdict, not a next wave).
 */
function runWords(s: NodeSummary, model: Pick<TargetModel, 'soak' | 'onFailure'>, lastWave: boolean): void {
  if (model.soak !== undefined) {
    s.soakSeconds = model.soak.seconds;
    s.words += `; then watched for ${model.soak.text} (soak: it must stay running) before ${lastWave ? 'its rollout counts' : 'the next wave starts'}`;
  }
  if (model.onFailure === 'group') {
    s.setBackWithGroup = true;
    s.words += '; set back to its previous image if a rollout of this run fails (--on-failure group)';
  }
}

/** The nodes whose image the plan pushes (a push made or replaced). */
export function pushingNodes(summary: Pick<TargetSummary, 'nodes'>): Set<string> {
  return new Set(summary.nodes.filter((n) => n.push === 'create' || n.push === 'replace').map((n) => n.node));
}

/** Whether the apply changes the node's Deployment or waits for its pod: what an order holds back. */
export function touchesPod(s: NodeSummary): boolean {
  return !s.removed && (s.deployment !== 'none' || s.rollout !== 'none');
}

function describeSpire(what: SpirePart, change: Change, keys: readonly string[], model: TargetModel): string {
  const node = model.spire?.node ?? 'the spire node';
  if (what === 'agent-config-map') {
    if (change === 'create') return `give the pods the SPIRE trust bundle of ${node} (ConfigMap spire-agent)`;
    if (change === 'delete') return 'remove the ConfigMap spire-agent (SPIRE is off)';
    const parts = keys.map((k) => (k === 'bundle.crt' ? "the trust bundle changed (the SPIRE server's CA rotated)" : k));
    return `update the ConfigMap spire-agent: ${parts.length > 0 ? parts.join(', ') : 'its contents changed'}; the pods see it in place, without a restart`;
  }
  if (change === 'create') return `hand ${node} the kubeconfig of spire-server and the names of ${model.nodes.length} node${model.nodes.length === 1 ? '' : 's'}, before the Deployments`;
  if (change === 'delete') return 'retire the names of the namespace and remove its kubeconfig on the spire node';
  const why: string[] = [];
  if (keys.includes('spire_machine_id')) why.push(`the machine ID of ${node} changed (it was made again)`);
  if (keys.includes('names')) why.push('the nodes of the target changed');
  if (keys.some((k) => ['spire_node', 'ssh_user', 'host_key', 'ssh_options', 'api_server'].includes(k))) why.push('the way to reach the spire node or the API server changed');
  return `hand off again to ${node} (kubeconfig and names)${why.length > 0 ? `: ${why.join('; ')}` : ''}`;
}

/** `push`: how the push step is said; 'build and push' when it runs image.build first (FR-002). */
function describe(s: NodeSummary, tagRef: string | undefined, push: string): string {
  if (s.removed) return 'removed from the target: its Deployment goes, and its claim with /var/lib (the StorageClass decides whether the volume is deleted)';
  const parts: string[] = [];
  if (s.tagGone && s.deployment !== 'create' && s.deployment !== 'replace' && s.claim === 'none') {
    // the digest is read after the push: the same archive gives the same digest, and then the
    // Deployment and its pod stay as they are (the rollout step finds the pod ready)
    return `${push} ${tagRef ?? 'its image'} again (the registry no longer has it); its pod is replaced only if the image pushed has another digest than the one it runs`;
  }
  if (s.tagGone) parts.push(`${push} ${tagRef ?? 'its image'} again (the registry no longer has it)`);
  else if (s.push === 'create' || s.push === 'replace') parts.push(`${push} ${tagRef ?? 'its image'}`);
  if (s.deployment === 'create') parts.push(s.rolloutForDrift ? 'create its Deployment (it is gone from the cluster)' : 'create its Deployment');
  else if (s.deployment === 'update' && s.push === 'none' && (s.rollout === 'none' || s.rolloutForDrift)) {
    parts.push('set its Deployment back to the graph (someone else changed it, e.g. a rollback)');
  } else if (s.deployment === 'update') parts.push('update its Deployment');
  else if (s.deployment === 'replace') parts.push('replace its Deployment (its pod stops first)');
  if (s.account === 'update') parts.push('set its service account back to the graph (someone else changed it)');
  else if (s.account === 'create' && s.deployment !== 'create') parts.push('create its service account (it is gone from the cluster)');
  else if (s.account === 'replace') parts.push('replace its service account');
  if (s.claim === 'create') parts.push('create its /var/lib claim');
  if (s.claim === 'update') parts.push(claimUpdateWords(s.claimFields));
  if (s.claim === 'replace') parts.push('REPLACE its /var/lib claim (the data on it is lost)');
  if (s.tagMoved !== undefined) parts.push(describeMovedTag(tagRef, s.tagMoved));
  const undo = (s.handEdits ?? []).filter(undoes).length;
  if (undo > 0) parts.unshift(`undo ${undo} hand edit${undo === 1 ? '' : 's'} (${(s.handEdits ?? []).filter(undoes).map(shortHandEdit).join('; ')})`);
  if (s.retryAfterRollback) {
    parts.push('try the rollout again: the last rollout failed, so the state holds the image that failed while the cluster runs the previous one (or none, on a first deploy)');
    if (s.pod !== undefined && s.pod.kind !== 'unknown') parts.push(podWords(s.pod));
  } else if (s.rolloutForDrift) parts.push('wait for its pod');
  else if (s.rollout === 'create' || s.rollout === 'replace') parts.push(s.deployment === 'create' ? 'wait for its first pod' : podWords(s.pod));
  if (parts.length === 0 && s.recordsDigest) {
    return 'record in the state the digest its Deployment runs (FR-003: a state from before that record; nothing changes in the cluster, and its pod is not touched)';
  }
  return parts.length === 0 ? 'no change' : parts.join('; ');
}

/**
 * A claim updated in place, from the attributes that change: a new size grows it; anything else
 * (an annotation, a label someone added) is set back to the graph, never said to be a resize.
 */
function claimUpdateWords(fields: readonly string[] | undefined): string {
  const grow = 'grow its /var/lib claim in place (the StorageClass must allow volume expansion; its provisioner resizes the volume)';
  if (fields === undefined) return `update its /var/lib claim in place`;
  const size = fields.filter((f) => /^spec\[0\]\.resources\b/.test(f));
  const rest = fields.filter((f) => !size.includes(f));
  const words = rest.length > 0 ? [`set its /var/lib claim's ${rest.join(', ')} back to the graph (someone else changed ${rest.length === 1 ? 'it' : 'them'}; the data stays)`] : [];
  return [...(size.length > 0 ? [grow] : []), ...words].join('; ') || 'update its /var/lib claim in place';
}

/** The pod's fate in words (pod-fate.ts), when its rollout step runs on a Deployment that stays. */
function podWords(fate: PodFate | undefined): string {
  if (fate?.kind === 'replaced') return `replace its pod (${fate.causes.join('; ')}) and wait for it to be ready`;
  if (fate?.kind === 'kept') return 'keep its pod (its pod template does not change): the rollout step only checks that it is ready';
  if (fate?.kind === 'waited') return `keep its pod template, and wait for its pod to be ready (${fate.fields.join(', ')} set back: the Deployment controller may start or stop its pod)`;
  return 'replace its pod and wait for it to be ready';
}

export function formatTargetSummary(t: TargetSummary): string {
  // a claim at risk (claim-guard.ts) is no change of tofu's, and no "no changes" either
  const atRisk = t.claimLosses.some((l) => l.cause === 'at-risk');
  const headline = t.changes ? 'changes' : atRisk ? 'no changes planned; a /var/lib claim is at risk (below)' : 'no changes';
  const lines = [`target ${t.target} (namespace ${t.namespace}, state ${t.stateKey}): ${headline}`];
  // the run's rules for its waves, once (each changed node's line says what they do to it)
  if (t.changes && t.soakSeconds !== undefined) lines.push(`  soak: every node whose pod changes must stay running ${t.soakSeconds}s once Ready before its wave counts; a fall is rolled back and holds the later waves`);
  if (t.changes && t.onFailure === 'group') lines.push('  on a failed rollout: every node this run changed is set back too, the last wave first (--on-failure group)');
  for (const n of t.nodes) {
    lines.push(`  ${n.node}: ${n.words}`);
    // each hand edit on a line of its own: the field, who wrote it, what the apply does
    for (const e of n.handEdits ?? []) lines.push(`    hand edit: ${describeHandEdit(e, { objectName: e.kind !== 'Deployment' })}`);
  }
  for (const e of t.handEdits ?? []) lines.push(`  hand edit: ${describeHandEdit(e)}`);
  // each lost /var/lib on a line of its own, so that no one reads past it
  for (const l of t.claimLosses) lines.push(`  ${describeClaimLoss(l)}`);
  for (const w of t.spire) lines.push(`  spire: ${w}`);
  // the SPIRE resources said in words above are not listed again; the rest in the view's words
  // (graph-ids.ts), the address itself only for a resource the contract does not know
  for (const o of t.other) if (spirePartOf(resourceNameOf(o.address)) === undefined) lines.push(`  ${describeGraphAddress(o.address) ?? o.address}: ${o.change}${o.fields !== undefined ? ` (${o.fields.join(', ')})` : ''}`);
  if (t.degrade.length > 0) {
    lines.push('  not honoured by the k8s method:');
    for (const d of t.degrade) lines.push(`    ${d.node}: ${d.message}`);
  }
  return lines.join('\n');
}
