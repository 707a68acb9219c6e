/** The exit codes (src/errors.ts ExitCode), as --help shows them. */
export const EXIT_CODES_HELP = `
Exit codes:
  0    success (plan: whether or not there are changes; --json says which)
  2    bad input: flags, environment, group plan (nothing was changed); the embedded
       state backend where CI, GITHUB_ACTIONS or FORGEJO_ACTIONS is set, unless DEPLOY_STATE=embedded;
       or apply would take the /var/lib claim of a node that stays (see --allow-volume-replacement)
  3    a tool or the cluster failed (tofu, skopeo, state backend, API server)
  4    rollout failed; the Deployment was set back to the previous image
  5    rollout failed; there was no previous image to set back (the apply made the Deployment: a first deploy, or made again with its claim)
  6    rollout failed and setting the Deployment back failed too
  7    status: a node is not ready, or does not run the image its state holds
       (rolled back, drift, its Deployment gone); nothing was changed
  130  interrupted by Ctrl-C (143: SIGTERM, 129: SIGHUP); a second signal leaves at once,
       naming each lock that may stay held and the command that frees it
  1    unexpected error (a bug: please report it with the log)`;
