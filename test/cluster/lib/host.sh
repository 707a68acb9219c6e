# shellcheck shell=bash
# What the cluster changes on the host, recorded before `up` changes it and undone by `down`.
#
# Record ($S/host-before/, written once by the first `up` after a `down`):
#   sysctls.env      the sysctls the kubelet and the bridge plugin change
#   paths            the fixed host paths the node writes whatever its configured roots
#   iptables-<fam>-<table>   `iptables -S` of every table before up
#   ipsets           `ipset list -n` before up
#   cgroups          every directory directly under a cgroup hierarchy root before up

HOST_SYSCTLS=(kernel.panic kernel.panic_on_oops vm.overcommit_memory net.ipv4.ip_forward
  net.ipv4.conf.all.forwarding net.ipv6.conf.all.forwarding
  net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables
  fs.inotify.max_user_instances)
# Written by containerd, its shims, the CNI library, the kubelet, iptables and the
# controller-manager's host-path provisioner, whatever their configured roots.
HOST_FIXED_PATHS=(/run/containerd /var/lib/cni /var/lib/kubelet /var/log/containers
  /var/log/pods /usr/libexec/kubernetes /run/xtables.lock /tmp/hostpath_pv /var/run/netns
  /run/netns /etc/cni /opt/cni /run/runc)
IPT_TABLES=(filter nat mangle raw)
# Only what these own is ever removed: KUBE-* (kubelet, kube-router), CNI-* (portmap), DEPLOY-* (ours).
OWNED_CHAIN_RE='^(KUBE-|DEPLOY-|CNI-)'
OWNED_RULE_RE='KUBE-|DEPLOY-|CNI-|kube-router'
OWNED_IPSET_RE='(KUBE-|kube-router|inet6:)'

ipt_families() {
  command -v iptables >/dev/null && echo iptables
  command -v ip6tables >/dev/null && echo ip6tables
}

record_host() {
  local r="$S/host-before" fam t k
  [ -f "$r/complete" ] && return 0
  rm -rf "$r"
  mkdir -p "$r"
  for k in "${HOST_SYSCTLS[@]}"; do
    [ -e "/proc/sys/${k//.//}" ] && printf '%s=%s\n' "$k" "$(sysctl -n "$k")"
  done >"$r/sysctls.env"
  for k in "${HOST_FIXED_PATHS[@]}"; do [ -e "$k" ] && echo "$k"; done >"$r/paths"
  for fam in $(ipt_families); do
    for t in "${IPT_TABLES[@]}"; do
      "$fam" -w 5 -t "$t" -S 2>/dev/null | grep '^-' >"$r/$fam-$t" || true
    done
  done
  ipset list -n 2>/dev/null | sort >"$r/ipsets" || true
  for k in $(cgroup_roots); do
    find "$k" -mindepth 1 -maxdepth 1 -type d
  done | sort >"$r/cgroups"
  touch "$r/complete"
  log "host state recorded in $r"
}

# ---- network ----------------------------------------------------------------------

ip2int() { local IFS=.; read -r a b c d <<<"$1"; echo $(((a << 24) | (b << 16) | (c << 8) | d)); }
# overlaps A/LEN B/LEN
overlaps() {
  local a=${1%/*} al=${1#*/} b=${2%/*} bl=${2#*/} l
  [ "$al" = "$1" ] && al=32
  [ "$bl" = "$2" ] && bl=32
  l=$((al < bl ? al : bl))
  local mask=$(((0xffffffff << (32 - l)) & 0xffffffff))
  [ $(($(ip2int "$a") & mask)) -eq $(($(ip2int "$b") & mask)) ]
}

