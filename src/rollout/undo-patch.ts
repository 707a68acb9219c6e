/**
 * `kubectl rollout undo` semantics: the Deployment's pod template becomes the previous
 * ReplicaSet's template, without the `pod-template-hash` label the controller added (the
 * controller then reuses that ReplicaSet and gives it the next revision number).
 * kubectl: staging/src/k8s.io/kubectl/pkg/polymorphichelpers/rollback.go (getDeploymentPatch).
 */
import type { ReplicaSet } from '../kube/api-objects.js';
import type { UndoPatchOp } from '../kube/json-patch.js';
import { TEMPLATE_HASH_LABEL } from './snapshot.js';

export function undoTemplate(previous: ReplicaSet): Record<string, unknown> {
  const template = structuredClone(previous.spec.template ?? {}) as { metadata?: { labels?: Record<string, string> } } & Record<string, unknown>;
  if (template.metadata?.labels) delete template.metadata.labels[TEMPLATE_HASH_LABEL];
  return template;
}

/**
 * A JSON patch that sets the template back, guarded by the Deployment's generation (which
 * only a spec change moves, unlike resourceVersion that every status update moves), so a
 * concurrent apply of a newer template is not overwritten blindly: the server answers 422
 * and the caller re-reads.
 */
export function buildUndoPatch(previous: ReplicaSet, expectedGeneration?: number): UndoPatchOp[] {
  const ops: UndoPatchOp[] = [];
  if (expectedGeneration !== undefined) ops.push({ op: 'test', path: '/metadata/generation', value: expectedGeneration });
  ops.push({ op: 'replace', path: '/spec/template', value: undoTemplate(previous) });
  return ops;
}
