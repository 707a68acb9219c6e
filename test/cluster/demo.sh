#!/usr/bin/env bash
# The main job (`npm run demo`): build what is missing, bring the local cluster and registry
# up, and `deploy apply` the example group examples/demo.json (two nodes, two apps) with the
# local cluster's coordinates and the embedded state backend. Without --target that is the
# target `all`: one pod per node, 2 pods (`--target '*'` would run each node again in its
# app's namespace). Run it twice: the second run changes nothing.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
# shellcheck source=../../toolchain/lib/paths.sh
. toolchain/lib/paths.sh
# shellcheck source=../../toolchain/versions.env
. toolchain/versions.env
STATE_DIR=$DEPLOY_STATE_DIR
T0=$SECONDS
step() { printf '\n[%4ss] == %s\n' "$((SECONDS - T0))" "$*" >&2; }

step "host packages (toolchain/host-packages.list, group @demo; installed once)"
bash toolchain/host-packages.sh @demo
step "built once into the cache, side by side: OpenTofu and providers, cluster programs, node image (Debian 12 + systemd)"
# Side by side: on a new machine these are 20 min of Go builds and a debootstrap, each of
# which leaves a core idle part of the time (module downloads, links, the Debian mirror).
# Each runs in a process group of its own (set -m), so that a stop (Ctrl-C) ends every
# build's whole tree, not only this script: the trap below sends it on.
builds=$(mktemp -d)
set -m
pids=() names=()
start_build() {
  local name=$1
  shift
  "$@" &
  pids+=("$!")
  names+=("$name")
}
start_build "OpenTofu and providers (toolchain/build-tools.sh)" bash toolchain/build-tools.sh
start_build "cluster programs (toolchain/cluster/build.sh)" bash toolchain/cluster/build.sh
# shellcheck disable=SC2016 # $1 is the inner shell's
start_build "node image (test/cluster/images/build.sh good)" bash -c 'bash test/cluster/images/build.sh good >"$1"' _ "$builds/image"
# shellcheck disable=SC2317 # run by the trap
stop_builds() {
  local p
  echo "demo: stopping the builds (what was built stays in the cache)" >&2
  for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || true; done
  wait
  rm -rf "$builds"
  exit 130
}
trap stop_builds INT TERM
failed=()
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || failed+=("${names[$i]}: exit $?")
done
trap - INT TERM
set +m
image_lines=$(cat "$builds/image")
rm -rf "$builds"
if [ "${#failed[@]}" -gt 0 ]; then
  printf 'demo: a build failed; its own lines above say why. Fix that and run the demo again (what was built stays in the cache):\n' >&2
  printf '  - %s\n' "${failed[@]}" >&2
  exit 3
fi
ARCHIVE=$(printf '%s\n' "$image_lines" | sed -n 's/^ARCHIVE=//p')
TAG=$(printf '%s\n' "$image_lines" | sed -n 's/^TAG=//p')
step "local cluster and registry"
bash test/cluster/cluster.sh up
# shellcheck disable=SC1091
. "$STATE_DIR/cluster/cluster.env"

demo="$STATE_DIR/demo"
mkdir -p "$demo/images"
ln -sfn "$ARCHIVE" "$demo/images/node-good.tar"
node -e '
  const fs = require("fs");
  const [src, dst, tag] = process.argv.slice(1);
  const plan = JSON.parse(fs.readFileSync(src, "utf8"));
  for (const n of Object.values(plan.nodes)) n.image.tag = tag;
  fs.writeFileSync(dst, JSON.stringify(plan, null, 2) + "\n");
' examples/demo.json "$demo/group.json" "$TAG"

step "deploy apply --plan $demo/group.json"
set +e
# the embedded state backend on purpose (this machine keeps it), also where CI is set
DEPLOY_STATE=embedded bin/deploy apply --plan "$demo/group.json"
code=$?
set -e
kubectl=$DEPLOY_CACHE_DIR/kubernetes/$KUBERNETES_VERSION/kubectl
[ -x "$kubectl" ] || kubectl=
if [ -n "$kubectl" ]; then
  printf '\nThe nodes of group demo now:\n' >&2
  "$kubectl" --kubeconfig "$KUBE_CONFIG_PATH" get deployments -A -l deploy.fediversity/group=demo \
    -o custom-columns='NAMESPACE:.metadata.namespace,NODE:.metadata.name,READY:.status.readyReplicas,IMAGE:.spec.template.spec.containers[0].image' >&2 || true
fi
cat >&2 <<MSG

[$((SECONDS - T0))s] done (deploy apply exited $code).
  kubeconfig:  $KUBE_CONFIG_PATH
  registry:    $K8S_REGISTRY
Try next (in a shell where you ran: . $STATE_DIR/cluster/cluster.env):
  bin/deploy plan --plan $demo/group.json        # shows no changes
  ${kubectl:-kubectl} --kubeconfig $KUBE_CONFIG_PATH get pods -A -o wide
  bin/deploy destroy --plan $demo/group.json     # removes the namespace; images stay
  npm run cluster:down                                     # stops the cluster, cleans the host
MSG
exit "$code"
