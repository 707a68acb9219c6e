/**
 * What the graph's rollout step (stacks/rollout-step.ts) reads from tofu's environment, which
 * src/workflow/target/target-environment.ts renders for each run: values of the run, never words of the
 * graph, so that changing one changes no resource.
 */

/** The run's rollout timeout (`--rollout-timeout` / DEPLOY_ROLLOUT_TIMEOUT, as its text: `5m`). */
export const ROLLOUT_TIMEOUT_ENV = 'DEPLOY_ROLLOUT_TIMEOUT';
/**
 * The run's soak (`--soak` / DEPLOY_SOAK, as its text: `40s`; `0s` for none): how long the step
 * watches a Ready node before it exits 0 (src/rollout/soak.ts).
 */
export const SOAK_ENV = 'DEPLOY_SOAK';
