/**
 * The part of the Kubernetes API objects the rollout reads, parsed at the boundary with zod.
 * Everything is optional that the API may omit (or send as null: events' `eventTime`), so a
 * parse never fails on a field we do not use. Templates stay raw: a rollback writes the
 * previous ReplicaSet's template back byte for byte.
 *
 * Shapes: https://kubernetes.io/docs/reference/kubernetes-api/ (apps/v1 Deployment,
 * ReplicaSet; core/v1 Pod, Event, PersistentVolumeClaim, PersistentVolume).
 */
import { z } from 'zod';
import { CONTAINER_NAME } from '../contract/node-container.js';

const str = z.string().nullish();
const num = z.number().nullish();

export const ObjectMetaSchema = z.object({
  name: z.string(),
  namespace: str,
  uid: z.string(),
  generation: num,
  resourceVersion: str,
  labels: z.record(z.string(), z.string()).nullish(),
  annotations: z.record(z.string(), z.string()).nullish(),
  creationTimestamp: str,
  deletionTimestamp: str,
  ownerReferences: z
    .array(z.object({ kind: z.string(), name: z.string(), uid: z.string(), controller: z.boolean().nullish() }))
    .nullish(),
});

export const ConditionSchema = z.object({
  type: z.string(),
  status: z.string(),
  reason: str,
  message: str,
  lastTransitionTime: str,
  lastUpdateTime: str,
});
export type Condition = z.infer<typeof ConditionSchema>;

const RawTemplateSchema = z.record(z.string(), z.unknown());

/** The few template fields the rollout reads (image of the `node` container, claims). */
export const PodTemplateSchema = z.object({
  metadata: z.object({ labels: z.record(z.string(), z.string()).nullish() }).nullish(),
  spec: z.object({
    containers: z.array(z.object({ name: z.string(), image: str })),
    volumes: z
      .array(z.object({ name: z.string(), persistentVolumeClaim: z.object({ claimName: z.string() }).nullish() }))
      .nullish(),
  }),
});
export type PodTemplate = z.infer<typeof PodTemplateSchema>;

/** The status fields a Deployment and its ReplicaSets share (the counts of their pods, and the conditions). */
const replicaCounts = {
  replicas: num,
  readyReplicas: num,
  availableReplicas: num,
  conditions: z.array(ConditionSchema).nullish(),
};

export const DeploymentSchema = z.object({
  metadata: ObjectMetaSchema,
  spec: z.object({
    replicas: num,
    progressDeadlineSeconds: num,
    template: RawTemplateSchema,
  }),
  status: z
    .object({
      observedGeneration: num,
      ...replicaCounts,
      updatedReplicas: num,
      unavailableReplicas: num,
    })
    .nullish(),
});
export type Deployment = z.infer<typeof DeploymentSchema>;

export const ReplicaSetSchema = z.object({
  metadata: ObjectMetaSchema,
  spec: z.object({ replicas: num, template: RawTemplateSchema.nullish() }),
  status: z.object(replicaCounts).nullish(),
});
export type ReplicaSet = z.infer<typeof ReplicaSetSchema>;

export const ContainerStateSchema = z.object({
  waiting: z.object({ reason: str, message: str }).nullish(),
  running: z.object({ startedAt: str }).nullish(),
  terminated: z
    .object({
      exitCode: z.number(),
      signal: num,
      reason: str,
      message: str,
      startedAt: str,
      finishedAt: str,
    })
    .nullish(),
});
export type ContainerState = z.infer<typeof ContainerStateSchema>;

export const ContainerStatusSchema = z.object({
  name: z.string(),
  ready: z.boolean(),
  started: z.boolean().nullish(),
  restartCount: z.number(),
  image: str,
  imageID: str,
  state: ContainerStateSchema.nullish(),
  lastState: ContainerStateSchema.nullish(),
});
export type ContainerStatus = z.infer<typeof ContainerStatusSchema>;

export const PodSchema = z.object({
  metadata: ObjectMetaSchema,
  spec: z.object({
    nodeName: str,
    containers: z.array(z.object({ name: z.string(), image: str })),
    volumes: z
      .array(z.object({ name: z.string(), persistentVolumeClaim: z.object({ claimName: z.string() }).nullish() }))
      .nullish(),
  }),
  status: z
    .object({
      phase: str,
      reason: str,
      message: str,
      conditions: z.array(ConditionSchema).nullish(),
      containerStatuses: z.array(ContainerStatusSchema).nullish(),
    })
    .nullish(),
});
export type Pod = z.infer<typeof PodSchema>;

/**
 * core/v1 Event. The kubelet still records "legacy" events (count, first/lastTimestamp);
 * the scheduler and controllers use events.k8s.io (eventTime, series), which the core/v1
 * view shows with null timestamps: both are read.
 */
export const EventSchema = z.object({
  metadata: ObjectMetaSchema,
  involvedObject: z.object({ kind: str, name: str, uid: str, namespace: str }),
  reason: str,
  message: str,
  type: str,
  count: num,
  firstTimestamp: str,
  lastTimestamp: str,
  eventTime: str,
  series: z.object({ count: num, lastObservedTime: str }).nullish(),
  source: z.object({ component: str }).nullish(),
  reportingComponent: str,
});
export type KubeEvent = z.infer<typeof EventSchema>;

export const ClaimSchema = z.object({
  metadata: ObjectMetaSchema,
  spec: z.object({ storageClassName: str, volumeName: str }).nullish(),
  status: z.object({ phase: str }).nullish(),
});
export type Claim = z.infer<typeof ClaimSchema>;

/**
 * core/v1 PersistentVolume: what decides the fate of a claim's data (its phase, its reclaim
 * policy, the claim it is or was bound to). `lastPhaseTransitionTime` is set since Kubernetes
 * 1.29 (beta; GA in 1.31).
 */
export const VolumeSchema = z.object({
  metadata: ObjectMetaSchema,
  spec: z
    .object({
      persistentVolumeReclaimPolicy: str,
      storageClassName: str,
      claimRef: z.object({ namespace: str, name: str, uid: str }).nullish(),
    })
    .nullish(),
  status: z.object({ phase: str, message: str, lastPhaseTransitionTime: str }).nullish(),
});
export type Volume = z.infer<typeof VolumeSchema>;

/** When an event last happened, in ms since the epoch (NaN when it carries no time). */
export function eventTimeMs(e: KubeEvent): number {
  const t = e.lastTimestamp ?? e.series?.lastObservedTime ?? e.eventTime ?? e.firstTimestamp ?? e.metadata.creationTimestamp;
  return t ? Date.parse(t) : Number.NaN;
}

/** How often an event happened (legacy `count`, or the new API's `series.count`). */
export function eventCount(e: KubeEvent): number {
  return e.series?.count ?? e.count ?? 1;
}

export function findCondition(conditions: readonly Condition[] | null | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** The image of the `node` container (or the first container) of a raw pod template. */
export function templateImage(template: unknown): string | null {
  const parsed = PodTemplateSchema.safeParse(template);
  if (!parsed.success) return null;
  const containers = parsed.data.spec.containers;
  return (containers.find((c) => c.name === CONTAINER_NAME) ?? containers[0])?.image ?? null;
}
