#!/usr/bin/env bash
# One deploy step of the CD workflow (.forgejo/workflows/cd.yml):
#
#   bash .forgejo/scripts/deploy-step.sh plan|apply|unlock
#
# Runs `bin/deploy <verb> --plan "$DEPLOY_PLAN" [--target "$DEPLOY_TARGET"] --json`
# with the coordinates that `. .forgejo/workflows/cd-env.sh k8s` exported, writes the per-node
# result as Markdown to the step log and to $GITHUB_STEP_SUMMARY, and exits with deploy's exit
# code, so a failed rollout (4 rolled back, 5 nothing to roll back, 6 rollback failed) fails
# the job with that code. deploy's own messages (stderr) go to the log as they come.
# `unlock` releases the state locks this run still holds (`deploy state unlock --held-by
# "$DEPLOY_RUN_ID"`): the workflow's `always()` step, for a job cancelled mid-run.
set -uo pipefail

verb=${1:-}
case $verb in
  plan | apply | unlock) ;;
  *)
    echo "usage: deploy-step.sh plan|apply|unlock" >&2
    exit 2
    ;;
esac
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

# Workflow expressions give unset variables as empty strings; to deploy, empty is not unset
# (an empty TF_HTTP_PASSWORD would be sent as a password).
for v in TF_HTTP_ADDRESS TF_HTTP_USERNAME TF_HTTP_PASSWORD DEPLOY_STATE K8S_NAMESPACE K8S_REGISTRY_TLS_VERIFY K8S_REGISTRY_CA_FILE DEPLOY_TARGET; do
  [ -n "${!v:-}" ] || unset "$v"
done

if [ "$verb" = unlock ]; then
  if [ -z "${DEPLOY_RUN_ID:-}" ]; then
    echo "deploy-step.sh unlock: DEPLOY_RUN_ID is not set (the workflow sets it to the run)" >&2
    exit 2
  fi
  exec "$repo/bin/deploy" state unlock --held-by "$DEPLOY_RUN_ID"
fi

args=(--plan "${DEPLOY_PLAN:-group.json}" --json)
[ -n "${DEPLOY_TARGET:-}" ] && args+=(--target "$DEPLOY_TARGET")

out_dir=${RUNNER_TEMP:-${TMPDIR:-/tmp}}
out=$(mktemp "$out_dir/deploy-$verb.XXXXXX.json")
"$repo/bin/deploy" "$verb" "${args[@]}" >"$out"
code=$?

summary=$(node "$here/deploy-summary.mjs" "$verb" "$out" "$code")
printf '%s\n' "$summary"
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  printf '%s\n' "$summary" >>"$GITHUB_STEP_SUMMARY"
fi
rm -f "$out"
if [ "$code" -ne 0 ]; then
  echo "::error::deploy $verb exited with code $code"
fi
exit "$code"
