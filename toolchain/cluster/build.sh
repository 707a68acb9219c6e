#!/usr/bin/env bash
# Build the programs of the local test cluster from pinned Go modules into the
# version-keyed cache, skipping every program whose output already exists.
#
#   toolchain/cluster/build.sh [all|kubernetes|etcd|containerd|runc|cni|kube-router|crictl|systemd-runtime]...
#
# Output: ${DEPLOY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/k8s-deployer}/<program>/<version>/
# Versions: toolchain/versions.env; the reasons for them: toolchain/cluster/README.md.
set -euo pipefail
export LOG_TAG=cluster-build

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/go-build.sh
. "$here/../lib/go-build.sh"
# shellcheck source=../lib/apt.sh
. "$here/../lib/apt.sh"

gobuild() { # MODULE-DIR go build args... (run inside the tools module)
  local dir="$1"; shift
  require_go
  mkdir -p "$BUILD_OUT"
  go_build "$here/$dir" "$@"
}

build_kubernetes() {
  local v="$KUBERNETES_VERSION" minor; minor="${v#*.}"; minor="${minor%%.*}"
  local ldflags="-s -w"
  local pkg
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=v$v -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  # One `go build` for all five commands so their shared packages compile once.
  CGO_ENABLED=0 gobuild kubernetes -ldflags "$ldflags" -o "$BUILD_OUT/" tool
}

build_etcd() {
  CGO_ENABLED=0 gobuild etcd -ldflags "-s -w" -o "$BUILD_OUT/etcd" go.etcd.io/etcd/server/v3
}

build_containerd() {
  # Tags drop the snapshotters that need C headers or kernels features we do not use.
  CGO_ENABLED=0 gobuild containerd -tags "no_btrfs no_devmapper no_zfs no_aufs" \
    -ldflags "-s -w -X github.com/containerd/containerd/v2/version.Version=v$CONTAINERD_VERSION" \
    -o "$BUILD_OUT/" tool
}

build_runc() {
  ensure_host_packages cluster-build
  # cgo + libseccomp (`-tags seccomp`): needs Debian's libseccomp-dev and a C compiler.
  CGO_ENABLED=1 gobuild runc -tags seccomp \
    -ldflags "-s -w -X main.version=$RUNC_VERSION" -o "$BUILD_OUT/" tool
}

build_cni() {
  CGO_ENABLED=0 gobuild cni -ldflags "-s -w" -o "$BUILD_OUT/" tool
}

build_kube_router() {
  CGO_ENABLED=0 gobuild kube-router -ldflags "-s -w" -o "$BUILD_OUT/" tool
}

build_systemd_runtime() {
  CGO_ENABLED=0 gobuild systemd-runtime -ldflags "-s -w" -o "$BUILD_OUT/systemd-runtime" .
}

# The wrapper is our own source: its cache key is a hash of that source.
systemd_runtime_version() {
  cat "$here/systemd-runtime/go.mod" "$here/systemd-runtime/main.go" | sha256sum | cut -c1-16
}

build_crictl() {
  CGO_ENABLED=0 gobuild crictl -ldflags "-s -w" -o "$BUILD_OUT/" tool
}

build_one() {
  case "$1" in
    kubernetes)  build_once "kubernetes/$KUBERNETES_VERSION" build_kubernetes ;;
    etcd)        build_once "etcd/$ETCD_VERSION" build_etcd ;;
    containerd)  build_once "containerd/$CONTAINERD_VERSION" build_containerd ;;
    runc)        build_once "runc/$RUNC_VERSION" build_runc ;;
    cni)         build_once "cni-plugins/$CNI_PLUGINS_VERSION" build_cni ;;
    kube-router) build_once "kube-router/$KUBE_ROUTER_VERSION" build_kube_router ;;
    crictl)      build_once "crictl/$CRICTL_VERSION" build_crictl ;;
    systemd-runtime) build_once "systemd-runtime/$(systemd_runtime_version)" build_systemd_runtime ;;
    *) die 2 "unknown program '$1' (known: $ALL_PROGRAMS)" ;;
  esac
}

ALL_PROGRAMS="runc cni crictl systemd-runtime etcd containerd kube-router kubernetes"
targets=("$@"); [ ${#targets[@]} -eq 0 ] && targets=(all)
[ "${targets[0]}" = all ] && read -r -a targets <<<"$ALL_PROGRAMS"
total=$SECONDS
for t in "${targets[@]}"; do build_one "$t"; done
log "done in $((SECONDS - total)) s"
