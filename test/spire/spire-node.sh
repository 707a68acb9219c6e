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
# where S=${DEPLOY_STATE_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/k8s-deployer}/spire-node.
# Exit codes: 0 ok, 2 usage or configuration, 3 a program or the host failed.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=toolchain/cache.sh
. "$REPO/toolchain/cache.sh"
# shellcheck source=toolchain/host-packages.sh
. "$REPO/toolchain/host-packages.sh"

SPIRE_VERSION=1.13.3
DEPLOY_STATE_DIR="${DEPLOY_STATE_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/k8s-deployer}"
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

slog() { printf '%s spire-node: %s\n' "$(date -u +%H:%M:%S.%2N)" "$*" >&2; }
sdie() { local code=$1; shift; slog "error: $*"; exit "$code"; }

wait_until() { # SECS CMD...: retries CMD until it succeeds or SECS pass
  local deadline=$((SECONDS + $1)) delay=0.1
  shift
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep "$delay"
    case $delay in 0.1) delay=0.2 ;; 0.2) delay=0.5 ;; *) delay=1 ;; esac
  done
}

# ---- the programs -------------------------------------------------------------------------

# Debian's sshd, unpacked from its package into the cache: installing openssh-server would
# start an sshd on the host (its postinst) and add a user; we need neither.
sshd_version() {
  apt-cache policy openssh-server 2>/dev/null | sed -n 's/^ *Candidate: *//p' | head -n1
}

fetch_sshd() {
  mkdir -p "$BUILD_OUT.deb"
  (cd "$BUILD_OUT.deb" && apt-get -o APT::Sandbox::User=root download -qq openssh-server >&2) || { rm -rf "$BUILD_OUT.deb"; return 3; }
  dpkg-deb -x "$BUILD_OUT.deb"/openssh-server_*.deb "$BUILD_OUT"
  rm -rf "$BUILD_OUT.deb"
}

ensure_programs() {
  [ "$(id -u)" -eq 0 ] || sdie 2 "the test spire node needs root (network namespace, mounts)"
  [ -x "$SPIRE_SERVER_BIN" ] || sdie 3 "spire-server $SPIRE_VERSION is missing ($SPIRE_SERVER_BIN); build it: npm run spire:build"
  # sshd's own libraries (openssh-client brings the rest), ssh-keygen, ip, unshare.
  ensure_host_packages spire || sdie 3 "Debian packages missing (above)"
  local v
  v=$(sshd_version)
  if [ -z "$v" ] || [ "$v" = "(none)" ]; then
    apt-get -o DPkg::Lock::Timeout=600 update -qq >&2 || true
    v=$(sshd_version)
  fi
  if [ -z "$v" ] || [ "$v" = "(none)" ]; then sdie 3 "apt knows no openssh-server package; check the apt sources"; fi
  local key="debian/openssh-server/${v//:/_}"
  build_once "$key" fetch_sshd || sdie 3 "could not fetch Debian's openssh-server $v"
  SSHD_BIN="$(cache_path "$key")/usr/sbin/sshd"
  [ -x "$SSHD_BIN" ] || sdie 3 "no sshd in $(cache_path "$key")"
}

# ---- daemons: one pidfile each ("<pid> <exe>"), by PID only -------------------------------

# The third field, when there, is the process's start time (/proc/PID/stat): the syncer is a
# bash like many others, so its program alone does not tell it from a reused PID.
daemon_pid() {
  local name=$1 pid exe start
  [ -f "$S/run/$name.pid" ] || return 1
  read -r pid exe start <"$S/run/$name.pid" || true
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$exe" ] || return 1
  [ -z "$start" ] || [ "$(proc_start "$pid")" = "$start" ] || return 1
  echo "$pid"
}

proc_start() { # PID: its start time in clock ticks since boot (field 22 of /proc/PID/stat)
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  # the fields after the command name, which may hold spaces: ") S ppid ..." -> field 22 is the 20th
  awk '{print $20}' <<<"${stat##*) }"
}

not_alive() { ! kill -0 "$1" 2>/dev/null; }

stop_daemon() {
  local name=$1 pid
  if pid=$(daemon_pid "$name"); then
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_until 15 not_alive "$pid"; then
      slog "$name (pid $pid) did not stop within 15s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      wait_until 5 not_alive "$pid" || slog "$name (pid $pid) survives SIGKILL"
    fi
    slog "$name stopped (pid $pid)"
  fi
  rm -f "$S/run/$name.pid"
}

