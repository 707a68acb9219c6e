#!/usr/bin/env bash
# By hand, against the running local cluster (npm run cluster:up) and registry: the node
# image variant `spire` in a real node pod (systemd runtime class, hostUsers: false), with a
# hand-written hand-off, ConfigMap and Deployment that follow the graph's contract
# (stacks/spire-identity.ts, stacks/spire-pod.ts). Not part of any test suite. Checks:
#   1. the agent attests with k8s_psat and root on the node holds spiffe://fediversity/host/<ns>-n1
#   2. rotate-ca + a new bundle.crt in the ConfigMap: the agent restarts with it and holds the SVID
#   3. the spire node made again (down + up: new CA) + new ConfigMap + hand-off: it attests again
# and the node stays `running` throughout. Cleans up (namespace, RBAC, spire node) on exit.
#   bash test/spire/cluster-checks/spire-agent-pod.by-hand.sh [NAMESPACE]   (default helper-a-x)
# Its own spire node: netns dpl-spck, 10.253.77.0/30 (SPIRE_NODE_NETNS, SPIRE_NODE_HOST_IP,
# SPIRE_NODE_IP override them), state under a temporary directory.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
NS=${1:-helper-a-x} NODE=n1
export LOG_TAG=check
# shellcheck source=../../../toolchain/versions.env
. "$REPO/toolchain/versions.env"
for f in paths log; do
  # shellcheck source=/dev/null
  . "$REPO/toolchain/lib/$f.sh"
done
CLUSTER_STATE=$DEPLOY_STATE_DIR
export KUBECONFIG=${KUBE_CONFIG_PATH:-$CLUSTER_STATE/cluster/admin.kubeconfig}
KUBECTL=$DEPLOY_CACHE_DIR/kubernetes/$KUBERNETES_VERSION/kubectl
REGISTRY=${K8S_REGISTRY:-127.0.0.1:5000}
tmp=$(mktemp -d)
export DEPLOY_STATE_DIR=$tmp/state SPIRE_NODE_NETNS=${SPIRE_NODE_NETNS:-dpl-spck}
export SPIRE_NODE_HOST_IP=${SPIRE_NODE_HOST_IP:-10.253.77.1} SPIRE_NODE_IP=${SPIRE_NODE_IP:-10.253.77.2}
export SPIRE_NODE_CLUSTERS="$NS:node-$NODE"
kc() { "$KUBECTL" "$@"; }
cleanup() {
  kc delete ns "$NS" --wait=false >/dev/null 2>&1 || true
  kc delete clusterrolebinding "deploy-spire-server-$NS" "deploy-spire-server-$NS-auth-delegator" >/dev/null 2>&1 || true
  kc delete clusterrole "deploy-spire-server-$NS" >/dev/null 2>&1 || true
  bash "$REPO/test/spire/spire-node.sh" down >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=/dev/null
node_env() { . "$DEPLOY_STATE_DIR/spire-node/spire-node.env"; }
on_node() {
  ssh -i "$SSH_PRIVATE_KEY_FILE" -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=yes \
    -o UserKnownHostsFile="$SPIRE_NODE_KNOWN_HOSTS" "root@$K8S_SPIRE_NODE" "$@"
}

handoff() { # RBAC, then the kubeconfig through ssh's stdin and the drop-file (as the graph)
  kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: ServiceAccount
metadata: {name: spire-server, namespace: $NS}
automountServiceAccountToken: false
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: node-$NODE, namespace: $NS}
automountServiceAccountToken: false
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: deploy-spire-server-$NS}
rules: [{apiGroups: [""], resources: [nodes], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: deploy-spire-server-$NS}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: deploy-spire-server-$NS}
subjects: [{kind: ServiceAccount, name: spire-server, namespace: $NS}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: deploy-spire-server-$NS-auth-delegator}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:auth-delegator}
subjects: [{kind: ServiceAccount, name: spire-server, namespace: $NS}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: spire-server, namespace: $NS}
rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: spire-server, namespace: $NS}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: spire-server}
subjects: [{kind: ServiceAccount, name: spire-server, namespace: $NS}]
EOF
  local server ca token entries
  server=$(kc config view --minify -o jsonpath='{.clusters[0].cluster.server}')
  ca=$(kc config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
  entries=$(printf '{"entries":[{"spiffe_id":"spiffe://fediversity/k8s/%s/%s/node-%s","parent_id":"spiffe://fediversity/spire/server","selectors":[{"type":"k8s_psat","value":"cluster:%s"},{"type":"k8s_psat","value":"agent_ns:%s"},{"type":"k8s_psat","value":"agent_sa:node-%s"}]},{"spiffe_id":"spiffe://fediversity/host/%s-%s","parent_id":"spiffe://fediversity/k8s/%s/%s/node-%s","selectors":[{"type":"unix","value":"uid:0"}]}]}' \
    "$NS" "$NS" "$NODE" "$NS" "$NS" "$NODE" "$NS" "$NODE" "$NS" "$NS" "$NODE" | base64 -w0)
  token=$(kc -n "$NS" create token spire-server --duration 8760h)
  printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: %s\n  cluster:\n    server: %s\n    certificate-authority-data: %s\nusers:\n- name: spire-server\n  user:\n    token: %s\ncontexts:\n- name: %s\n  context:\n    cluster: %s\n    user: spire-server\ncurrent-context: %s\n' \
    "$NS" "$server" "$ca" "$token" "$NS" "$NS" "$NS" |
    on_node "sh -c 'set -eu; umask 077; d=/var/lib/spire/k8s/$NS; mkdir -p \$d/entries; cat >\$d/kubeconfig; rm -f \$d/entries/*.json; printf %s $entries | base64 -d >\$d/entries/$NODE.json'"
}

