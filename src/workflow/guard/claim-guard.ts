/**
 * The `/var/lib` claims a plan deletes or replaces, and the rule that guards them (law 10 of
 * docs/glossary.md, issue 17): a claim of a node that stays in the target is never deleted or
 * replaced unless `--allow-volume-replacement <node>` names the node. A node that leaves the target, and
 * a destroy, take their claims with them, and say so in a line of their own. A claim already at
 * risk in the cluster (being deleted, gone, Lost, on a Released or Failed volume: claim-risk.ts,
 * law 18) is a loss of its own, refused by the same rule, with how to keep the data. Pure.
 */
import { DeployError, ExitCode } from '../../errors.js';
import { names } from '../../config/names.js';
import type { TargetModel } from '../../config/target-model.js';
import type { PlannedChange } from '../../contract/graph/planned-change.js';
import { nodeResourceOf } from '../../contract/graph/graph-ids.js';
import { describeDangers, describeFate, keepDataSteps, type ClaimRisk } from './claim-risk.js';

export type ClaimLossCause =
  /** the node is no longer in the target (the specification's "node removed" edge case) */
  | 'node-removed'
  /** `deploy destroy`: the whole target goes */
  | 'destroy'
  /** the node stays, and something forces its claim to go */
  | 'forced'
  /** the node stays, and its claim is already at risk in the cluster (claim-risk.ts): the apply makes a new, empty one */
  | 'at-risk';

/** One claim the plan deletes or replaces: the data on `/var/lib` of the node is lost. */
export interface ClaimLoss {
  readonly node: string;
  /** `<node>-state` */
  readonly claim: string;
  readonly address: string;
  readonly change: 'delete' | 'replace';
  readonly cause: ClaimLossCause;
  /** What forces it, in words: each attribute with what sets it, or tofu's reason. */
  readonly forcedBy: readonly string[];
  /** The run may do it: always for `node-removed` and `destroy`; `forced` and `at-risk` only when the flag names the node. */
  readonly allowed: boolean;
  /** `at-risk`: what the cluster holds of the claim and its volume (claim-risk.ts) */
  readonly risk?: ClaimRisk;
}

export interface ClaimLossOptions {
  readonly destroy: boolean;
  /** The nodes named by `--allow-volume-replacement`. */
  readonly allowed: ReadonlySet<string>;
  /** The claims at risk in the cluster, as read before the plan (claim-risk.ts); each is a loss of its own. */
  readonly risks?: readonly ClaimRisk[];
  /** The graph address of each node's claim (for the loss of a claim at risk). */
  readonly claimAddresses?: ReadonlyMap<string, string>;
}

export const ALLOW_FLAG = '--allow-volume-replacement';

export function findClaimLosses(model: TargetModel, planned: readonly PlannedChange[], opts: ClaimLossOptions): ClaimLoss[] {
  const staying = new Set(model.nodes.map((n) => n.name));
  const losses: ClaimLoss[] = [];
  const atRisk = new Set<string>();
  if (!opts.destroy) {
    for (const risk of opts.risks ?? []) {
      if (!staying.has(risk.node)) continue;
      atRisk.add(risk.node);
      losses.push({
        node: risk.node,
        claim: risk.claim,
        address: opts.claimAddresses?.get(risk.node) ?? '',
        change: 'replace',
        cause: 'at-risk',
        forcedBy: [describeDangers(risk)],
        allowed: opts.allowed.has(risk.node),
        risk,
      });
    }
  }
  for (const rc of planned) {
    if (rc.address.startsWith('data.') || !rc.actions.includes('delete')) continue;
    const r = nodeResourceOf(rc.name);
    if (r?.construct !== 'node' || r.part !== 'state') continue;
    // the -replace the run itself asked for, of a claim at risk, is said by that claim's line
    if (atRisk.has(r.node) && rc.actionReason === 'replace_by_request') continue;
    const cause: ClaimLossCause = opts.destroy ? 'destroy' : staying.has(r.node) ? 'forced' : 'node-removed';
    losses.push({
      node: r.node,
      claim: names.stateClaim(r.node),
      address: rc.address,
      change: rc.actions.includes('create') ? 'replace' : 'delete',
      cause,
      forcedBy: cause === 'forced' ? describeForce(rc, model) : [],
      allowed: cause !== 'forced' || opts.allowed.has(r.node),
    });
  }
  return losses.sort((a, b) => a.node.localeCompare(b.node));
}

/** The attributes of a claim that force a new one, and what sets each (stacks/node.ts). */
const ATTRIBUTES: Readonly<Record<string, (m: TargetModel) => string>> = {
  'spec[0].storage_class_name': (m) => `the StorageClass (K8S_STORAGE_CLASS or --storage-class, now ${m.storageClass ? `"${m.storageClass}"` : "the cluster's default"})`,
  'spec[0].resources[0].requests': (m) =>
    `the size (K8S_STATE_SIZE or --state-size, now "${m.stateSize}"): smaller than the claim, and a claim only grows in place`,
  'metadata[0].namespace': (m) => `the namespace (K8S_NAMESPACE or --namespace, now "${m.namespace}")`,
};

/** tofu's action reasons (plan JSON `action_reason`) that say more than the attributes do. */
const REASONS: Readonly<Record<string, string>> = {
  replace_because_tainted: 'the claim is tainted in the state (an earlier create of it failed)',
  replace_by_request: 'a -replace of the claim was requested',
  replace_by_triggers: "the claim's replace_triggered_by",
  delete_because_no_resource_config: 'the graph has no claim of this node at this address any more',
};

