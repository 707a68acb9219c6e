/**
 * One node of a target: push, digest (read and recorded), machine ID, claim, service account, Deployment,
 * rollout step. Pure: no clock, no environment, no files.
 */
import { Construct } from 'constructs';
import { DataResource, type ITerraformDependable } from 'cdktf';
import { Resource as NullResource } from '@cdktf/provider-null/lib/resource/index.js';
import { Uuid } from '@cdktf/provider-random/lib/uuid/index.js';
import { DataExternal } from '@cdktf/provider-external/lib/data-external/index.js';
import { Manifest } from '@cdktf/provider-kubernetes/lib/manifest/index.js';
import { PersistentVolumeClaimV1 } from '@cdktf/provider-kubernetes/lib/persistent-volume-claim-v1/index.js';
import { ServiceAccountV1 } from '@cdktf/provider-kubernetes/lib/service-account-v1/index.js';
import { createHash } from 'node:crypto';
import type { NodeModel, TargetModel } from '../src/config/target-model.js';
import { names } from '../src/config/names.js';
import { FIELD_MANAGER } from '../src/contract/field-managers.js';
// the construct IDs are the parts src/workflow/ reads back from resource names
import type { ImagePart, WorkloadPart } from '../src/contract/graph/graph-ids.js';
import { tfEscape } from '../src/contract/shell.js';
import { DIGEST_PROGRAM_NAME, digestScript, pushScript, registryTlsOf, uploadKey } from './image-scripts.js';
import { deploymentManifest } from './pod-template.js';
import { rolloutStepCommand } from './rollout-step.js';
import { withSpireVolumes, type SpireVolumeProps } from './spire-pod.js';

export interface NodePushProps {
  readonly target: TargetModel;
  readonly node: NodeModel;
  /** The RuntimeClass read: no push happens before it succeeded. (Nodes sharing an archive share its upload in the push script, not through the graph: image-scripts.ts.) */
  readonly after: ITerraformDependable[];
}

/**
 * The push of a node's image and the digest the registry gave for it, recorded in the state
 * when the push happened (FR-003: "so that a later change of the tag does not change the pod").
 */
export class NodeImage extends Construct {
  readonly push: NullResource;
  /** `<repository>@sha256:...` as recorded at the push, known at plan time when the push does not change. */
  readonly imageByDigest: string;

  constructor(scope: Construct, id: string, props: NodePushProps) {
    super(scope, id);
    const { target, node } = props;
    this.push = new NullResource(this, 'push' satisfies ImagePart, {
      // replaced when, and only when, the tag reference changes (FR-002); the image build
      // (image.build) runs inside it, so it runs exactly then. The build's argv is not a
      // trigger: the tag names the image, a changed command for the same tag is no new image
      triggers: { ref: node.tagRef },
      dependsOn: props.after,
      provisioners: [{ type: 'local-exec', command: tfEscape(pushScript({ ...node, upload: uploadKey(node.archive, node.tag) }, registryTlsOf(target))) }],
    });
    const digest = new DataExternal(this, 'digest' satisfies ImagePart, {
      // read after the push: at apply time when the push changes (the digest the push wrote),
      // at plan time otherwise (the digest the tag points at now: a moved tag is reported,
      // src/workflow/target/moved-tags.ts; a tag gone is pushed again, src/workflow/target/missing-tags.ts)
      dependsOn: [this.push],
      program: [
        '/bin/sh',
        '-c',
        tfEscape(digestScript(registryTlsOf(target))),
        DIGEST_PROGRAM_NAME,
        node.tagRef,
        node.name,
      ],
    });
    // The digest of the push, held in the state: taken again only when the push is replaced,
    // never because the tag points elsewhere now (ignore_changes). A state from before this
    // record takes the tag's digest of its first plan, the one its Deployment already names.
    // (a bare reference: tofu reads each replace_triggered_by string as an expression)
    const pushed = new DataResource(this, 'pushed-digest' satisfies ImagePart, {
      input: { digest: digest.result.lookup('digest') },
      lifecycle: { ignoreChanges: ['input'], replaceTriggeredBy: [`${this.push.terraformResourceType}.${this.push.friendlyUniqueId}`] },
    });
    this.imageByDigest = `${node.repository}@${pushed.output.lookup('digest')}`;
  }
}

