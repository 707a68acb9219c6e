# shellcheck shell=bash
# The node's network: netns $NETNS, a veth pair ($VETH_HOST, $HOST_IP/30 on the host; eth0,
# $NODE_IP/30 in the netns, default route via the host).

netns_exists() { ip netns list | awk '{print $1}' | grep -qx "$NETNS"; }

check_addresses_free() {
  # Refuse addresses the host already uses or routes somewhere other than the default route.
  local ip
  for ip in "$HOST_IP" "$NODE_IP"; do
    if ip -o addr show | awk '{print $4}' | cut -d/ -f1 | grep -qx "$ip"; then
      die 2 "address $ip is already on an interface of this host; set SPIRE_NODE_HOST_IP/SPIRE_NODE_IP"
    fi
    if ip route show to match "$ip" | grep -qv '^default'; then
      die 2 "address $ip is already routed on this host ($(ip route show to match "$ip" | grep -v '^default' | head -n1)); set SPIRE_NODE_HOST_IP/SPIRE_NODE_IP"
    fi
  done
}

network_up() {
  if netns_exists; then
    log "netns $NETNS present"
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
  log "netns $NETNS: $NODE_IP/30 via $VETH_HOST ($HOST_IP)"
}

network_down() {
  # Deleting the netns deletes its veth end, which deletes the pair.
  if netns_exists; then ip netns del "$NETNS"; fi
  # The kernel removes the pair asynchronously: it may vanish between the check and the del.
  if ip link show "$VETH_HOST" >/dev/null 2>&1; then
    ip link del "$VETH_HOST" 2>/dev/null || ! ip link show "$VETH_HOST" >/dev/null 2>&1 ||
      die 3 "cannot delete the link $VETH_HOST"
  fi
}
