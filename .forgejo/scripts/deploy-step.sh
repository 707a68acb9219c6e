#!/usr/bin/env bash
# One deploy step of the CD workflow (.forgejo/workflows/cd.yml):
#
#   bash .forgejo/scripts/deploy-step.sh plan|apply
#
# Runs `bin/deploy <verb> --plan "$DEPLOY_PLAN" [--target "$DEPLOY_TARGET"] --json`
# with the coordinates that `. .forgejo/workflows/cd-env.sh k8s` exported, writes the per-node
# result as Markdown to the step log and to $GITHUB_STEP_SUMMARY, and exits with deploy's exit
# code, so a failed rollout (4 rolled back, 5 nothing to roll back, 6 rollback failed) fails
# the job with that code. deploy's own messages (stderr) go to the log as they come.
set -uo pipefail

verb=${1:-}
case $verb in
  plan | apply) ;;
  *)
    echo "usage: deploy-step.sh plan|apply" >&2
    exit 2
    ;;
esac
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

# Workflow expressions give unset variables as empty strings; to deploy, empty is not unset
# (an empty TF_HTTP_PASSWORD would be sent as a password).
for v in TF_HTTP_ADDRESS TF_HTTP_USERNAME TF_HTTP_PASSWORD K8S_NAMESPACE K8S_REGISTRY_TLS_VERIFY DEPLOY_TARGET; do
  [ -n "${!v:-}" ] || unset "$v"
done

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