# Runs a program of the node (spire-server or sshd, by name) as the node: in its netns and a
# private mount namespace whose /etc/ssh, /var/lib, /tmp, /usr/local/bin, /etc/machine-id and
# /etc/passwd are the node's own. Nothing the node reads afterwards is a host path, so a
# state or cache directory under /tmp works too (/tmp is replaced last). Every step execs, so
# the PID that start_daemon records is the program's own.
node_exec() {
  local name=$1
  shift
  # shellcheck disable=SC2016 # expanded by the inner shell
  SSHD_BIN=$SSHD_BIN SPIRE_SERVER_BIN=$SPIRE_SERVER_BIN exec setsid ip netns exec "$NETNS" unshare --mount --propagation private -- /bin/sh -euc '
    root=$1 name=$2; shift 2
    mount --bind "$root/bin" /usr/local/bin
    # Both programs in every daemon'"'"'s namespace: ssh sessions (children of sshd) run spire-server.
    mount --bind "$SSHD_BIN" /usr/local/bin/sshd
    mount --bind "$SPIRE_SERVER_BIN" /usr/local/bin/spire-server
    mount --bind "$root/etc/ssh" /etc/ssh
    mount --bind "$root/etc/machine-id" /etc/machine-id
    mount --bind "$root/etc/passwd" /etc/passwd
    mount --bind "$root/var/lib" /var/lib
    mount -t tmpfs -o mode=0755,size=16m tmpfs /run
    mkdir -m 0755 /run/sshd
    mount --bind "$root/tmp" /tmp
    unset SSHD_BIN SPIRE_SERVER_BIN
    exec "/usr/local/bin/$name" "$@"' node-exec "$S/root" "$name" "$@"
}

start_daemon() {
  local name=$1 pid
  shift
  if pid=$(daemon_pid "$name"); then
    slog "$name already running (pid $pid)"
    return 0
  fi
  mkdir -p "$S/run" "$S/log"
  # 8>&-: not the sync lock (a server restarted by a sync would hold it for ever)
  (node_exec "$name" "$@") >>"$S/log/$name.log" 2>&1 </dev/null 8>&- &
  pid=$!
  # The program's path as its own mount namespace shows it (daemon_pid compares /proc/PID/exe).
  echo "$pid /usr/local/bin/$name" >"$S/run/$name.pid"
  slog "$name started (pid $pid, log $S/log/$name.log)"
}

require_alive() {
  local name=$1
  daemon_pid "$name" >/dev/null && return 0
  tail -n 20 "$S/log/$name.log" >&2 2>/dev/null || true
  sdie 3 "$name exited (log above: $S/log/$name.log)"
}

# ---- network ------------------------------------------------------------------------------

netns_exists() { ip netns list | awk '{print $1}' | grep -qx "$NETNS"; }

check_addresses_free() {
  # Refuse addresses the host already uses or routes somewhere other than the default route.
  local ip
  for ip in "$HOST_IP" "$NODE_IP"; do
    if ip -o addr show | awk '{print $4}' | cut -d/ -f1 | grep -qx "$ip"; then
      sdie 2 "address $ip is already on an interface of this host; set SPIRE_NODE_HOST_IP/SPIRE_NODE_IP"
    fi
    if ip route show to match "$ip" | grep -qv '^default'; then
      sdie 2 "address $ip is already routed on this host ($(ip route show to match "$ip" | grep -v '^default' | head -n1)); set SPIRE_NODE_HOST_IP/SPIRE_NODE_IP"
    fi
  done
}

network_up() {
  if netns_exists; then
    slog "netns $NETNS present"
    return 0
  fi
  check_addresses_free
  ip netns add "$NETNS"
  ip link add "$VETH_HOST" type veth peer name eth0 netns "$NETNS"
  ip addr add "$HOST_IP/30" dev "$VETH_HOST"
  ip link set "$VETH_HOST" up
  ip -n "$NETNS" link set lo up
  ip -n "$NETNS" addr add "$NODE_IP/30" dev eth0
  ip -n "$NETNS" link set eth0 up
  ip -n "$NETNS" route add default via "$HOST_IP"
  slog "netns $NETNS: $NODE_IP/30 via $VETH_HOST ($HOST_IP)"
}