config_map() { # from the spire node's bundle, as read at plan time
  local bundle
  bundle=$(on_node -n spire-server bundle show -format pem)
  kc -n "$NS" create configmap spire-agent --from-literal=bundle.crt="$bundle" --from-literal=server_address="$K8S_SPIRE_NODE" \
    --from-literal=server_port=8081 --from-literal=trust_domain=fediversity --from-literal=cluster="$NS" \
    --dry-run=client -o yaml | kc apply -f - >/dev/null
}

deployment() {
  kc apply -f - >/dev/null <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: $NODE, namespace: $NS, labels: {app.kubernetes.io/name: $NODE}}
spec:
  replicas: 1
  strategy: {type: Recreate}
  selector: {matchLabels: {app.kubernetes.io/name: $NODE}}
  template:
    metadata: {labels: {app.kubernetes.io/name: $NODE}}
    spec:
      runtimeClassName: systemd
      hostUsers: false
      serviceAccountName: node-$NODE
      automountServiceAccountToken: false
      enableServiceLinks: false
      containers:
      - name: node
        image: $1
        env: [{name: container, value: docker}, {name: container_uuid, value: "$(cat /proc/sys/kernel/random/uuid)"}]
        volumeMounts:
        - {name: state, mountPath: /var/lib}
        - {name: run, mountPath: /run}
        - {name: run-lock, mountPath: /run/lock}
        - {name: tmp, mountPath: /tmp}
        - {name: spire-token, mountPath: /etc/spire-agent/k8s-token, readOnly: true}
        - {name: spire-bundle, mountPath: /etc/spire-agent/bundle, readOnly: true}
        readinessProbe: {exec: {command: [/bin/sh, -c, '[ "\$(systemctl is-system-running)" = running ]']}, periodSeconds: 2}
      volumes:
      - {name: state, emptyDir: {}}
      - {name: run, emptyDir: {medium: Memory}}
      - {name: run-lock, emptyDir: {medium: Memory}}
      - {name: tmp, emptyDir: {medium: Memory}}
      - name: spire-token
        projected: {defaultMode: 0400, sources: [{serviceAccountToken: {audience: spire-server, expirationSeconds: 3600, path: token}}]}
      - {name: spire-bundle, configMap: {name: spire-agent, defaultMode: 0444}}
EOF
  kc -n "$NS" rollout status "deploy/$NODE" --timeout=180s >/dev/null
}

in_node() { kc -n "$NS" exec "deploy/$NODE" -- "$@"; }
svid() { in_node timeout 10 spire-agent api fetch x509 -socketPath /run/spire-agent/public/api.sock 2>/dev/null | sed -n 's/^SPIFFE ID:[[:space:]]*//p'; }
want_svid() { # SECONDS: the host entry's SVID within SECONDS, the node running
  local deadline=$((SECONDS + $1)) got=""
  while [ "$SECONDS" -lt "$deadline" ]; do
    got=$(svid) || true
    [ "$got" = "spiffe://fediversity/host/$NS-$NODE" ] && break
    sleep 3
  done
  [ "$got" = "spiffe://fediversity/host/$NS-$NODE" ] || { log "FAIL: SVID '${got:-none}'"; in_node journalctl -u spire-agent --no-pager | tail -n 15 >&2; exit 1; }
  [ "$(in_node systemctl is-system-running)" = running ] || { log "FAIL: the node is not running"; exit 1; }
  log "ok: root on the node holds $got (node running)"
}
bundle_certs() { in_node grep -c BEGIN /run/spire-agent/bundle.crt; }

eval "$(bash "$REPO/test/cluster/images/build.sh" spire)"
skopeo copy -q --dest-tls-verify=false "docker-archive:$ARCHIVE" "docker://$REGISTRY/$NS/$NODE:$TAG"
bash "$REPO/test/spire/spire-node.sh" up >/dev/null
node_env
kc create ns "$NS" >/dev/null
handoff
config_map
deployment "$REGISTRY/$NS/$NODE:$TAG"
log "1. first attestation"
want_svid 60
on_node -n spire-server agent list | grep -q 'Attestation type  : k8s_psat' && log "ok: agent list shows k8s_psat"

log "2. CA rotation"
before=$(bundle_certs)
bash "$REPO/test/spire/spire-node.sh" rotate-ca >&2
config_map
t0=$SECONDS
until [ "$(bundle_certs)" -gt "$before" ]; do
  [ $((SECONDS - t0)) -lt 150 ] || { log "FAIL: the agent did not get the new bundle within 150 s"; exit 1; }
  sleep 3
done
log "ok: the agent restarted with the new bundle $((SECONDS - t0)) s after the ConfigMap update"
want_svid 60

log "3. spire node made again"
bash "$REPO/test/spire/spire-node.sh" down >/dev/null 2>&1
bash "$REPO/test/spire/spire-node.sh" up >/dev/null 2>&1
node_env
sleep 15
[ "$(in_node systemctl is-system-running)" = running ] && log "ok: node running while its agent cannot attest"
handoff
config_map
t0=$SECONDS
want_svid 180
log "ok: attested again $((SECONDS - t0)) s after the new hand-off and ConfigMap"
log "all checks passed"
