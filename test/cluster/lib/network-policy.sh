# shellcheck shell=bash
# Stage (d): kube-router with only its firewall on, enforcing NetworkPolicy with iptables
# and ipsets. v2.1.0 is the only release the module proxy serves; security flaws are
# reported for it, acceptable for this loopback-only test cluster (README).

start_kube_router() {
  # Health and metrics ports off: nothing of the test cluster listens beyond the node.
  start_daemon kube-router env PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    "$KUBE_ROUTER_BIN" --run-firewall=true --run-router=false --run-service-proxy=false \
    --kubeconfig "$S/kube-router.kubeconfig" --hostname-override "$NODE_NAME" \
    --service-cluster-ip-range "$SERVICE_CIDR" --enable-ipv6=false \
    --health-port 0 --metrics-port 0
}

# kube-router's first sync installs its chain, jumped to from FORWARD.
kube_router_synced() {
  iptables -w 5 -S FORWARD 2>/dev/null | grep -q -- '-j KUBE-ROUTER-FORWARD'
}
kube_router_synced_or_dead() { require_alive kube-router; kube_router_synced; }