# Refuses addresses that clash with any route or address the host has (but ours).
check_addresses() {
  local dst dev rest want
  while read -r dst rest; do
    [ "$dst" = default ] && continue
    dev=$(sed -n 's/.*dev \([^ ]*\).*/\1/p' <<<"$rest")
    case $dev in "$NODE_BRIDGE" | "$CNI_BRIDGE") continue ;; esac
    for want in "$NODE_IP/32" "$POD_CIDR" "$SERVICE_CIDR"; do
      if overlaps "$dst" "$want"; then
        die 2 "$want clashes with the host route '$dst $rest'; set K8S_CLUSTER_NODE_IP / K8S_CLUSTER_POD_CIDR / K8S_CLUSTER_SERVICE_CIDR"
      fi
    done
  done < <(ip -4 route show table all type unicast 2>/dev/null; ip -4 -o addr show | awk '$2 != "'"$NODE_BRIDGE"'" && $2 != "'"$CNI_BRIDGE"'" {print $4, "dev", $2}')
}

ensure_node_address() {
  if ! ip link show "$NODE_BRIDGE" >/dev/null 2>&1; then
    check_addresses
    ip link add "$NODE_BRIDGE" type bridge
  fi
  ip -4 addr show dev "$NODE_BRIDGE" | grep -q " $NODE_IP/32 " ||
    ip addr add "$NODE_IP/32" dev "$NODE_BRIDGE"
  ip link set "$NODE_BRIDGE" up
}

# Pod traffic never leaves the machine: what the pods send to anything but the pod network
# is dropped when forwarded (traffic to the node's own addresses is not forwarded). In the
# mangle table, because kube-router's filter FORWARD chain comes first and ACCEPTs every
# packet that complies with the policies (no policy = complies), so a filter rule after it
# never sees them; mangle allows no REJECT, hence DROP.
# One exception, ahead of the DROP: the SPIRE server of a test spire node
# (test/spire/spire-node.sh: its netns addresses are in $SPIRE_NODES_CIDR, the server on tcp
# 8081), which the node pods' agents must reach (issue 10). Its replies are not pod traffic
# (the DROP matches the pod source only) and pass kube-router's filter FORWARD as
# ESTABLISHED. In the cluster's own chain, so it exists whether the spire node is up or not
# (either start order) and goes with the chain on `down`.
SPIRE_NODES_CIDR="${K8S_CLUSTER_SPIRE_NODES_CIDR:-10.253.0.0/16}"
SPIRE_SERVER_PORT=8081
ensure_pod_isolation() {
  local rule=(-s "$POD_CIDR" ! -d "$POD_CIDR" -j DROP)
  local spire=(-s "$POD_CIDR" -d "$SPIRE_NODES_CIDR" -p tcp --dport "$SPIRE_SERVER_PORT" -j RETURN)
  iptables -w 5 -t mangle -N DEPLOY-CLUSTER-EGRESS 2>/dev/null || true
  iptables -w 5 -t mangle -C DEPLOY-CLUSTER-EGRESS "${rule[@]}" 2>/dev/null ||
    iptables -w 5 -t mangle -A DEPLOY-CLUSTER-EGRESS "${rule[@]}"
  # first in the chain (-I 1), also in a chain made by an older `up` that has the DROP already
  iptables -w 5 -t mangle -C DEPLOY-CLUSTER-EGRESS "${spire[@]}" 2>/dev/null ||
    iptables -w 5 -t mangle -I DEPLOY-CLUSTER-EGRESS 1 "${spire[@]}"
  iptables -w 5 -t mangle -C FORWARD -j DEPLOY-CLUSTER-EGRESS 2>/dev/null ||
    iptables -w 5 -t mangle -I FORWARD 1 -j DEPLOY-CLUSTER-EGRESS
}

# ---- undo -------------------------------------------------------------------------

