/**
 * Which state backend a plan/apply/destroy may use, decided from the environment before
 * anything else happens. The embedded backend keeps the state under the user's home: on a
 * CI/CD runner that home is often new for each job, and a job that starts from empty state
 * makes the machine IDs again (FR-013), finds the namespace "already there" and leaves
 * nothing for the next destroy. So under automation the embedded backend needs an explicit
 * opt-in, and a shared backend (TF_HTTP_ADDRESS) is what is expected.
 */
import { ConfigError, type InputIssue } from '../errors.js';
import { parseBackendCoordinates, type BackendCoordinates } from './backend-coordinates.js';

/** Set (non-empty) by act, GitHub Actions and Forgejo Actions, and by most other CI systems (CI). */
export const AUTOMATION_VARIABLES = ['CI', 'GITHUB_ACTIONS', 'FORGEJO_ACTIONS'] as const;

/** The one meaningful value of DEPLOY_STATE: the embedded backend is wanted, also under automation. */
export const EMBEDDED_OPT_IN = 'embedded';

/**
 * The problems of the state backend choice: DEPLOY_STATE other than `embedded`, and the
 * embedded backend under automation without DEPLOY_STATE=embedded. DEPLOY_STATE=embedded
 * is a permission, not a choice: with TF_HTTP_ADDRESS set the shared backend is used, because
 * keeping the state where every run finds it is never the unsafe side.
 */
export function stateChoiceIssues(env: NodeJS.ProcessEnv): InputIssue[] {
  const optIn = env.DEPLOY_STATE ?? '';
  if (optIn !== '' && optIn !== EMBEDDED_OPT_IN) {
    return [
      {
        where: 'DEPLOY_STATE',
        message: `"${optIn}" is not a choice: the only value is "${EMBEDDED_OPT_IN}" (use the embedded state backend under CI too); for a shared backend set TF_HTTP_ADDRESS instead, and unset DEPLOY_STATE`,
      },
    ];
  }
  if (env.TF_HTTP_ADDRESS || optIn === EMBEDDED_OPT_IN) return [];
  const automation = AUTOMATION_VARIABLES.filter((v) => env[v]);
  if (automation.length === 0) return [];
  return [
    {
      where: 'TF_HTTP_ADDRESS',
      message:
        `is not set, and ${automation.map((v) => `${v}=${env[v]}`).join(', ')} says this runs under automation, where the embedded state backend ` +
        `keeps the state in a home directory that may not outlive the job: the next job would start from empty state, make new machine IDs and lose track of what this one deployed`,
    },
  ];
}

/** Throws the ConfigError (exit 2) of stateChoiceIssues, naming what to set. */
export function requireStateChoice(env: NodeJS.ProcessEnv): void {
  const issues = stateChoiceIssues(env);
  if (issues.length === 0) return;
  const summary = issues[0]!.where === 'DEPLOY_STATE' ? 'DEPLOY_STATE has a value deploy does not know' : 'refusing the embedded state backend under automation';
  throw new ConfigError(summary, issues, {
    hint: `set TF_HTTP_ADDRESS to a shared state backend (e.g. one \`deploy state serve\`), or, on a runner that keeps its home between jobs, opt in with DEPLOY_STATE=${EMBEDDED_OPT_IN}; nothing was changed`,
  });
}

/** The state backend of plan/apply/destroy: the choice checked (requireStateChoice), then its coordinates parsed. */
export function requireStateBackend(env: NodeJS.ProcessEnv): BackendCoordinates {
  requireStateChoice(env);
  return parseBackendCoordinates(env);
}
