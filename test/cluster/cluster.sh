#!/usr/bin/env bash
# The local single-node Kubernetes cluster of the tests and the demo.
#
#   test/cluster/cluster.sh up       bring every stage up (idempotent; fast when warm)
#   test/cluster/cluster.sh status   what is up, per stage; exit 0 only when all stages are
#   test/cluster/cluster.sh down     stop everything and undo every host change of `up`
#   test/cluster/cluster.sh down --keep-data
#                                    the same, but the cluster's data (etcd, the host-path
#                                    volumes of the claims) is moved aside to $S.kept, and the
#                                    next `up` puts it back: the same objects (pod UIDs, claims)
#                                    and the same /var/lib. For the tests, which take the cluster
#                                    down and up again while an operator's demo may run on it.
#   (npm run cluster:up | cluster:status | cluster:down; build first: npm run cluster:build)
#
# Stages: (a) control plane: etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
#         plus the loopback registry (test/cluster/registry.sh)
#         (b) node: containerd, CNI bridge, pause image, kubelet, node Ready
#         (c) RuntimeClass `systemd` (handler: toolchain/cluster/systemd-runtime around runc)
#         (d) NetworkPolicy: kube-router, firewall only
#
# Everything lives in $DEPLOY_STATE_DIR/cluster (toolchain/lib/paths.sh):
#   admin.kubeconfig   the cluster-admin kubeconfig (KUBE_CONFIG_PATH), printed by up and status
#   cluster.env        `export` lines: KUBE_CONFIG_PATH, K8S_REGISTRY, K8S_REGISTRY_TLS_VERIFY
#   log/<daemon>.log, run/<daemon>.pid, pki/, host-before/ (what `down` restores)
# Exit codes: 0 ok, 2 usage or configuration, 3 a program or the host failed.
set -euo pipefail
CLUSTER_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LOG_TAG=cluster
# The shell library: log/die, wait_until, the daemons (pidfiles in $S/run, logs in $S/log),
# the host packages, unmount_under.
for f in log wait daemon apt mounts; do
  # shellcheck source=/dev/null
  . "$CLUSTER_HERE/../../toolchain/lib/$f.sh"
done
for f in env pki host control-plane node network-policy; do
  # shellcheck source=/dev/null
  . "$CLUSTER_HERE/lib/$f.sh"
done

require_root() {
  [ "$(id -u)" -eq 0 ] || die 2 "the local cluster needs root (containerd, kubelet, iptables)"
}

require_programs() {
  local missing=() p
  for p in "$ETCD_BIN" "$K8S_BIN"/{kube-apiserver,kube-controller-manager,kube-scheduler,kubelet,kubectl} \
    "$CONTAINERD_DIR"/{containerd,containerd-shim-runc-v2,ctr} "$RUNC_BIN" "$CNI_DIR"/{bridge,host-local,loopback,portmap} \
    "$KUBE_ROUTER_BIN" "$CRICTL_BIN" "$SYSTEMD_RUNTIME_BIN"; do
    [ -x "$p" ] || missing+=("$p")
  done
  [ "${#missing[@]}" -eq 0 ] ||
    die 3 "cluster programs missing (${missing[*]}); build them: npm run cluster:build"
  ensure_host_packages_or_die cluster
}

write_cluster_env() {
  {
    echo "export KUBE_CONFIG_PATH=$KUBECONFIG_ADMIN"
    [ -n "${REGISTRY_EXPORTS:-}" ] && echo "$REGISTRY_EXPORTS"
  } >"$S/cluster.env.tmp"
  mv "$S/cluster.env.tmp" "$S/cluster.env"
}

