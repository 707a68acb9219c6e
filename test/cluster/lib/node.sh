# shellcheck shell=bash
# Stage (b): containerd (+ the runc shim), the CNI bridge, the pause image, the kubelet.
# Stage (c) lives here too: containerd's runtime `systemd` (the RuntimeClass handler).

node_dirs() {
  echo "$RUN_DIR" >"$S/run-dir"
  mkdir -p "$RUN_DIR/containerd-state" "$RUN_DIR/runc"
  chmod 0711 "$RUN_DIR" "$RUN_DIR/containerd-state"
  mkdir -p "$S/containerd/root" "$S/containerd/opt" \
    "$S/cni/net.d" "$S/cni/ipam" "$S/certs.d/_default" "$S/kubelet" "$S/kubelet-pki" \
    "$S/kubelet-plugins" "$S/pod-logs" "$S/bin"
  # User-namespaced sandboxes traverse these as an unmapped uid ("remount-private ...
  # permission denied" with 0700).
  chmod 0711 "$S" "$S/containerd" "$S/containerd/root"
}

# Stage (c): $S/bin holds `runc` and `systemd-runc` (the wrapper) side by side; the wrapper
# runs the `runc` beside the name it was started as.
write_runtime_links() {
  ln -sfn "$RUNC_BIN" "$S/bin/runc"
  ln -sfn "$SYSTEMD_RUNTIME_BIN" "$S/bin/systemd-runc"
}

# runtime_toml NAME BINARY: containerd's runtime NAME, runc's shim running $S/bin/BINARY
# (`runc` itself, or the `systemd` RuntimeClass handler's wrapper).
runtime_toml() {
  cat <<TOML
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.$1]
        runtime_type = 'io.containerd.runc.v2'
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.$1.options]
          BinaryName = '$S/bin/$2'
          Root = '$RUN_DIR/runc'
          SystemdCgroup = false
TOML
}

write_containerd_config() {
  cat >"$S/containerd.toml.tmp" <<TOML
# Written by test/cluster/cluster.sh up. Checked shape: reference notes on the node.
version = 3
root = '$S/containerd/root'
state = '$RUN_DIR/containerd-state'
[grpc]
  address = '$CONTAINERD_SOCK'
[ttrpc]
  address = '$CONTAINERD_SOCK.ttrpc'
[plugins]
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = 'overlayfs'
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = '$PAUSE_IMAGE'
    [plugins.'io.containerd.cri.v1.images'.registry]
      # hosts.toml per registry: the loopback registry over plain http; _default sends
      # every other registry to a closed loopback port, so nothing is pulled from outside.
      config_path = '$S/certs.d'
  [plugins.'io.containerd.cri.v1.runtime']
    netns_mounts_under_state_dir = true
    enable_cdi = false
    # No process here may lower oom_score_adj (CAP_SYS_RESOURCE is not in the bounding
    # set); without this every sandbox fails "can't get final child's PID from pipe: EOF".
    restrict_oom_score_adj = true
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = 'runc'
$(runtime_toml runc runc)
$(runtime_toml systemd systemd-runc)
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ['$CNI_DIR']
      conf_dir = '$S/cni/net.d'
  [plugins.'io.containerd.internal.v1.opt']
    path = '$S/containerd/opt'
  [plugins.'io.containerd.nri.v1.nri']
    disable = true
TOML
  mv "$S/containerd.toml.tmp" "$S/containerd.toml"
  # Nothing listens on port 9 (discard) of loopback: pulls from other registries fail at once.
  cat >"$S/certs.d/_default/hosts.toml" <<'TOML'
server = "http://127.0.0.1:9"
[host."http://127.0.0.1:9"]
  capabilities = ["pull", "resolve"]
TOML
}

# write_registry_hosts HOST:PORT: containerd pulls from the loopback registry over http.
write_registry_hosts() {
  local reg=$1
  mkdir -p "$S/certs.d/$reg"
  cat >"$S/certs.d/$reg/hosts.toml.tmp" <<TOML
server = "http://$reg"
[host."http://$reg"]
  capabilities = ["pull", "resolve"]
  skip_verify = true
TOML
  mv "$S/certs.d/$reg/hosts.toml.tmp" "$S/certs.d/$reg/hosts.toml"
}

