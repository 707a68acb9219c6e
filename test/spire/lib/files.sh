# shellcheck shell=bash
# The node's files: its root ($S/root: machine ID, passwd, sshd config and host key,
# server.conf), the deployer's ssh key and known_hosts ($S/ssh), and $S/spire-node.env;
# ssh_node and the health checks.

hcl_clusters() {
  local entry ns sas first=1 sa list
  printf 'clusters = {\n'
  local cluster
  for entry in $CLUSTERS; do
    cluster=${entry%%:*}
    ns=${cluster%%.*}
    sas=${entry#*:}
    [[ $cluster =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)?$ ]] || die 2 "SPIRE_NODE_CLUSTERS: \"$cluster\" is not <namespace> or <namespace>.<node>"
    list=""
    first=1
    for sa in ${sas//,/ }; do
      [[ $sa =~ ^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$ ]] || die 2 "SPIRE_NODE_CLUSTERS: \"$sa\" is not a service account name"
      [ $first -eq 1 ] || list+=", "
      list+="\"$ns:$sa\""
      first=0
    done
    [ -n "$list" ] || die 2 "SPIRE_NODE_CLUSTERS: namespace $ns has no service account (<ns>:<sa>[,<sa>...])"
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
  # Mount points for the programs (start_node_daemon binds the cache's binaries onto them).
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


ssh_node() {
  ssh -n -i "$S/ssh/id_ed25519" -o IdentitiesOnly=yes -o BatchMode=yes \
    -o StrictHostKeyChecking=yes -o UserKnownHostsFile="$S/ssh/known_hosts" \
    -o ConnectTimeout=5 "$SSH_USER_NAME@$NODE_IP" "$@"
}

sshd_answers() { ssh_node true 2>/dev/null; }
server_healthy() {
  ip netns exec "$NETNS" "$SPIRE_SERVER_BIN" healthcheck -socketPath "$S/root/tmp/spire-server/private/api.sock" >/dev/null 2>&1
}
