/**
 * The one environment of a target's run: what every tofu command of the target runs in, and so
 * what the graph's steps inside tofu get (the push and SPIRE shell steps, and the rollout step,
 * `deploy rollout`, which reads its values from it: src/contract/rollout-step-env.ts). Rendered
 * from the run's typed values, here and nowhere else: the kubeconfig's file, the state backend
 * (tofu's TF_HTTP_* from its coordinates, the lock's address over the state's), the run's
 * directory and the values of the run (rollout timeout, soak) that the graph never holds.
 * tools/tofu/tofu-process.ts adds only what every tofu command gets (non-interactive, the
 * provider mirror's CLI configuration).
 */
import { durationOf } from '../../config/duration.js';
import { tofuBackendVariables } from '../../config/backend-coordinates.js';
import type { TargetModel } from '../../config/target-model.js';
import { ROLLOUT_TIMEOUT_ENV, SOAK_ENV } from '../../contract/rollout-step-env.js';
import { PROGRESS_ENV, PROGRESS_JSON } from '../../rollout/progress.js';
import type { TargetBackend } from '../../state/embedded.js';

/** What a target's environment is made of. */
export interface TargetEnvironmentInputs {
  /** The operator's environment, whole (tofu-process.ts); the provider mirror is tofu's own. */
  readonly env: NodeJS.ProcessEnv;
  /** The programs the preflight found (DEPLOY_SKOPEO, ...), for the graph's shell steps. */
  readonly toolsEnv: Readonly<Record<string, string>>;
  readonly backend: TargetBackend;
  /** The state address with the run lock's ID (src/state/run-lock.ts RunLock.tofuAddress). */
  readonly lockedAddress: string;
  /** The SPIRE steps' staged key, ssh and kubectl (src/spire/stage-key.ts). */
  readonly spireEnv: Readonly<Record<string, string>>;
  /** The registry's CA staged for skopeo (registry-ca-dir.ts), when the target has one. */
  readonly registryCaEnv: Readonly<Record<string, string>>;
  /** The kubeconfig's file, absolute (src/workflow/kubeconfig-check.ts). */
  readonly kubeconfigFile: string;
  /** $DEPLOY_BIN: how the rollout step calls this program back (deploy-wrapper.ts). */
  readonly deployBin: string;
  /** Where the rollout steps write their reports. */
  readonly runDir: string;
  readonly model: Pick<TargetModel, 'rolloutTimeout' | 'soak'>;
}

/** The environment every tofu command of the target, and every step inside it, runs in. */
export function targetEnvironment(i: TargetEnvironmentInputs): NodeJS.ProcessEnv {
  return {
    ...i.env,
    ...i.toolsEnv,
    // the backend's coordinates as tofu reads them, the state address with the lock's ID last
    ...tofuBackendVariables(i.backend.http),
    TF_HTTP_ADDRESS: i.lockedAddress,
    ...i.spireEnv,
    ...i.registryCaEnv,
    KUBE_CONFIG_PATH: i.kubeconfigFile,
    DEPLOY_BIN: i.deployBin,
    DEPLOY_RUN_DIR: i.runDir,
    // the run's rollout timeout for the rollout steps: a value of the run, not of the graph
    [ROLLOUT_TIMEOUT_ENV]: i.model.rolloutTimeout.text,
    // and its soak (the plan's default resolved, 0s for none), a value of the run as well
    [SOAK_ENV]: (i.model.soak ?? durationOf(0)).text,
    TF_IN_AUTOMATION: '1',
    // the rollout steps write their progress as JSON lines for the view (src/rollout/progress.ts)
    [PROGRESS_ENV]: PROGRESS_JSON,
  };
}
