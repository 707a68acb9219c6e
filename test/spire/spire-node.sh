#!/usr/bin/env bash
# The test spire node: a SPIRE server and an sshd outside the cluster, in their own network
# namespace on this machine, reached by the deployer over ssh with a real host key check.
#
#   test/spire/spire-node.sh up       start it (idempotent)
#   test/spire/spire-node.sh status   exit 0 only when the netns, both daemons and ssh are up
#   test/spire/spire-node.sh down     stop it and remove everything up made (netns, veth,
#                                     processes, its state directory)
#   test/spire/spire-node.sh sync     turn the hand-off's drop-files into the k8s_psat allow
#                                     list and registration entries (see cmd_sync) now; `up`
#                                     also starts a syncer that does it whenever the hand-off
#                                     changes (a look every 2 s), so a `deploy apply` or
#                                     destroy needs no call (see cmd_sync_loop)
#   test/spire/spire-node.sh rotate-ca  rotate the server's X.509 CA (prepare + activate): the
#                                     trust bundle changes; prints the authorities and roots
#   (npm run spire:up | spire:status | spire:down; build first: npm run spire:build)
#
# The node: netns $SPIRE_NODE_NETNS (default dpl-spire), a veth pair (host side
# $SPIRE_NODE_NETNS-h, $SPIRE_NODE_HOST_IP/30; node side eth0, $SPIRE_NODE_IP/30, default route
# via the host, so the node reaches the cluster's API server). Both daemons run in a private
# mount namespace in which the node's own directories replace the host's:
#   /var/lib  <- $S/root/var/lib   (spire-server data; k8s hand-off files in /var/lib/spire/k8s)
#   /tmp      <- $S/root/tmp       (the server's API socket, /tmp/spire-server/private/api.sock)
#   /usr/local/bin <- $S/root/bin  (spire-server and sshd, bound from the cache)
#   /etc/ssh <- $S/root/etc/ssh    (sshd's config, host key, authorized_keys)
#   /etc/machine-id, /etc/passwd (plus the sshd privilege separation user), /run (tmpfs)
# The syncer (a bash loop) runs beside them in the host's namespaces (see cmd_sync_loop).
# so nothing of the host changes, and `down` + `up` make the node again with a new machine ID,
# a new CA and a new host key (the spec's "spire node made again").
#
# SPIRE: trust domain $SPIRE_NODE_TRUST_DOMAIN (fediversity), server on $SPIRE_NODE_IP:8081,
# node attestor k8s_psat with one cluster per node of a namespace, named <ns>.<node> (SPIRE
# names a k8s_psat agent after its cluster and Kubernetes node UID only: with one cluster per
# namespace, two node pods of a namespace on one Kubernetes node would be one agent). Its
# kubeconfig is the namespace's /var/lib/spire/k8s/<ns>/kubeconfig (written later by the
# deployer; the server reads it at each attestation), its one allowed service account is
# <ns>:node-<node>. SPIRE_NODE_CLUSTERS="<cluster>:<sa>[,<sa>...] ..." (default
# "fediversity:node-web") adds clusters for namespaces without drop-files.
#
# Writes $S/spire-node.env (`export` lines) for the deployer:
#   K8S_SPIRE_NODE, SSH_USER, SSH_PRIVATE_KEY_FILE, SSH_NODES (JSON: host key + ssh options),
#   SPIRE_NODE_KNOWN_HOSTS, SPIRE_NODE_SERVER_ADDRESS, SPIRE_NODE_TRUST_DOMAIN, SPIRE_NODE_NETNS
# where S=$DEPLOY_STATE_DIR/spire-node (toolchain/lib/paths.sh).
# Exit codes: 0 ok, 2 usage or configuration, 3 a program or the host failed.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
export LOG_TAG=spire-node
# The shell library (toolchain/lib), the versions, then the node's parts (test/spire/lib):
#   programs.sh  spire-server and Debian's sshd      network.sh  the netns and veth pair
#   daemons.sh   sshd and spire-server inside the node  files.sh  the node's files, env, checks
#   sync.sh      the hand-off -> allow list + entries, and the syncer   ca.sh  CA rotation
# shellcheck source=../../toolchain/versions.env
. "$REPO/toolchain/versions.env"
for f in log wait paths cache apt daemon; do
  # shellcheck source=/dev/null
  . "$REPO/toolchain/lib/$f.sh"