network_down() {
  # Deleting the netns deletes its veth end, which deletes the pair.
  if netns_exists; then ip netns del "$NETNS"; fi
  # The kernel removes the pair asynchronously: it may vanish between the check and the del.
  if ip link show "$VETH_HOST" >/dev/null 2>&1; then
    ip link del "$VETH_HOST" 2>/dev/null || ! ip link show "$VETH_HOST" >/dev/null 2>&1 ||
      sdie 3 "cannot delete the link $VETH_HOST"
  fi
}

# ---- the node's files ---------------------------------------------------------------------

hcl_clusters() {
  local entry ns sas first=1 sa list
  printf 'clusters = {\n'
  local cluster
  for entry in $CLUSTERS; do
    cluster=${entry%%:*}
    ns=${cluster%%.*}
    sas=${entry#*:}
    [[ $cluster =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)?$ ]] || sdie 2 "SPIRE_NODE_CLUSTERS: \"$cluster\" is not <namespace> or <namespace>.<node>"
    list=""
    first=1
    for sa in ${sas//,/ }; do
      [[ $sa =~ ^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$ ]] || sdie 2 "SPIRE_NODE_CLUSTERS: \"$sa\" is not a service account name"
      [ $first -eq 1 ] || list+=", "
      list+="\"$ns:$sa\""
      first=0
    done
    [ -n "$list" ] || sdie 2 "SPIRE_NODE_CLUSTERS: namespace $ns has no service account (<ns>:<sa>[,<sa>...])"
    printf '          "%s" = {\n            service_account_allow_list = [%s]\n            kube_config_file = "/var/lib/spire/k8s/%s/kubeconfig"\n          }\n' \
      "$cluster" "$list" "$ns"
  done
  printf '        }\n'
}

write_node_files() {
  umask 077
  # $S/ssh: the deployer's side (its key, its known_hosts); $S/root: the node's file system.
  mkdir -p "$S/run" "$S/log" "$S/ssh" "$S/root/var/lib/spire/server" "$S/root/var/lib/spire/k8s" \
    "$S/root/tmp" "$S/root/bin" "$S/root/etc/ssh"
  chmod 1777 "$S/root/tmp"
  chmod 0755 "$S/root" "$S/root/var/lib" "$S/root/bin" "$S/root/etc" "$S/root/etc/ssh"
  # The node's identity: made once per `up` from nothing; `down` forgets it.
  [ -s "$S/root/etc/machine-id" ] ||
    { od -An -N16 -tx1 /dev/urandom | tr -d ' \n'; echo; } >"$S/root/etc/machine-id"
  chmod 0444 "$S/root/etc/machine-id"
  # sshd's privilege separation user, only inside the node's mount namespace.
  if [ ! -s "$S/root/etc/passwd" ]; then
    cp /etc/passwd "$S/root/etc/passwd"
    getent passwd sshd >/dev/null || echo 'sshd:x:65533:65534::/run/sshd:/usr/sbin/nologin' >>"$S/root/etc/passwd"
    chmod 0644 "$S/root/etc/passwd"
  fi
  # Mount points for the programs (node_exec binds the cache's binaries onto them).
  touch "$S/root/bin/spire-server" "$S/root/bin/sshd"
  chmod 0755 "$S/root/bin/spire-server" "$S/root/bin/sshd"

  [ -s "$S/root/etc/ssh/ssh_host_ed25519_key" ] || ssh-keygen -q -t ed25519 -N '' -C "spire-node-host" -f "$S/root/etc/ssh/ssh_host_ed25519_key"
  [ -s "$S/ssh/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C "deployer" -f "$S/ssh/id_ed25519"
  cp "$S/ssh/id_ed25519.pub" "$S/root/etc/ssh/authorized_keys"
  # The deployer's side of the host key check.
  printf '%s %s\n' "$NODE_IP" "$(cut -d' ' -f1,2 "$S/root/etc/ssh/ssh_host_ed25519_key.pub")" >"$S/ssh/known_hosts"

  cat >"$S/root/etc/ssh/sshd_config" <<EOF
ListenAddress $NODE_IP:22
HostKey /etc/ssh/ssh_host_ed25519_key
AuthorizedKeysFile /etc/ssh/authorized_keys
PermitRootLogin prohibit-password
AllowUsers $SSH_USER_NAME
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
X11Forwarding no
AllowTcpForwarding no
PrintMotd no
LogLevel VERBOSE
EOF

  # Once: later changes to the allow list come from `sync`, which an `up` must not undo.
  [ -s "$S/root/var/lib/spire/server.conf" ] || write_server_conf "$S/root/var/lib/spire/server.conf"
}

# server.conf of the node, to $1; the k8s_psat clusters from $CLUSTERS.
write_server_conf() {
  cat >"$1" <<EOF
# Written by test/spire/spire-node.sh
server {
  bind_address = "$NODE_IP"
  bind_port = "8081"
  trust_domain = "$TRUST_DOMAIN"
  data_dir = "/var/lib/spire/server"
  log_level = "INFO"
  ca_subject {
    country = ["XX"]
    organization = ["deploy test spire node"]
    common_name = ""
  }
}
plugins {
  DataStore "sql" {
    plugin_data {
      database_type = "sqlite3"
      connection_string = "/var/lib/spire/server/datastore.sqlite3"
    }
  }
  KeyManager "disk" {
    plugin_data {
      keys_path = "/var/lib/spire/server/keys.json"
    }
  }
  NodeAttestor "k8s_psat" {
    plugin_data {
      $(hcl_clusters)
    }
  }
}
EOF
}

write_env() {
  local hostkey ssh_nodes
  hostkey=$(cut -d' ' -f1,2 "$S/root/etc/ssh/ssh_host_ed25519_key.pub")
  ssh_nodes=$(printf '{"%s":{"hostKey":"%s","sshOpts":["-o","ConnectTimeout=10"]}}' "$NODE_IP" "$hostkey")
  {
    echo "export K8S_SPIRE_NODE=$NODE_IP"
    echo "export SSH_USER=$SSH_USER_NAME"
    echo "export SSH_PRIVATE_KEY_FILE=$S/ssh/id_ed25519"
    echo "export SSH_NODES='$ssh_nodes'"
    echo "export SPIRE_NODE_KNOWN_HOSTS=$S/ssh/known_hosts"
    echo "export SPIRE_NODE_SERVER_ADDRESS=$NODE_IP:8081"
    echo "export SPIRE_NODE_TRUST_DOMAIN=$TRUST_DOMAIN"
    echo "export SPIRE_NODE_NETNS=$NETNS"
  } >"$S/spire-node.env.tmp"
  mv "$S/spire-node.env.tmp" "$S/spire-node.env"
}

# ---- checks -------------------------------------------------------------------------------

ssh_node() {
  ssh -n -i "$S/ssh/id_ed25519" -o IdentitiesOnly=yes -o BatchMode=yes \
    -o StrictHostKeyChecking=yes -o UserKnownHostsFile="$S/ssh/known_hosts" \
    -o ConnectTimeout=5 "$SSH_USER_NAME@$NODE_IP" "$@"
}

sshd_answers() { ssh_node true 2>/dev/null; }
server_healthy() {
  ip netns exec "$NETNS" "$SPIRE_SERVER_BIN" healthcheck -socketPath "$S/root/tmp/spire-server/private/api.sock" >/dev/null 2>&1
}

# ---- sync: what the spire node's own service does with the hand-off ------------------------
# The test node's stand-in for the spire node's service (the spire spec's FR-017): the k8s_psat
# allow list from the drop-files (/var/lib/spire/k8s/<ns>/entries/<node>.json: cluster
# <ns>.<node>, service account <ns>:node-<node>; SPIRE_NODE_CLUSTERS for the others), the
# server restarted when that changes, and the entries of the drop-files registered; entries
# under spiffe://<td>/k8s/ and /host/ that no drop-file names any more are deleted.

sock() { printf '%s' "$S/root/tmp/spire-server/private/api.sock"; }
server_cli() { "$SPIRE_SERVER_BIN" "$@" -socketPath "$(sock)"; }

merged_clusters() {
  local -A sas=()
  local entry ns f d node
  for entry in $CLUSTERS; do sas[${entry%%:*}]=${entry#*:}; done
  for d in "$S"/root/var/lib/spire/k8s/*/; do
    [ -d "$d/entries" ] || continue
    ns=$(basename "$d")
    # one k8s_psat cluster per node, <ns>.<node>, that allows only the node's service account:
    # SPIRE names a k8s_psat agent .../k8s_psat/<cluster>/<Kubernetes node UID>, so with one
    # cluster per namespace two node pods on one Kubernetes node would be the same agent
    for f in "$d"entries/*.json; do
      [ -e "$f" ] || continue
      node=$(basename "$f" .json)
      sas[$ns.$node]=node-$node
    done
  done
  for ns in $(printf '%s\n' "${!sas[@]}" | sort); do printf '%s:%s ' "$ns" "${sas[$ns]}"; done
}

# One sync at a time (the syncer and a `sync` by hand): $S/run/sync.lock.
cmd_sync() {
  ensure_programs
  [ -d "$S/run" ] || sdie 3 "the test spire node is not up: npm run spire:up"
  (
    flock -w 120 8 || sdie 3 "another sync holds $S/run/sync.lock for over 120s"
    # under the lock: the syncer's own sync may be restarting the server right now
    daemon_pid spire-server >/dev/null || sdie 3 "the test spire node is not up: npm run spire:up"
    sync_once
  ) 8>"$S/run/sync.lock"
}

sync_once() {
  CLUSTERS=$(merged_clusters)
  local conf="$S/root/var/lib/spire/server.conf"
  write_server_conf "$conf.new"
  if ! cmp -s "$conf.new" "$conf"; then
    mv "$conf.new" "$conf"
    slog "sync: k8s_psat clusters now: $CLUSTERS; restarting spire-server"
    stop_daemon spire-server
    start_daemon spire-server run -config /var/lib/spire/server.conf
    wait_until 60 server_healthy || { require_alive spire-server; sdie 3 "spire-server is not healthy within 60s after the restart"; }
  else
    rm -f "$conf.new"
  fi
  local have want f id
  have=$(server_cli entry show -output json | jq -r '.entries[]? | "\(.id) spiffe://\(.spiffe_id.trust_domain)\(.spiffe_id.path) spiffe://\(.parent_id.trust_domain)\(.parent_id.path)"')
  want=""
  for f in "$S"/root/var/lib/spire/k8s/*/entries/*.json; do
    [ -e "$f" ] || continue
    want+=$(jq -r '.entries[] | "\(.spiffe_id) \(.parent_id)"' "$f")$'\n'
    # register the file's entries that are not there yet (create refuses a whole file with one)
    local missing
    missing=$(jq -c --arg have "$have" '{entries: [.entries[] | select(("\(.spiffe_id) \(.parent_id)") as $k | ($have | split("\n") | map(split(" ")[1:] | join(" ")) | index($k)) == null)]}' "$f")
    if [ "$(jq '.entries | length' <<<"$missing")" -gt 0 ]; then
      server_cli entry create -data /dev/stdin <<<"$missing" >/dev/null || sdie 3 "spire-server entry create failed for $f"
      slog "sync: registered $(jq -r '[.entries[].spiffe_id] | join(", ")' <<<"$missing")"
    fi
  done
  while read -r id sid pid; do
    [ -n "$id" ] || continue
    case $sid in spiffe://"$TRUST_DOMAIN"/k8s/* | spiffe://"$TRUST_DOMAIN"/host/*) ;; *) continue ;; esac
    if ! grep -qxF "$sid $pid" <<<"$want"; then
      server_cli entry delete -entryID "$id" >/dev/null || sdie 3 "spire-server entry delete $id failed"
      slog "sync: retired $sid"
    fi
  done <<<"$have"
}

# ---- the syncer: sync whenever the hand-off changed ----------------------------------------
# A real spire node reacts to the hand-off by itself; the test node's stand-in is a loop,
# started by `up` and stopped by `down` like the daemons (pidfile, by PID), that runs a sync
# whenever the files under /var/lib/spire/k8s changed (a look every 2 s). A sync that fails
# (say the server restarting) is tried again on the next look. It runs in the host's mount
# namespace, not the node's: it restarts spire-server, which node_exec puts in a fresh one.

SYNC_EVERY=2

handoff_signature() {
  find "$S/root/var/lib/spire/k8s" -mindepth 1 -printf '%P %y %s %T@\n' 2>/dev/null | LC_ALL=C sort | sha256sum
}

cmd_sync_loop() {
  ensure_programs
  local last="" now
  slog "syncer: watching $S/root/var/lib/spire/k8s every ${SYNC_EVERY}s"
  while :; do
    now=$(handoff_signature)
    if [ "$now" != "$last" ]; then
      if (
        flock -w 120 8 || exit 1
        sync_once
      ) 8>"$S/run/sync.lock"; then
        last=$now
      else
        slog "syncer: sync failed; trying again in ${SYNC_EVERY}s"
      fi
    fi
    sleep "$SYNC_EVERY"
  done
}

start_syncer() {
  local pid bash_exe
  if pid=$(daemon_pid syncer); then
    slog "syncer already running (pid $pid)"
    return 0
  fi
  bash_exe=$(readlink -f "$BASH")
  # setsid: its own session, so it outlives the caller; every descriptor to the log or null
  # (a caller reading up's stdout must not wait for the syncer).
  setsid "$bash_exe" "$HERE/spire-node.sh" sync-loop >>"$S/log/syncer.log" 2>&1 </dev/null 8>&- &
  pid=$!
  # the start time is set at fork, the same after setsid execs bash
  echo "$pid $bash_exe $(proc_start "$pid")" >"$S/run/syncer.pid"
  slog "syncer started (pid $pid, log $S/log/syncer.log)"
}

# ---- CA rotation (for the tests) ----------------------------------------------------------
# SPIRE 1.13.3's local authority: `x509 prepare` makes the next X.509 CA (its root joins the
# bundle at once), `x509 activate` signs with it from then on. The old root stays in the
# bundle until it expires (no taint/revoke: agents and workloads that hold the old bundle go
# on working until they get the new one).
bundle_fingerprints() {
  local pem=$1
  while [ -n "$pem" ]; do
    openssl x509 -noout -fingerprint -sha256 <<<"$pem" | sed 's/^.*=//'
    pem=$(sed '1,/-----END CERTIFICATE-----/d' <<<"$pem")
  done
}

cmd_rotate_ca() {
  ensure_programs
  daemon_pid spire-server >/dev/null || sdie 3 "the test spire node is not up: npm run spire:up"
  local before after prepared id old
  before=$(server_cli bundle show -format pem) || sdie 3 "spire-server bundle show failed"
  old=$(server_cli localauthority x509 show -output json | jq -r '.active.authority_id // empty') || true
  prepared=$(server_cli localauthority x509 prepare -output json) || sdie 3 "spire-server localauthority x509 prepare failed"
  id=$(jq -r '.prepared_authority.authority_id // empty' <<<"$prepared")
  [ -n "$id" ] || sdie 3 "x509 prepare named no authority: $prepared"
  server_cli localauthority x509 activate -authorityID "$id" -output json >/dev/null ||
    sdie 3 "spire-server localauthority x509 activate -authorityID $id failed"
  after=$(server_cli bundle show -format pem) || sdie 3 "spire-server bundle show failed"
  [ "$before" != "$after" ] || sdie 3 "the trust bundle did not change after activating $id"
  echo "X.509 authority: ${old:-?} -> $id (active)"
  echo "bundle roots before (sha256):"
  bundle_fingerprints "$before" | sed 's/^/  /'
  echo "bundle roots after (sha256):"
  bundle_fingerprints "$after" | sed 's/^/  /'
}

# ---- verbs --------------------------------------------------------------------------------

cmd_up() {
  ensure_programs
  write_node_files
  network_up
  (
    # under the sync lock: a running syncer may be restarting the server, and a second
    # server would find its port taken
    flock -w 120 8 || sdie 3 "a sync holds $S/run/sync.lock for over 120s"
    start_daemon sshd -D -e -f /etc/ssh/sshd_config
    start_daemon spire-server run -config /var/lib/spire/server.conf
  ) 8>"$S/run/sync.lock"
  wait_until 30 sshd_answers || { require_alive sshd; sdie 3 "sshd on $NODE_IP does not answer within 30s (log: $S/log/sshd.log)"; }
  wait_until 60 server_healthy || { require_alive spire-server; sdie 3 "spire-server is not healthy within 60s (log: $S/log/spire-server.log)"; }
  start_syncer
  write_env
  slog "up: ssh $SSH_USER_NAME@$NODE_IP, spire-server $NODE_IP:8081 (trust domain $TRUST_DOMAIN); env: $S/spire-node.env"
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
  [ "$(id -u)" -eq 0 ] || sdie 2 "the test spire node needs root"
  # the syncer first: it would start spire-server again
  stop_daemon syncer
  stop_daemon spire-server
  stop_daemon sshd
  network_down
  rm -rf "$S"
  slog "down: nothing left"
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
