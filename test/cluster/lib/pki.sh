# shellcheck shell=bash
# One CA and every certificate of the cluster (openssl, EC P-256: fast to make), plus the
# kubeconfigs. Made once; kept by `down` (nothing on the host depends on them).
#
#   $S/pki/ca.{crt,key}         the cluster CA (client and serving certificates)
#   $S/pki/<name>.{crt,key}     apiserver, apiserver-kubelet-client, admin, controller-manager,
#                               scheduler, kubelet (client), kubelet-serving, kube-router
#   $S/pki/sa.{key,pub}         service-account signing key
#   $S/<name>.kubeconfig        admin (KUBE_CONFIG_PATH), controller-manager, scheduler,
#                               kubelet, kube-router

# make_cert NAME SUBJECT KIND [SANS]   KIND: client | server
make_cert() {
  local name=$1 subj=$2 kind=$3 sans=${4:-} d="$S/pki"
  [ -s "$d/$name.crt" ] && return 0
  openssl ecparam -name prime256v1 -genkey -noout -out "$d/$name.key" 2>/dev/null
  {
    echo "basicConstraints=critical,CA:FALSE"
    if [ "$kind" = server ]; then
      echo "keyUsage=critical,digitalSignature,keyEncipherment"
      echo "extendedKeyUsage=serverAuth"
      echo "subjectAltName=$sans"
    else
      echo "keyUsage=critical,digitalSignature,keyEncipherment"
      echo "extendedKeyUsage=clientAuth"
    fi
  } >"$d/$name.ext"
  openssl req -new -key "$d/$name.key" -subj "$subj" -out "$d/$name.csr" 2>/dev/null
  openssl x509 -req -in "$d/$name.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
    -days 3650 -sha256 -extfile "$d/$name.ext" -out "$d/$name.crt.tmp" 2>/dev/null
  mv "$d/$name.crt.tmp" "$d/$name.crt"
  rm -f "$d/$name.csr" "$d/$name.ext"
}

# write_kubeconfig FILE USER CERT-NAME
write_kubeconfig() {
  local file=$1 user=$2 cert=$3 d="$S/pki"
  cat >"$file.tmp" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: deploy-local
  cluster:
    server: https://$NODE_IP:$API_PORT
    certificate-authority-data: $(base64 -w0 "$d/ca.crt")
users:
- name: $user
  user:
    client-certificate-data: $(base64 -w0 "$d/$cert.crt")
    client-key-data: $(base64 -w0 "$d/$cert.key")
contexts:
- name: $user@deploy-local
  context:
    cluster: deploy-local
    user: $user
current-context: $user@deploy-local
KUBECONFIG
  chmod 0600 "$file.tmp"
  mv "$file.tmp" "$file"
}

ensure_pki() {
  local d="$S/pki"
  mkdir -p "$d"
  chmod 0700 "$d"
  if [ ! -s "$d/ca.crt" ]; then
    openssl ecparam -name prime256v1 -genkey -noout -out "$d/ca.key" 2>/dev/null
    openssl req -x509 -new -key "$d/ca.key" -subj "/CN=deploy-local-ca" -days 3650 -sha256 \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
      -out "$d/ca.crt.tmp" 2>/dev/null
    mv "$d/ca.crt.tmp" "$d/ca.crt"
  fi
  if [ ! -s "$d/sa.pub" ]; then
    openssl ecparam -name prime256v1 -genkey -noout -out "$d/sa.key" 2>/dev/null
    openssl ec -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
  fi
  make_cert apiserver "/CN=kube-apiserver" server \
    "IP:$NODE_IP,IP:127.0.0.1,IP:$SERVICE_API_IP,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  make_cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" client
  make_cert admin "/O=system:masters/CN=deploy-admin" client
  make_cert controller-manager "/CN=system:kube-controller-manager" client
  make_cert scheduler "/CN=system:kube-scheduler" client
  make_cert kubelet "/O=system:nodes/CN=system:node:$NODE_NAME" client
  make_cert kubelet-serving "/CN=$NODE_NAME" server "IP:$NODE_IP,DNS:$NODE_NAME"
  make_cert kube-router "/CN=system:kube-router" client
  # Kubeconfigs are rewritten each time: they carry the node address, which may be overridden.
  write_kubeconfig "$KUBECONFIG_ADMIN" deploy-admin admin
  write_kubeconfig "$S/controller-manager.kubeconfig" system:kube-controller-manager controller-manager
  write_kubeconfig "$S/scheduler.kubeconfig" system:kube-scheduler scheduler
  write_kubeconfig "$S/kubelet.kubeconfig" "system:node:$NODE_NAME" kubelet
  write_kubeconfig "$S/kube-router.kubeconfig" system:kube-router kube-router
}