done
# shellcheck source=lib/programs.sh
. "$HERE/lib/programs.sh"
# shellcheck source=lib/network.sh
. "$HERE/lib/network.sh"
# shellcheck source=lib/daemons.sh
. "$HERE/lib/daemons.sh"
# shellcheck source=lib/files.sh
. "$HERE/lib/files.sh"
# shellcheck source=lib/sync.sh
. "$HERE/lib/sync.sh"
# shellcheck source=lib/ca.sh
. "$HERE/lib/ca.sh"

S="$DEPLOY_STATE_DIR/spire-node"
NETNS="${SPIRE_NODE_NETNS:-dpl-spire}"
VETH_HOST="${NETNS}-h"
# A /30 apart from the host's networks and the local cluster's (10.255.254.1/32 node,
# 10.244.0.0/16 pods, 10.96.0.0/16 services).
HOST_IP="${SPIRE_NODE_HOST_IP:-10.253.0.1}"
NODE_IP="${SPIRE_NODE_IP:-10.253.0.2}"
TRUST_DOMAIN="${SPIRE_NODE_TRUST_DOMAIN:-fediversity}"
CLUSTERS="${SPIRE_NODE_CLUSTERS:-fediversity:node-web}"
SSH_USER_NAME=root
SPIRE_SERVER_BIN="$(cache_path "spire/$SPIRE_VERSION/spire-server")"


cmd_up() {
  ensure_programs
  write_node_files
  network_up
  (
    # under the sync lock: a running syncer may be restarting the server, and a second
    # server would find its port taken
    flock -w 120 8 || die 3 "a sync holds $S/run/sync.lock for over 120s"
    start_node_daemon sshd -D -e -f /etc/ssh/sshd_config
    start_node_daemon spire-server run -config /var/lib/spire/server.conf
  ) 8>"$S/run/sync.lock"
  wait_until 30 sshd_answers || { require_alive sshd; die 3 "sshd on $NODE_IP does not answer within 30s (log: $S/log/sshd.log)"; }
  wait_until 60 server_healthy || { require_alive spire-server; die 3 "spire-server is not healthy within 60s (log: $S/log/spire-server.log)"; }
  start_syncer
  write_env
  log "up: ssh $SSH_USER_NAME@$NODE_IP, spire-server $NODE_IP:8081 (trust domain $TRUST_DOMAIN); env: $S/spire-node.env"
  echo "$S/spire-node.env"
}

cmd_status() {
  local ok=0 pid
  if netns_exists; then echo "netns $NETNS: present"; else echo "netns $NETNS: absent"; ok=1; fi
  for d in sshd spire-server syncer; do
    if pid=$(daemon_pid "$d"); then echo "$d: running (pid $pid)"; else echo "$d: stopped"; ok=1; fi
  done
  if [ "$ok" -eq 0 ]; then
    if sshd_answers; then echo "ssh $SSH_USER_NAME@$NODE_IP: ok"; else echo "ssh $SSH_USER_NAME@$NODE_IP: failing"; ok=1; fi
    if server_healthy; then echo "spire-server: healthy"; else echo "spire-server: unhealthy"; ok=1; fi
  fi
  [ "$ok" -eq 0 ] && echo "env: $S/spire-node.env"
  return "$ok"
}

cmd_down() {
  [ "$(id -u)" -eq 0 ] || die 2 "the test spire node needs root"
  # the syncer first: it would start spire-server again
  stop_daemon syncer
  stop_daemon spire-server
  stop_daemon sshd
  network_down
  rm -rf "$S"
  log "down: nothing left"
}

case "${1:-}" in
  up) cmd_up ;;
  status) cmd_status ;;
  down) cmd_down ;;
  sync) cmd_sync ;;
  sync-loop) cmd_sync_loop ;;
  rotate-ca) cmd_rotate_ca ;;
  *) echo "usage: $0 up|status|down|sync|rotate-ca" >&2; exit 2 ;;
esac
