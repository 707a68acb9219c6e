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
step "OpenTofu and providers (built once into the cache)"
bash toolchain/build-tools.sh
step "cluster programs (built once into the cache)"
bash toolchain/cluster/build.sh
step "node image (Debian 12 + systemd, built once, cached by content)"
image_lines=$(bash test/cluster/images/build.sh good)
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