# Another cluster (e.g. under another DEPLOY_STATE_DIR) holding our ports would make half of
# this one talk to the other: refuse, naming the port.
require_ports_free() {
  local name port
  for spec in etcd:$ETCD_CLIENT_PORT etcd:$ETCD_PEER_PORT kube-apiserver:$API_PORT \
    kube-controller-manager:10257 kube-scheduler:10259 kubelet:10250 kubelet:10248; do
    name=${spec%%:*} port=${spec#*:}
    daemon_pid "$name" >/dev/null && continue
    if [ -n "$(ss -Hltn "sport = :$port" 2>/dev/null)" ]; then
      die 3 "TCP port $port ($name) is taken by another program (another local cluster under another DEPLOY_STATE_DIR?): $(ss -Hltnp "sport = :$port" | head -n1)"
    fi
  done
}

# A failed `up` from nothing must not leave half a cluster (etcd and containerd running, the
# host changed): it takes down what it started, as `down` would. An `up` that found daemons
# running leaves them to their owner and says so.
undo_failed_up() {
  local status=$?
  trap - EXIT
  [ "$status" -eq 0 ] && return 0
  if [ "${UP_FOUND_RUNNING:-1}" = 0 ]; then
    log "up failed (exit $status): stopping what it started and restoring the host (as 'down')"
    # data put back from $KEPT goes back there: a failed up loses nothing it was given
    [ "${UP_RESTORED_DATA:-0}" = 1 ] && KEEP_DATA=1
    down || log "down after the failed up failed too: run 'npm run cluster:down'"
  else
    log "up failed (exit $status); daemons that were running before are left as they are ('npm run cluster:down' stops them)"
  fi
  exit "$status"
}

any_daemon_running() {
  local name
  for name in etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet kube-router; do
    daemon_pid "$name" >/dev/null && return 0
  done
  return 1
}

up() {
  local t0=$SECONDS
  require_root
  require_programs
  mkdir -p "$S"
  require_ports_free
  UP_FOUND_RUNNING=1
  any_daemon_running || UP_FOUND_RUNNING=0
  trap undo_failed_up EXIT
  record_host
  restore_kept_data
  raise_inotify_limit
  ensure_pki
  ensure_node_address
  ensure_pod_isolation
  node_dirs
  write_runtime_links
  write_containerd_config
  write_cni_config
  write_kubelet_config

  # (a) and (b) start side by side: etcd -> API server, while containerd comes up.
  start_etcd
  start_containerd
  wait_until 30 etcd_ready_or_dead || die 3 "etcd not healthy within 30 s (log: $S/log/etcd.log)"
  start_apiserver
  wait_until 30 containerd_ready_or_dead || die 3 "containerd not ready within 30 s (log: $S/log/containerd.log)"
  ensure_pause_image
  wait_until 60 apiserver_ready_or_dead || die 3 "kube-apiserver not ready within 60 s (log: $S/log/kube-apiserver.log)"
  log "API server ready after $((SECONDS - t0)) s"
  start_controller_manager
  start_scheduler
  start_kubelet
  apply_manifests || die 3 "could not apply $CLUSTER_HERE/manifests"

  if [ -x "$CLUSTER_HERE/registry.sh" ]; then
    REGISTRY_EXPORTS=$("$CLUSTER_HERE/registry.sh" up) || die 3 "the loopback registry did not start (test/cluster/registry.sh up)"
    local reg
    reg=$(sed -n 's/^export K8S_REGISTRY=//p' <<<"$REGISTRY_EXPORTS")
    [ -n "$reg" ] && write_registry_hosts "$reg"
  fi
  write_cluster_env

  wait_until 60 node_ready_or_dead || die 3 "node $NODE_NAME not Ready within 60 s (log: $S/log/kubelet.log)"
  # A restarted kubelet finds its Node still Ready from before: wait for its own health too.
  wait_until 30 kubelet_healthy || die 3 "kubelet not healthy within 30 s (log: $S/log/kubelet.log)"
  log "node $NODE_NAME Ready after $((SECONDS - t0)) s"
  # kube-router exits when its Node object does not exist yet, so it starts now.
  start_kube_router
  wait_until 30 controller_manager_healthy || die 3 "kube-controller-manager not healthy within 30 s (log: $S/log/kube-controller-manager.log)"
  wait_until 30 scheduler_healthy || die 3 "kube-scheduler not healthy within 30 s (log: $S/log/kube-scheduler.log)"
  wait_until 30 kube_router_synced_or_dead || die 3 "kube-router did not install its firewall within 30 s (log: $S/log/kube-router.log)"
  log "cluster up in $((SECONDS - t0)) s; kubeconfig: $KUBECONFIG_ADMIN; environment: $S/cluster.env"
  echo "export KUBE_CONFIG_PATH=$KUBECONFIG_ADMIN"
  [ -n "${REGISTRY_EXPORTS:-}" ] && echo "$REGISTRY_EXPORTS"
  trap - EXIT
  return 0
}

# ---- status -----------------------------------------------------------------------

STATUS_FAILED=0
line() { # STAGE COMPONENT OK? DETAIL
  local mark=up
  if [ "$3" != 0 ]; then mark=DOWN; STATUS_FAILED=1; fi
  printf '%-3s %-26s %-5s %s\n' "$1" "$2" "$mark" "$4"
}
daemon_detail() { local pid; if pid=$(daemon_pid "$1"); then echo "pid $pid"; else echo "not running"; fi; }

status() {
  local ok
  set +e # every check runs; a failing one is reported, not fatal
  echo "kubeconfig: $KUBECONFIG_ADMIN"
  echo "environment: $S/cluster.env"
  etcd_healthy; line a etcd $? "$(daemon_detail etcd), http://127.0.0.1:$ETCD_CLIENT_PORT"
  apiserver_ready; line a kube-apiserver $? "$(daemon_detail kube-apiserver), https://$NODE_IP:$API_PORT"
  controller_manager_healthy; line a kube-controller-manager $? "$(daemon_detail kube-controller-manager)"
  scheduler_healthy; line a kube-scheduler $? "$(daemon_detail kube-scheduler)"
  if [ -x "$CLUSTER_HERE/registry.sh" ]; then
    local reg
    reg=$("$CLUSTER_HERE/registry.sh" status 2>/dev/null); line a registry $? "${reg:-stopped}"
  fi
  containerd_ready; line b containerd $? "$(daemon_detail containerd), $CONTAINERD_SOCK"
  ok=1; containerd_ready && ctr_k8s images ls -q "name==$PAUSE_IMAGE" 2>/dev/null | grep -qxF "$PAUSE_IMAGE" && ok=0
  line b pause-image $ok "$PAUSE_IMAGE"
  kubelet_healthy; line b kubelet $? "$(daemon_detail kubelet)"
  ok=1; apiserver_ready && node_ready && ok=0
  line b "node $NODE_NAME" $ok "Ready=$([ $ok = 0 ] && echo True || echo False), $NODE_IP"
  ok=1
  if apiserver_ready && kubectl_admin get runtimeclass "$RUNTIME_CLASS" >/dev/null 2>&1 &&
    [ -x "$S/bin/systemd-runc" ] && grep -q "runtimes.systemd\]" "$S/containerd.toml" 2>/dev/null; then ok=0; fi
  line c "runtimeclass $RUNTIME_CLASS" $ok "handler systemd -> $S/bin/systemd-runc"
  ok=1; daemon_pid kube-router >/dev/null && kube_router_synced && ok=0
  line d kube-router $ok "$(daemon_detail kube-router), firewall only"
  return "$STATUS_FAILED"
}

# ---- down -------------------------------------------------------------------------

# Processes of the cluster that are not our daemons: runc shims started for our containerd.
our_shims() {
  local p
  for p in /proc/[0-9]*; do
    { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -qF -- "-address $CONTAINERD_SOCK" && echo "${p#/proc/}"
  done
  return 0
}

kill_pids() { # SIGNAL PID...
  local sig=$1 pid
  shift
  for pid in "$@"; do kill "-$sig" "$pid" 2>/dev/null || true; done
}

none_left() { [ -z "$(pod_pids)" ] && [ -z "$(our_shims)" ]; }

down() {
  local t0=$SECONDS
  require_root
  [ -d "$S" ] || { log "nothing to do: $S does not exist"; return 0; }
  stop_daemons 30 kube-router kubelet kube-scheduler kube-controller-manager
  # Pods: stop them through containerd (systemd gets SIGRTMIN+3 and 20 s), then whatever is left.
  if containerd_ready; then
    # shellcheck disable=SC2046 # one argument per pod ID
    timeout 45 "$CRICTL_BIN" --runtime-endpoint "unix://$CONTAINERD_SOCK" --timeout 40s stopp $(
      "$CRICTL_BIN" --runtime-endpoint "unix://$CONTAINERD_SOCK" --timeout 5s pods -q 2>/dev/null
    ) >/dev/null 2>&1 || true
    timeout 30 "$CRICTL_BIN" --runtime-endpoint "unix://$CONTAINERD_SOCK" --timeout 25s rmp -a -f >/dev/null 2>&1 || true
  fi
  stop_daemon containerd 20
  # shellcheck disable=SC2046
  kill_pids TERM $(our_shims)
  # shellcheck disable=SC2046
  kill_pids KILL $(pod_pids)
  if ! wait_until 10 none_left; then
    # shellcheck disable=SC2046
    kill_pids KILL $(our_shims) $(pod_pids)
    wait_until 5 none_left || log "processes left: $(our_shims) $(pod_pids)"
  fi
  # The API server drains watches for up to a minute on TERM; nothing here needs that.
  stop_daemon kube-apiserver 2
  stop_daemon etcd
  [ "${KEEP_DATA:-0}" = 1 ] && keep_data
  [ -x "$CLUSTER_HERE/registry.sh" ] && { "$CLUSTER_HERE/registry.sh" down >&2 || log "registry.sh down failed"; }

  unmount_under "$S" "$RUN_DIR"
  remove_links
  restore_iptables
  restore_ipsets
  remove_cgroups
  remove_fixed_paths
  restore_sysctls
  case $RUN_DIR in "$S"/*) ;; *) rm -rf --one-file-system "$RUN_DIR"; rmdir /run/k8s-deployer 2>/dev/null || true ;; esac
  # Runtime state goes; the PKI (so kubeconfigs stay valid) and the last logs stay.
  local d
  for d in "$S"/*; do
    case ${d##*/} in pki | log) ;; *) rm -rf --one-file-system "$d" ;; esac
  done
  log "cluster down in $((SECONDS - t0)) s"
}