export interface NodeWorkloadProps {
  readonly target: TargetModel;
  readonly node: NodeModel;
  readonly namespace: string;
  readonly imageByDigest: string;
  /**
   * The NetworkPolicy: Deployments come after it (FR-010); and the rollout steps of the nodes
   * this node comes after (`after` in the plan, config/order-rules.ts).
   */
  readonly after: ITerraformDependable[];
  /**
   * Set when the SPIRE coordinates are: the pod gets the SPIRE volumes, and the Deployment
   * comes after the hand-off and the ConfigMap spire-agent (FR-015, FR-016).
   */
  readonly spire?: { readonly after: ITerraformDependable[] } & SpireVolumeProps;
}

/** What runs the node: machine ID, claim, service account, Deployment and rollout step. */
export class NodeWorkload extends Construct {
  readonly deployment: Manifest;
  readonly rollout: NullResource;

  constructor(scope: Construct, id: string, props: NodeWorkloadProps) {
    super(scope, id);
    const { target, node, namespace } = props;
    const machineId = new Uuid(this, 'machine-id' satisfies WorkloadPart, {});
    const claim = new PersistentVolumeClaimV1(this, 'state' satisfies WorkloadPart, {
      metadata: { name: names.stateClaim(node.name), namespace },
      spec: {
        accessModes: ['ReadWriteOnce'],
        ...(target.storageClass ? { storageClassName: target.storageClass } : {}),
        resources: { requests: { storage: target.stateSize } },
      },
      // a claim of a WaitForFirstConsumer class binds only once the pod is scheduled, and an
      // unbindable claim is the rollout step's to report (edge case "no volume")
      waitUntilBound: false,
    });
    const account = new ServiceAccountV1(this, 'account' satisfies WorkloadPart, {
      metadata: { name: names.serviceAccount(node.name), namespace },
      automountServiceAccountToken: false,
    });
    // the literal namespace: kubernetes_manifest needs its metadata known at plan time; the
    // order (namespace, policy, claim first) comes from dependsOn
    const plain = deploymentManifest(target, node, target.namespace, props.imageByDigest, machineId.result);
    const manifest = props.spire !== undefined ? withSpireVolumes(plain, props.spire) : plain;
    // A claim made again (a replacement the operator allowed, src/workflow/guard/claim-guard.ts)
    // has a new UID. The old claim cannot go while a pod uses it (the pvc-protection
    // finalizer), and the pod template does not change, so the Deployment is replaced with
    // it: deleted before the claim, made again after it, and the rollout step waits for its
    // pod. A claim grown in place keeps its UID and replaces nothing.
    // (a bare reference: tofu reads each replace_triggered_by string as an expression, and
    // `fqn` would render as an interpolation)
    const claimMadeAgain = `${claim.terraformResourceType}.${claim.friendlyUniqueId}.metadata[0].uid`;
    this.deployment = new Manifest(this, 'deployment' satisfies WorkloadPart, {
      manifest,
      // server-side apply with our own manager; force so that the rollout step's rollback
      // (another manager) never wedges the next apply, which takes the fields back
      fieldManager: { name: FIELD_MANAGER, forceConflicts: true },
      dependsOn: [...props.after, claim, account, ...(props.spire?.after ?? [])],
      lifecycle: { replaceTriggeredBy: [claimMadeAgain] },
    });
    // Everything of the pod template but the two graph references, hashed at synth time.
    const templateHash = createHash('sha256').update(JSON.stringify(manifest.spec.template, (k, v) => (k === 'image' || k === 'value' ? undefined : v))).digest('hex');
    this.rollout = new NullResource(this, 'rollout' satisfies WorkloadPart, {
      // replaced when the pod template changes: a new image, machine ID or pod spec (FR-006).
      // A failed step is tainted, so the next apply tries the rollout again (US2 AS3).
      triggers: { image: props.imageByDigest, machine_id: machineId.result, template: templateHash.slice(0, 16) },
      dependsOn: [this.deployment],
      provisioners: [{ type: 'local-exec', command: tfEscape(rolloutStepCommand(target.namespace, node.name)) }],
      // and whenever its Deployment is made or changed, whatever the reason: a Deployment
      // deleted by hand, a cluster made again from empty etcd, a change by someone else; every
      // create or update of it is followed by the step and its rollback rules (SC-001)
      lifecycle: { replaceTriggeredBy: [claimMadeAgain, `${this.deployment.terraformResourceType}.${this.deployment.friendlyUniqueId}`] },
    });
  }
}
