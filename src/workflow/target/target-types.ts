/**
 * What one target's run takes and gives (run-target.ts runs it: target-session.ts, then
 * plan-target.ts, then apply-target.ts). Nothing here runs.
 */
import type { BackendCoordinates } from '../../config/backend-coordinates.js';
import type { RunKubeconfig } from '../../kube/kubeconfig.js';
import type { Logger } from '../../log.js';
import type { TargetModel } from '../../config/target-model.js';
import type { RolloutReport } from '../../rollout/report.js';
import type { GroupSetBack } from './group-rollback.js';
import type { HeldLocks } from '../../state/held-locks.js';
import type { RunTools } from '../../tools/preflight.js';
import type { TargetSummary } from '../summary/plan-summary.js';
import type { RunView } from '../view/run-view.js';

export type Mode = 'plan' | 'apply' | 'destroy';

export interface TargetRunOptions {
  readonly mode: Mode;
  readonly model: TargetModel;
  readonly graphsDir: string;
  /** The programs the run's preflight found (src/tools/preflight.ts). */
  readonly tools: RunTools;
  /** The kubeconfig, checked and resolved once for the run (src/workflow/kubeconfig-check.ts requireKubeconfig). */
  readonly kube: RunKubeconfig;
  /**
   * SSH_PRIVATE_KEY_FILE as given (absolute), for the graph's SPIRE steps: staged to a new path
   * for this run only and handed to tofu in its environment, never to the graph (FR-017).
   */
  readonly sshPrivateKeyFile?: string | undefined;
  /** Nodes whose /var/lib claim this run may delete or replace (--allow-volume-replacement). */
  readonly allowVolumeReplacement?: ReadonlySet<string>;
  readonly env: NodeJS.ProcessEnv;
  /** The state backend's coordinates, parsed before the run (src/config/backend-coordinates.ts). */
  readonly backend: BackendCoordinates;
  /** Who the run is (DEPLOY_RUN_ID, else user@host:pid): the state lock's `Who`. */
  readonly who: string;
  readonly logger: Logger;
  readonly signal: AbortSignal;
  /** Progress lines for people (stderr). */
  readonly progress: (line: string) => void;
  /** The run's view: the rows of each node and target, fed with tofu's events. */
  readonly view: RunView;
  /** Where the run's state lock is recorded while held (a second Ctrl-C names it). */
  readonly held?: HeldLocks | undefined;
}

export interface TargetRunResult {
  readonly summary: TargetSummary;
  /** apply: what each rollout step reported (empty when no pod changed). */
  readonly rollouts: readonly RolloutReport[];
  /** apply with --on-failure group, after a failed rollout: each node set back, and what it runs now. */
  readonly groupRollback?: readonly GroupSetBack[];
  /** apply/destroy: whether tofu applied anything. */
  readonly applied: boolean;
  /** FR-009: plan and apply: the graph's output `node_names`, as planned or as applied. */
  readonly nodeNames?: readonly string[] | undefined;
  /** The exit code this target asks for (0, or a rollout's code). */
  readonly exitCode: number;
  readonly graphDir: string;
}