function describeForce(rc: PlannedChange, model: TargetModel): string[] {
  const paths = rc.replacePaths ?? [];
  if (paths.length > 0) {
    return paths.map((p) => {
      const known = Object.entries(ATTRIBUTES).find(([prefix]) => p === prefix || p.startsWith(`${prefix}.`) || p.startsWith(`${prefix}[`));
      return known ? `${p}: ${known[1](model)}` : p;
    });
  }
  if (rc.actionReason) return [REASONS[rc.actionReason] ?? `tofu's reason: ${rc.actionReason}`];
  return ['tofu gives no attribute and no reason'];
}

/** The line of a loss in the plan summary ("deletes /var/lib of node X"). */
export function describeClaimLoss(loss: ClaimLoss): string {
  const verb = loss.change === 'replace' ? 'replaces' : 'deletes';
  const head = `${verb} /var/lib of node ${loss.node} (claim ${loss.claim})`;
  switch (loss.cause) {
    case 'node-removed':
      return `${head}: the node left the target`;
    case 'destroy':
      return `${head}: the target is destroyed`;
    case 'forced':
      return `${head}, forced by ${loss.forcedBy.join('; ')}: ${
        loss.allowed ? `allowed by ${ALLOW_FLAG} ${loss.node}, the data on it is lost` : `apply refuses this without ${ALLOW_FLAG} ${loss.node}`
      }`;
    case 'at-risk':
      return `/var/lib of node ${loss.node} is at risk: claim ${loss.claim} is ${loss.forcedBy.join('; ')}; ${loss.risk ? describeFate(loss.risk) : 'what becomes of the data is not known'}: ${
        loss.allowed
          ? `allowed by ${ALLOW_FLAG} ${loss.node}: the apply ${loss.risk?.inCluster === false ? 'makes' : 'replaces it with'} a new, empty claim`
          : `apply refuses every change without ${ALLOW_FLAG} ${loss.node}`
      }`;
  }
}

/**
 * Throws (exit 2) when a claim of a node that stays is at risk in the cluster (claim-risk.ts)
 * and the flag does not name the node: called as soon as the target's objects are read, before
 * the run changes anything (an undone hand edit would replace the pod, and let a claim that is
 * being deleted go). The message names node and claim, what the objects say, what becomes of
 * the data, and the commands that keep it.
 */
export function refuseClaimRisks(model: TargetModel, risks: readonly ClaimRisk[], allowed: ReadonlySet<string>): void {
  const refusal = claimRisksRefusal(model, risks, allowed);
  if (refusal !== undefined) throw refusal;
}

/** refuseClaimRisks's error as a value (undefined: nothing refused), for the planner (target-planner.ts). */
export function claimRisksRefusal(model: TargetModel, risks: readonly ClaimRisk[], allowed: ReadonlySet<string>): DeployError | undefined {
  const staying = new Set(model.nodes.map((n) => n.name));
  const refused = risks.filter((r) => staying.has(r.node) && !allowed.has(r.node));
  if (refused.length === 0) return undefined;
  const lines = refused.flatMap((r) => {
    const steps = keepDataSteps(r, model.namespace);
    return [
      `  - node ${r.node}: claim ${r.claim} is ${describeDangers(r)}; ${describeFate(r)}`,
      steps.length > 0 ? `    to keep its data:` : `    nothing of its data is left in the cluster to keep`,
      ...steps.map((s, i) => `      ${i + 1}. ${s}`),
    ];
  });
  const one = refused.length === 1;
  return new DeployError(
    [
      `apply refused before changing anything: in target ${model.target} (namespace ${model.namespace}) the /var/lib claim of ${one ? 'a node that stays is' : `${refused.length} nodes that stay are`} at risk, and an apply would start ${one ? 'it' : 'them'} on a new, empty claim:`,
      ...lines,
    ].join('\n'),
    ExitCode.usage,
    {
      hint: `keep the data with the steps above, then apply again; to start on an empty /var/lib on purpose, apply with ${refused.map((r) => `${ALLOW_FLAG} ${r.node}`).join(' ')}`,
    },
  );
}

/**
 * Throws (exit 2) when the plan deletes or replaces a claim of a node that stays and the flag
 * does not name it: called after the plan, before the apply changes anything.
 */
export function refuseClaimLosses(model: TargetModel, losses: readonly ClaimLoss[]): void {
  const refusal = claimLossesRefusal(model, losses);
  if (refusal !== undefined) throw refusal;
}

/** refuseClaimLosses's error as a value (undefined: nothing refused), for the planner (target-planner.ts). */
export function claimLossesRefusal(model: TargetModel, losses: readonly ClaimLoss[]): DeployError | undefined {
  const refused = losses.filter((l) => !l.allowed);
  if (refused.length === 0) return undefined;
  const nodes = refused.map((l) => l.node);
  const lines = refused.map((l) => `  - node ${l.node}: claim ${l.claim} would be ${l.change === 'replace' ? 'replaced' : 'deleted'}, forced by ${l.forcedBy.join('; ')}`);
  const one = refused.length === 1;
  return new DeployError(
    [
      `apply refused before changing anything: the plan of target ${model.target} (namespace ${model.namespace}) takes the /var/lib claim of ${one ? 'a node that stays' : `${refused.length} nodes that stay`} in the target, and the data on ${one ? 'it' : 'them'} would be lost:`,
      ...lines,
    ].join('\n'),
    ExitCode.usage,
    {
      hint: `to keep /var/lib, undo what forces it (e.g. set the coordinate named above back) and apply again; to lose it on purpose, apply with ${nodes.map((n) => `${ALLOW_FLAG} ${n}`).join(' ')}`,
    },
  );
}
