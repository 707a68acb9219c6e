/**
 * The /var/lib claims whose data is at risk now, judged from what the cluster holds (law 18 of
 * docs/glossary.md, issue 50). claim-guard.ts finds the claims a *plan* deletes or replaces;
 * this finds the claims already on their way out, which no plan shows: tofu refreshes a claim
 * that is being deleted as it is, and a claim that is gone as "create". Pure: the objects in,
 * the risks out.
 *
 * The mechanism reads the fields the API gives, not a list of scenarios: for each node that stays
 * in the target, its claim and the PersistentVolume behind it, and
 *   - the claim's `metadata.deletionTimestamp` (being deleted: the `kubernetes.io/pvc-protection`
 *     finalizer keeps it while a pod uses it, so the next apply that stops the pod lets it go),
 *   - the claim missing from the cluster while the state holds it (gone: the apply would make a
 *     new, empty one),
 *   - the claim's `status.phase` `Lost` (its volume is gone),
 *   - the volume's `status.phase` `Released` or `Failed`, or its own deletionTimestamp;
 * and what becomes of the data follows from the volume's `spec.persistentVolumeReclaimPolicy`
 * (https://kubernetes.io/docs/concepts/storage/persistent-volumes/#reclaiming): `Delete` takes
 * the volume with the claim, `Retain` keeps it `Released`, bound to nothing, and a new claim of
 * the same name does not bind to it by itself.
 *
 * A released volume counts only for a claim of this target: the one bound to the claim, or, when
 * the claim is gone while the state holds it, the newest volume whose `claimRef` names it. A
 * volume left from an earlier claim of the same name (a claim made again on purpose, a target
 * destroyed and deployed again) is not this claim's.
 */
import { z } from 'zod';
import { names } from '../../config/names.js';
import type { TargetModel } from '../../config/target-model.js';
import { nodeResourceOf } from '../../contract/graph/graph-ids.js';
import type { TofuResource } from '../../contract/graph/tofu-state.js';
import { ClaimSchema, VolumeSchema, type Claim, type Volume } from '../../kube/api-objects.js';

/** What puts a claim's data at risk, as the objects' fields say. */
export type ClaimDanger =
  /** the claim has a deletionTimestamp */
  | 'deleting'
  /** the state holds the claim, the cluster does not */
  | 'gone'
  /** the claim's phase is Lost: its volume is gone */
  | 'lost'
  /** its volume's phase is Released: the claim it was bound to was deleted */
  | 'volume-released'
  /** its volume's phase is Failed: the reclaim of it failed */
  | 'volume-failed'
  /** its volume has a deletionTimestamp */
  | 'volume-deleting';

/** The volume behind a claim, as far as the fate of the data goes. */
export interface VolumeFacts {
  readonly name: string;
  readonly phase: string | undefined;
  readonly reclaimPolicy: string | undefined;
  /** when it entered its phase (`status.lastPhaseTransitionTime`), when the API says */
  readonly since: string | undefined;
  /** the API's `status.message` (a Failed reclaim's reason) */
  readonly message: string | undefined;
}

export interface ClaimRisk {
  readonly node: string;
  /** `<node>-state` */
  readonly claim: string;
  /** never empty */
  readonly dangers: readonly ClaimDanger[];
  /** when it began, as the objects say: the claim's deletionTimestamp, else the volume's phase transition */
  readonly since: string | undefined;
  /** the claim's volume, or (claim gone) the newest volume that names it; undefined when there is none */
  readonly volume: VolumeFacts | undefined;
  /** the volume the claim names (`spec.volumeName`) when it is not in the cluster */
  readonly missingVolume: string | undefined;
  /** why the volumes could not be read, when they could not (the claim's own fields still count) */
  readonly volumesUnread: string | undefined;
  /** the claim object is in the cluster (an allowed apply replaces it); false: gone, the apply makes it */
  readonly inCluster: boolean;
}

export interface ClaimRiskInput {
  readonly namespace: string;
  /** the nodes of the target (the nodes that stay) */
  readonly nodes: readonly string[];
  /** the claims of the namespace, as the API lists them */
  readonly claims: readonly unknown[];
  /** the cluster's PersistentVolumes as listed, or why they could not be read */
  readonly volumes: readonly unknown[] | string;
  /** the nodes whose claim the target's state holds */
  readonly stateClaims: ReadonlySet<string>;
}

/** The claim's resource type in the graph (stacks/node.ts: PersistentVolumeClaimV1). */
const CLAIM_TYPE = 'kubernetes_persistent_volume_claim_v1';

