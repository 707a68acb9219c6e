/**
 * The last rollout of a node, kept on its Deployment as an annotation, so that `deploy status`
 * can say it from anywhere: the step's full report (report.ts) lives in the run directory of
 * the apply that ran it and goes with it, and a CD runner's home does not outlast its job.
 * The cluster is the one place every later reader shares, and the Deployment is the object
 * the report is about: deleting it (drift) deletes its report too.
 *
 * The annotation is written with a merge patch under the rollout step's field manager, so the
 * graph's server-side apply (manager `deploy`) neither owns nor removes it, and
 * kubernetes_manifest treats metadata.annotations as computed (provider 2.38.0's default
 * computed_fields): a plan after an apply stays without changes.
 */
import { z } from 'zod';
import { ROLLBACK_FIELD_MANAGER } from '../contract/field-managers.js';
import type { KubeApi } from '../kube/kube-api.js';
import { OUTCOMES, type RolloutReport } from './report.js';

export const LAST_ROLLOUT_ANNOTATION = 'deploy.fediversity/last-rollout';

/** What the words of a report may take on the Deployment (annotations share 256 KiB per object). */
const MESSAGE_MAX = 600;

export const LastRolloutSchema = z.object({
  outcome: z.enum(OUTCOMES),
  /** `ready`, `interrupted`, or the failure reason of classify.ts. */
  reason: z.string(),
  message: z.string(),
  /** When the step ended (ISO). */
  at: z.string(),
  /** The image the rollout tried. */
  image: z.string().nullable(),
  /** What a rollback set back (null on a first deploy). */
  previousImage: z.string().nullable(),
  failedUnits: z.array(z.string()),
});
export type LastRollout = z.infer<typeof LastRolloutSchema>;

/** The part of a report that goes on the Deployment. */
export function lastRolloutOf(report: RolloutReport): LastRollout {
  const message = report.message.length > MESSAGE_MAX ? `${report.message.slice(0, MESSAGE_MAX - 3)}...` : report.message;
  return {
    outcome: report.outcome,
    reason: report.reason,
    message,
    at: new Date(Date.parse(report.startedAt) + report.durations.totalMs).toISOString(),
    image: report.image,
    previousImage: report.previousImage,
    failedUnits: report.failedUnits.slice(0, 20),
  };
}

/** The last rollout a Deployment's annotations hold; undefined when none (or not readable). */
export function readLastRollout(annotations: Readonly<Record<string, string>> | null | undefined): LastRollout | undefined {
  const text = annotations?.[LAST_ROLLOUT_ANNOTATION];
  if (!text) return undefined;
  try {
    const parsed = LastRolloutSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Writes the report's summary on the node's Deployment. The report itself is what apply
 * reads; this is for later readers, so a failure is the caller's to log, not to fail on.
 */
export async function recordLastRollout(api: Pick<KubeApi, 'annotateDeployment'>, report: RolloutReport): Promise<void> {
  await api.annotateDeployment(report.namespace, report.node, { [LAST_ROLLOUT_ANNOTATION]: JSON.stringify(lastRolloutOf(report)) }, ROLLBACK_FIELD_MANAGER);
}
