/** What one rollout step is given: its node and time limits, and its dependencies. */
import type { Duration } from '../config/duration.js';
import type { Logger } from '../log.js';
import type { KubeApi } from '../kube/kube-api.js';
import type { Progress } from './progress.js';

export interface RolloutOptions {
  readonly namespace: string;
  readonly node: string;
  /** How long the new revision may take to become ready. */
  readonly timeout: Duration;
  /** How long the previous revision may take to become ready again after the rollback. */
  readonly rollbackTimeout: Duration;
  /**
   * How long the pod must stay `running` once Ready before the rollout counts (soak.ts);
   * absent or 0: it counts at Ready.
   */
  readonly soak?: Duration;
  /** Grace for an unschedulable pod whose claim a provisioner is working on. */
  readonly claimGraceMs?: number;
}

export interface RolloutDeps {
  readonly api: KubeApi;
  readonly signal: AbortSignal;
  readonly progress?: Progress;
  readonly logger?: Logger;
  readonly now?: () => number;
  /**
   * Whether the rollback's one write (its patch) is let finish on the request's own deadline
   * when the signal aborts (true), instead of being dropped unanswered (the default). The
   * client cannot cancel a request it sent (src/deadline.ts: withDeadline drops a late answer),
   * so a dropped patch may still land; the group's rollback (set-back.ts) must know whether it
   * did, to say what the node runs.
   */
  readonly finishWrites?: boolean;
}