/**
 * The risks of a target as read for this run (target-objects.ts), or why they cannot be judged
 * (the claims were not read).
 */
export function claimRisksOf(
  model: Pick<TargetModel, 'namespace' | 'nodes'>,
  seen: { readonly claims?: readonly unknown[] | undefined; readonly volumes?: readonly unknown[] | string | undefined; readonly state?: { readonly resources: readonly TofuResource[] } | undefined },
): ClaimRisk[] | string {
  if (seen.claims === undefined) return 'the claims were not read';
  return findClaimRisks({
    namespace: model.namespace,
    nodes: model.nodes.map((n) => n.name),
    claims: seen.claims,
    volumes: seen.volumes ?? 'the volumes were not read',
    stateClaims: stateClaimNodes(seen.state?.resources ?? []),
  });
}

/** The nodes whose claim the state holds (a managed claim resource with an instance). */
export function stateClaimNodes(resources: readonly TofuResource[]): Set<string> {
  const nodes = new Set<string>();
  for (const r of resources) {
    if (r.mode !== 'managed' || r.type !== CLAIM_TYPE || r.instances.length === 0) continue;
    const part = nodeResourceOf(r.name);
    if (part?.construct === 'node' && part.part === 'state') nodes.add(part.node);
  }
  return nodes;
}

const named = z.object({ metadata: z.object({ name: z.string() }) });

/** Every claim of a staying node whose data is at risk, by node. */
export function findClaimRisks(input: ClaimRiskInput): ClaimRisk[] {
  const claims = new Map<string, Claim | undefined>();
  for (const raw of input.claims) {
    const n = named.safeParse(raw);
    if (!n.success) continue;
    // a claim the schema does not take is there all the same: never "gone" (and nothing is judged of it)
    const c = ClaimSchema.safeParse(raw);
    claims.set(n.data.metadata.name, c.success ? c.data : undefined);
  }
  const volumes = typeof input.volumes === 'string' ? [] : input.volumes.flatMap((raw) => {
    const v = VolumeSchema.safeParse(raw);
    return v.success ? [v.data] : [];
  });
  const volumesUnread = typeof input.volumes === 'string' ? input.volumes : undefined;
  const risks: ClaimRisk[] = [];
  for (const node of [...input.nodes].sort()) {
    const name = names.stateClaim(node);
    const present = claims.has(name);
    const claim = claims.get(name);
    if (!present && !input.stateClaims.has(node)) continue; // never made: the apply makes it
    if (present && claim === undefined) continue;
    const volume = claim !== undefined ? volumeOfClaim(claim, volumes) : newestVolumeNaming(input.namespace, name, volumes);
    const dangers: ClaimDanger[] = [];
    if (!present) dangers.push('gone');
    if (claim?.metadata.deletionTimestamp) dangers.push('deleting');
    if (claim?.status?.phase === 'Lost') dangers.push('lost');
    if (volume?.status?.phase === 'Released') dangers.push('volume-released');
    if (volume?.status?.phase === 'Failed') dangers.push('volume-failed');
    if (volume?.metadata.deletionTimestamp) dangers.push('volume-deleting');
    if (dangers.length === 0) continue;
    const facts = volume === undefined ? undefined : volumeFacts(volume);
    const wanted = claim?.spec?.volumeName ?? undefined;
    risks.push({
      node,
      claim: name,
      dangers,
      since: claim?.metadata.deletionTimestamp ?? volume?.metadata.deletionTimestamp ?? facts?.since,
      volume: facts,
      missingVolume: volume === undefined && wanted && volumesUnread === undefined ? wanted : undefined,
      volumesUnread,
      inCluster: present,
    });
  }
  return risks;
}

/** The volume a claim is bound to: the one it names, or the one whose claimRef has its uid. */
function volumeOfClaim(claim: Claim, volumes: readonly Volume[]): Volume | undefined {
  const wanted = claim.spec?.volumeName;
  return volumes.find((v) => (wanted ? v.metadata.name === wanted : false)) ?? volumes.find((v) => v.spec?.claimRef?.uid === claim.metadata.uid);
}

/** A gone claim's volume: the newest one whose claimRef names the claim (an older one is an earlier claim's). */
function newestVolumeNaming(namespace: string, claim: string, volumes: readonly Volume[]): Volume | undefined {
  const naming = volumes.filter((v) => v.spec?.claimRef?.namespace === namespace && v.spec.claimRef.name === claim);
  return naming.sort((a, b) => (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? ''))[0];
}

