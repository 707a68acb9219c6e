/** A node's state in one sentence, for the messages of an interrupted rollout or rollback. */
import { templateImage } from '../kube/api-objects.js';
import { describePod } from './evidence.js';
import { currentPod, currentReplicaSet, revisionOf, type RolloutSnapshot } from './snapshot.js';

export /** "The Deployment is at revision 3 (image ...); pod x: waiting: ContainerCreating." */
function describeNodeState(snap: RolloutSnapshot): string {
  const rs = currentReplicaSet(snap);
  if (!rs) return 'The Deployment has no ReplicaSet yet.';
  const pod = currentPod(snap, rs);
  const img = templateImage(rs.spec.template);
  const podText = pod ? (() => {
    const s = describePod(snap, pod);
    return `pod ${s.pod}: ${s.phase ?? '?'}, container ${s.container ?? 'not created'}${s.ready ? ', ready' : ', not ready'}`;
  })() : 'no pod yet';
  return `The Deployment is at revision ${revisionOf(rs)} (${img ?? 'unknown image'}); ${podText}.`;
}
