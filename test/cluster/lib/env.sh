# shellcheck shell=bash
# Where the local cluster keeps everything, and its fixed choices (sourced by cluster.sh).
#
# Environment (all optional):
#   DEPLOY_STATE_DIR   per-user state root (toolchain/lib/paths.sh); the cluster lives in
#                      $DEPLOY_STATE_DIR/cluster
#   DEPLOY_CACHE_DIR   built programs (toolchain/lib/cache.sh), at the versions of
#                      toolchain/versions.env
#   K8S_CLUSTER_NODE_IP      node address, a private /32 on a port-less bridge (default 10.255.254.1)
#   K8S_CLUSTER_POD_CIDR     cluster pod CIDR (default 10.244.0.0/16; the node gets its first /24)
#   K8S_CLUSTER_SERVICE_CIDR service CIDR (default 10.96.0.0/16)
#   K8S_CLUSTER_API_PORT     API server port on the node address (default 6443)

CLUSTER_REPO=$(cd "$CLUSTER_HERE/../.." && pwd)
# shellcheck source=../../../toolchain/versions.env
. "$CLUSTER_REPO/toolchain/versions.env"
# shellcheck source=../../../toolchain/lib/cache.sh
. "$CLUSTER_REPO/toolchain/lib/cache.sh"

S="$DEPLOY_STATE_DIR/cluster"

# Programs (built by toolchain/cluster/build.sh, `npm run cluster:build`).
K8S_BIN="$DEPLOY_CACHE_DIR/kubernetes/$KUBERNETES_VERSION"
ETCD_BIN="$DEPLOY_CACHE_DIR/etcd/$ETCD_VERSION/etcd"
CONTAINERD_DIR="$DEPLOY_CACHE_DIR/containerd/$CONTAINERD_VERSION"
RUNC_BIN="$DEPLOY_CACHE_DIR/runc/$RUNC_VERSION/runc"
CNI_DIR="$DEPLOY_CACHE_DIR/cni-plugins/$CNI_PLUGINS_VERSION"
KUBE_ROUTER_BIN="$DEPLOY_CACHE_DIR/kube-router/$KUBE_ROUTER_VERSION/kube-router"
CRICTL_BIN="$DEPLOY_CACHE_DIR/crictl/$CRICTL_VERSION/crictl"
SYSTEMD_RUNTIME_VERSION=$(cat "$CLUSTER_REPO/toolchain/cluster/systemd-runtime/go.mod" \
  "$CLUSTER_REPO/toolchain/cluster/systemd-runtime/main.go" | sha256sum | cut -c1-16)
SYSTEMD_RUNTIME_BIN="$DEPLOY_CACHE_DIR/systemd-runtime/$SYSTEMD_RUNTIME_VERSION/systemd-runtime"
KUBECTL="$K8S_BIN/kubectl"

# Addresses. 10.255.254.1/32 and 10.244/16, 10.96/16 are checked against the host's
# addresses and routes at `up`; override them when they clash.
NODE_NAME=deploy-node
NODE_IP="${K8S_CLUSTER_NODE_IP:-10.255.254.1}"
POD_CIDR="${K8S_CLUSTER_POD_CIDR:-10.244.0.0/16}"
SERVICE_CIDR="${K8S_CLUSTER_SERVICE_CIDR:-10.96.0.0/16}"
API_PORT="${K8S_CLUSTER_API_PORT:-6443}"
# The first /24 of the pod CIDR: what the controller-manager allocates to the only node,
# used by the bridge from the start (so pods never wait for the allocation).
NODE_POD_SUBNET="$(echo "$POD_CIDR" | cut -d/ -f1 | cut -d. -f1-3).0/24"
NODE_POD_GATEWAY="$(echo "$POD_CIDR" | cut -d/ -f1 | cut -d. -f1-3).1"
SERVICE_API_IP="$(echo "$SERVICE_CIDR" | cut -d/ -f1 | cut -d. -f1-3).1"
NODE_BRIDGE=dpl-node0   # carries NODE_IP/32, no ports (no dummy interfaces on this kernel)
CNI_BRIDGE=dpl-cni0     # the pods' bridge
ETCD_CLIENT_PORT=23790
ETCD_PEER_PORT=23800
KUBE_ROUTER_HEALTH_PORT=20244

# Ephemeral runtime state that containers of `hostUsers: false` pods must traverse as an
# unmapped uid: containerd's state dir (rootfs mount points; else "remount-private ...
# permission denied") and runc's root. Under $S when every ancestor of $S is
# world-traversable; else (e.g. the default state dir under a 0700 /root) under
# /run/k8s-deployer/cluster. K8S_CLUSTER_RUN_DIR overrides; `up` records the choice in
# $S/run-dir so `down` finds it. `down` removes it.
path_traversable() {
  local d=$1 mode
  while [ "$d" != / ] && [ -n "$d" ]; do
    if [ -e "$d" ]; then
      mode=$(stat -c %A "$d")
      case ${mode:9:1} in x | t) ;; *) return 1 ;; esac
    fi
    d=$(dirname "$d")
  done
}
if [ -n "${K8S_CLUSTER_RUN_DIR:-}" ]; then
  RUN_DIR=$K8S_CLUSTER_RUN_DIR
elif [ -s "$S/run-dir" ]; then
  RUN_DIR=$(cat "$S/run-dir")
elif path_traversable "$S"; then
  RUN_DIR="$S/runtime"
else
  RUN_DIR=/run/k8s-deployer/cluster
fi

KUBECONFIG_ADMIN="$S/admin.kubeconfig"
CONTAINERD_SOCK="$S/containerd.sock"
PAUSE_IMAGE="deploy.local/pause:catatonit"
RUNTIME_CLASS=systemd

# The cgroup v1 hierarchies (and the unified one) the kubelet creates /kubepods in.
cgroup_roots() {
  local d
  for d in /sys/fs/cgroup/*; do
    [ -d "$d" ] && mountpoint -q "$d" && echo "$d"
  done
}