function volumeFacts(v: Volume): VolumeFacts {
  return {
    name: v.metadata.name,
    phase: v.status?.phase ?? undefined,
    reclaimPolicy: v.spec?.persistentVolumeReclaimPolicy ?? undefined,
    since: v.status?.lastPhaseTransitionTime ?? undefined,
    message: v.status?.message ?? undefined,
  };
}

/** What is wrong, in words: `being deleted since ...; its volume pvc-1 is Released`. */
export function describeDangers(r: ClaimRisk): string {
  const v = r.volume?.name ?? r.missingVolume ?? 'its volume';
  const words = r.dangers.map((d) => {
    switch (d) {
      case 'deleting':
        return `being deleted since ${r.since ?? '?'} (the kubernetes.io/pvc-protection finalizer holds it while its pod runs: the next apply that replaces the pod lets it go)`;
      case 'gone':
        return 'gone from the cluster while the state holds it (the apply would make a new, empty claim and start the node on it)';
      case 'lost':
        return `Lost (its volume ${v} is gone)`;
      case 'volume-released':
        return `its volume ${v} is Released${r.volume?.since ? ` since ${r.volume.since}` : ''} (bound to no claim)`;
      case 'volume-failed':
        return `the reclaim of its volume ${v} Failed${r.volume?.since ? ` at ${r.volume.since}` : ''}${r.volume?.message ? ` (${r.volume.message})` : ''}`;
      case 'volume-deleting':
        return `its volume ${v} is being deleted`;
    }
  });
  return words.join('; ');
}

/** What becomes of the data, from the volume's phase and reclaim policy. */
export function describeFate(r: ClaimRisk): string {
  const v = r.volume;
  if (v === undefined) {
    if (r.volumesUnread !== undefined) return `what becomes of the data is not known: the volumes could not be read (${r.volumesUnread})`;
    if (r.missingVolume !== undefined) return `its volume ${r.missingVolume} is not in the cluster: the data is gone`;
    return r.inCluster ? 'it is bound to no volume' : 'no volume that was bound to it is left in the cluster: the data went with it';
  }
  const policy = v.reclaimPolicy ?? 'unknown';
  const onVolume = `volume ${v.name} (reclaim policy ${policy}${v.phase ? `, ${v.phase}` : ''})`;
  if (v.phase === 'Released' || v.phase === 'Failed' || !r.inCluster) {
    if (policy === 'Retain') return `the data is on ${onVolume}, which no new claim binds to by itself: it stays until bound again by hand or deleted`;
    if (policy === 'Delete') return `the data is on ${onVolume}, which its provisioner deletes`;
    return `the data is on ${onVolume}`;
  }
  if (policy === 'Retain') return `when the claim goes, the data stays on ${onVolume}, Released and bound to no claim; the new claim would be empty`;
  if (policy === 'Delete') return `when the claim goes, ${onVolume} goes with it, and the data on it`;
  if (policy === 'Recycle') return `when the claim goes, ${onVolume} is scrubbed, and the data on it`;
  return `when the claim goes, ${onVolume} decides what becomes of the data`;
}

/**
 * How to keep the data, as commands: the volume set to Retain before the claim goes, the claim's
 * pod stopped so that it goes, then the volume freed and a claim of the same name bound to it.
 */
export function keepDataSteps(r: ClaimRisk, namespace: string): string[] {
  const pv = r.volume?.name ?? r.missingVolume;
  if (pv === undefined) {
    if (r.volumesUnread !== undefined) return [`find the volume with: kubectl get pv -o wide | grep ' ${namespace}/${r.claim} '; then as below`];
    return [];
  }
  const steps: string[] = [];
  if (r.volume?.reclaimPolicy !== 'Retain') steps.push(`kubectl patch pv ${pv} -p '{"spec":{"persistentVolumeReclaimPolicy":"Retain"}}'`);
  if (r.inCluster) steps.push(`kubectl -n ${namespace} scale deployment ${names.deployment(r.node)} --replicas=0   (the claim goes when its pod stops)`);
  steps.push(`kubectl patch pv ${pv} --type json -p '[{"op":"remove","path":"/spec/claimRef"}]'   (the volume becomes Available)`);
  steps.push(`a claim ${r.claim} in namespace ${namespace} with spec.volumeName: ${pv} (its StorageClass and size), then deploy apply again`);
  return steps;
}
