# shellcheck shell=bash
# Stage (a): etcd, kube-apiserver (Node,RBAC), kube-controller-manager (node CIDRs, host-path
# provisioner), kube-scheduler, and the cluster objects they need (manifests/).

etcd_healthy() {
  curl -fsS -m 2 "http://127.0.0.1:$ETCD_CLIENT_PORT/health" 2>/dev/null | grep -q '"health":"true"'
}

start_etcd() {
  mkdir -p "$S/etcd"
  chmod 0700 "$S/etcd"
  # Loopback only, plain http: a single-member test store nobody else can reach.
  # --unsafe-no-fsync: a throwaway test cluster; fsync per write dominates on slow disks.
  start_daemon etcd "$ETCD_BIN" --name deploy --data-dir "$S/etcd/data" \
    --listen-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" \
    --advertise-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "deploy=http://127.0.0.1:$ETCD_PEER_PORT" \
    --unsafe-no-fsync --log-level warn
}

api_curl() { # PATH: GET on the API server as the admin
  curl -fsS -m 3 --cacert "$S/pki/ca.crt" --cert "$S/pki/admin.crt" --key "$S/pki/admin.key" \
    "https://$NODE_IP:$API_PORT$1" 2>/dev/null
}

apiserver_ready() { [ "$(api_curl /readyz)" = ok ]; }

start_apiserver() {
  local p="$S/pki"
  start_daemon kube-apiserver "$K8S_BIN/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$ETCD_CLIENT_PORT" \
    --bind-address "$NODE_IP" --advertise-address "$NODE_IP" --secure-port "$API_PORT" \
    --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" \
    --client-ca-file "$p/ca.crt" \
    --kubelet-client-certificate "$p/apiserver-kubelet-client.crt" \
    --kubelet-client-key "$p/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types InternalIP \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$p/sa.pub" --service-account-signing-key-file "$p/sa.key" \
    --service-cluster-ip-range "$SERVICE_CIDR" \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
    --allow-privileged=true --profiling=false
}

controller_manager_healthy() {
  curl -ksS -m 2 https://127.0.0.1:10257/healthz 2>/dev/null | grep -qx ok
}
scheduler_healthy() {
  curl -ksS -m 2 https://127.0.0.1:10259/healthz 2>/dev/null | grep -qx ok
}

start_controller_manager() {
  local kc="$S/controller-manager.kubeconfig" p="$S/pki"
  start_daemon kube-controller-manager "$K8S_BIN/kube-controller-manager" \
    --kubeconfig "$kc" --authentication-kubeconfig "$kc" --authorization-kubeconfig "$kc" \
    --bind-address 127.0.0.1 --secure-port 10257 --leader-elect=false \
    --controllers '*' --use-service-account-credentials \
    --root-ca-file "$p/ca.crt" --service-account-private-key-file "$p/sa.key" \
    --cluster-signing-cert-file "$p/ca.crt" --cluster-signing-key-file "$p/ca.key" \
    --allocate-node-cidrs --cluster-cidr "$POD_CIDR" --node-cidr-mask-size 24 \
    --service-cluster-ip-range "$SERVICE_CIDR" \
    --enable-hostpath-provisioner --profiling=false
}

start_scheduler() {
  local kc="$S/scheduler.kubeconfig"
  start_daemon kube-scheduler "$K8S_BIN/kube-scheduler" \
    --kubeconfig "$kc" --authentication-kubeconfig "$kc" --authorization-kubeconfig "$kc" \
    --bind-address 127.0.0.1 --secure-port 10259 --leader-elect=false --profiling=false
}

kubectl_admin() { "$KUBECTL" --kubeconfig "$KUBECONFIG_ADMIN" --request-timeout 20s "$@"; }

# The cluster objects of every stage: default StorageClass, RuntimeClass, kube-router's RBAC.
apply_manifests() {
  kubectl_admin apply --server-side --field-manager deploy-cluster --force-conflicts \
    -f "$CLUSTER_HERE/manifests/" >/dev/null
}

up_control_plane() {
  start_etcd
  wait_until 30 etcd_ready_or_dead || die 3 "etcd did not become healthy within 30 s (log: $S/log/etcd.log)"
  start_apiserver
}

etcd_ready_or_dead() { require_alive etcd; etcd_healthy; }
apiserver_ready_or_dead() { require_alive kube-apiserver; apiserver_ready; }