# Where `down --keep-data` moves the cluster's data, for the next `up` (beside $S: `down`
# empties $S but for the PKI and the logs).
KEPT="$S.kept"
HOSTPATH_VOLUMES=/tmp/hostpath_pv

keep_data() {
  rm -rf --one-file-system "$KEPT"
  mkdir -p "$KEPT"
  [ -d "$S/etcd/data" ] && mv "$S/etcd/data" "$KEPT/etcd-data"
  if [ -d "$HOSTPATH_VOLUMES" ]; then
    unmount_under "$HOSTPATH_VOLUMES"
    mv "$HOSTPATH_VOLUMES" "$KEPT/hostpath_pv"
  fi
  log "cluster data kept in $KEPT (etcd, host-path volumes): the next up puts it back"
}

# After record_host: the volumes put back are `up`'s, removed (or kept again) by `down`.
restore_kept_data() {
  [ -d "$KEPT" ] || return 0
  if [ -d "$S/etcd/data" ] || [ -e "$HOSTPATH_VOLUMES" ]; then
    log "not restoring $KEPT: the cluster has data of its own ($S/etcd/data or $HOSTPATH_VOLUMES); remove one of them"
    return 0
  fi
  mkdir -p "$S/etcd"
  [ -d "$KEPT/etcd-data" ] && mv "$KEPT/etcd-data" "$S/etcd/data"
  [ -d "$KEPT/hostpath_pv" ] && mv "$KEPT/hostpath_pv" "$HOSTPATH_VOLUMES"
  rmdir "$KEPT"
  UP_RESTORED_DATA=1
  log "cluster data put back from $KEPT"
}

case ${1:-} in
  up) up ;;
  down)
    case ${2:-} in
      --keep-data) KEEP_DATA=1 ;;
      '') ;;
      *) die 2 "down takes only --keep-data (got: $2)" ;;
    esac
    down ;;
  status) status ;;
  *) sed -n '4,7p' "${BASH_SOURCE[0]}" | sed 's/^# *//' >&2; exit 2 ;;
esac