write_cni_config() {
  cat >"$S/cni/net.d/10-deploy.conflist.tmp" <<JSON
{
  "cniVersion": "1.0.0",
  "name": "deploy-pods",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$CNI_BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{ "subnet": "$NODE_POD_SUBNET", "gateway": "$NODE_POD_GATEWAY" }]],
        "routes": [{ "dst": "0.0.0.0/0" }],
        "dataDir": "$S/cni/ipam"
      }
    },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
JSON
  mv "$S/cni/net.d/10-deploy.conflist.tmp" "$S/cni/net.d/10-deploy.conflist"
}

containerd_ready() {
  "$CONTAINERD_DIR/ctr" --address "$CONTAINERD_SOCK" --timeout 2s version >/dev/null 2>&1
}
containerd_ready_or_dead() { require_alive containerd; containerd_ready; }

start_containerd() {
  # PATH: the shim (containerd-shim-runc-v2) is found on it; CNI plugins need iptables.
  start_daemon containerd env PATH="$CONTAINERD_DIR:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    "$CONTAINERD_DIR/containerd" --config "$S/containerd.toml"
}

ctr_k8s() { "$CONTAINERD_DIR/ctr" --address "$CONTAINERD_SOCK" --timeout 60s -n k8s.io "$@"; }

# The pause image: catatonit (Debian package) in pause mode, one layer, a docker archive
# built once into the cache and imported when containerd does not have it.
build_pause_archive() {
  local v key writer="$CLUSTER_HERE/images/lib/docker-archive.sh"
  v=$(dpkg-query -W -f '${Version}' catatonit)
  key="pause/catatonit-$v-$(sha256sum <"$writer" | cut -c1-12).tar"
  build_once "$key" bash "$writer" "$PAUSE_IMAGE" \
    --file "$(command -v catatonit)":/catatonit --entrypoint '["/catatonit","-P"]' >&2
  PAUSE_ARCHIVE="$DEPLOY_CACHE_DIR/$key"
}

ensure_pause_image() {
  if ctr_k8s images ls -q "name==$PAUSE_IMAGE" 2>/dev/null | grep -qxF "$PAUSE_IMAGE"; then
    return 0
  fi
  build_pause_archive
  ctr_k8s images import --no-unpack=false "$PAUSE_ARCHIVE" >/dev/null
  log "pause image $PAUSE_IMAGE imported"
}

write_kubelet_config() {
  echo "nameserver $NODE_IP" >"$S/resolv.conf"
  cat >"$S/kubelet.yaml.tmp" <<YAML
# Written by test/cluster/cluster.sh up. Checked shape: reference notes on the node.
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false            # the host is cgroup v1; without this the kubelet exits
cgroupDriver: cgroupfs
cgroupsPerQOS: true
enforceNodeAllocatable: [pods]
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
podLogsDir: $S/pod-logs
volumePluginDir: $S/kubelet-plugins
resolvConf: $S/resolv.conf
failSwapOn: false
address: $NODE_IP
healthzBindAddress: 127.0.0.1
healthzPort: 10248
readOnlyPort: 0
tlsCertFile: $S/pki/kubelet-serving.crt
tlsPrivateKeyFile: $S/pki/kubelet-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $S/pki/ca.crt}
authorization:
  mode: Webhook
clusterDomain: cluster.local
evictionHard: {memory.available: 100Mi, nodefs.available: 1Gi, imagefs.available: 1Gi}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
# room for the bench's 200-node group (issue 32's P10) beside the tests' pods; the node's pod
# range is a /24 (control-plane.sh: --node-cidr-mask-size 24), so 250 addresses at most
maxPods: 250
YAML
  mv "$S/kubelet.yaml.tmp" "$S/kubelet.yaml"
}

kubelet_healthy() { curl -fsS -m 2 http://127.0.0.1:10248/healthz 2>/dev/null | grep -qx ok; }

start_kubelet() {
  start_daemon kubelet env PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    "$K8S_BIN/kubelet" --config "$S/kubelet.yaml" --kubeconfig "$S/kubelet.kubeconfig" \
    --root-dir "$S/kubelet" --cert-dir "$S/kubelet-pki" \
    --hostname-override "$NODE_NAME" --node-ip "$NODE_IP"
}

node_ready() {
  [ "$(kubectl_admin get node "$NODE_NAME" \
    -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}
node_ready_or_dead() { require_alive kubelet; require_alive containerd; node_ready; }