restore_iptables() {
  local r="$S/host-before" fam t line chain
  for fam in $(ipt_families); do
    for t in "${IPT_TABLES[@]}"; do
      local now before="$r/$fam-$t"
      now=$("$fam" -w 5 -t "$t" -S 2>/dev/null | grep '^-') || continue
      # 1. rules we added to chains that existed before (builtin ones: INPUT, FORWARD, ...)
      while IFS= read -r line; do
        [[ $line == -A\ * ]] || continue
        chain=$(awk '{print $2}' <<<"$line")
        [[ $chain =~ $OWNED_CHAIN_RE ]] && continue
        [[ $line =~ $OWNED_RULE_RE ]] || continue
        [ -f "$before" ] && grep -qxF -- "$line" "$before" && continue
        eval "\"\$fam\" -w 5 -t \"\$t\" -D ${line#-A }" 2>/dev/null ||
          log "could not delete '$line' from $fam $t"
      done <<<"$now"
      # 2. chains we created: flush all, then delete all
      local new=()
      while IFS= read -r line; do
        chain=${line#-N }
        [[ $chain =~ $OWNED_CHAIN_RE ]] || continue
        [ -f "$before" ] && grep -qxF -- "$line" "$before" && continue
        new+=("$chain")
      done < <(grep '^-N ' <<<"$now")
      for chain in "${new[@]}"; do "$fam" -w 5 -t "$t" -F "$chain" 2>/dev/null || true; done
      for chain in "${new[@]}"; do
        "$fam" -w 5 -t "$t" -X "$chain" 2>/dev/null || log "could not delete chain $chain ($fam $t)"
      done
    done
  done
}

restore_ipsets() {
  local r="$S/host-before" set
  while IFS= read -r set; do
    [ -n "$set" ] || continue
    [[ $set =~ $OWNED_IPSET_RE ]] || continue
    [ -f "$r/ipsets" ] && grep -qxF -- "$set" "$r/ipsets" && continue
    ipset destroy "$set" 2>/dev/null || log "could not destroy ipset $set"
  done < <(ipset list -n 2>/dev/null)
}

# Every systemd pod takes several inotify instances, and a user namespace's instances are
# also charged to the user that made it (root, via containerd) in the initial namespace: the
# default limit of 128 is gone after a dozen node pods ("Failed to create inotify object: Too
# many open files" in every systemd). Raised on `up` (recorded before), restored on `down`.
INOTIFY_INSTANCES=8192
raise_inotify_limit() {
  local k=fs.inotify.max_user_instances
  [ "$(sysctl -n "$k")" -ge "$INOTIFY_INSTANCES" ] || sysctl -q -w "$k=$INOTIFY_INSTANCES" >/dev/null ||
    log "could not raise $k to $INOTIFY_INSTANCES: systemd pods may fail with 'Too many open files'"
}

restore_sysctls() {
  local r="$S/host-before" line
  [ -f "$r/sysctls.env" ] || return 0
  # ip_forward first: writing it resets conf.all.forwarding, which follows.
  while IFS= read -r line; do
    [ -n "$line" ] || continue
    local k=${line%%=*} v=${line#*=}
    [ "$(sysctl -n "$k" 2>/dev/null)" = "$v" ] || sysctl -q -w "$k=$v" >/dev/null ||
      log "could not restore $k=$v"
  done <"$r/sysctls.env"
}

# Every cgroup directory created since `up` under a hierarchy root, deepest first.
remove_cgroups() {
  local r="$S/host-before" root dir
  for root in $(cgroup_roots); do
    while IFS= read -r dir; do
      [ -f "$r/cgroups" ] && grep -qxF -- "$dir" "$r/cgroups" && continue
      case ${dir##*/} in kubepods | kubepods.slice) ;; *) continue ;; esac
      find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null ||
        log "could not remove cgroup $dir (processes left in it?)"
    done < <(find "$root" -mindepth 1 -maxdepth 1 -type d)
  done
}

# PIDs of every process in the cgroups the kubelet made (containers and their children).
pod_pids() {
  local root
  for root in $(cgroup_roots); do
    [ -d "$root/kubepods" ] && find "$root/kubepods" -name cgroup.procs -exec cat {} + 2>/dev/null
  done | sort -un
}

remove_fixed_paths() {
  local r="$S/host-before" p
  for p in "${HOST_FIXED_PATHS[@]}"; do
    [ -e "$p" ] || continue
    [ -f "$r/paths" ] && grep -qxF -- "$p" "$r/paths" && continue
    unmount_under "$p"
    rm -rf --one-file-system "$p" || log "could not remove $p"
  done
}

remove_links() {
  local l
  for l in "$CNI_BRIDGE" "$NODE_BRIDGE"; do
    ip link show "$l" >/dev/null 2>&1 && { ip link delete "$l" || log "could not delete link $l"; }
  done
  return 0
}
