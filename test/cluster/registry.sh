#!/usr/bin/env bash
# A container registry on loopback (plain http, or https with --tls) for the local cluster:
# Debian's docker-registry (distribution 2.8), its data kept between runs.
#
#   test/cluster/registry.sh up     [--name NAME] [--port PORT] [--auth USER[:PASS]] [--tls]
#   test/cluster/registry.sh down   [--name NAME] [--purge]
#   test/cluster/registry.sh status [--name NAME]
#
# NAME (default `local`) keeps several registries apart, e.g. one with basic auth for the
# REGISTRY_AUTH_FILE tests. Everything of NAME lives in
#   $DEPLOY_STATE_DIR/registry/NAME/   (toolchain/lib/paths.sh)
#   (config.yml, data/, registry.pid, registry.log, port, htpasswd, tls/)
# PORT: --port, else the port NAME last ran on, else for `local` K8S_LOCAL_REGISTRY_PORT
# (default 5000); another NAME needs --port on its first `up`.
# --auth USER:PASS or --auth USER (password read from stdin) turns on HTTP basic auth
# (bcrypt htpasswd); later `up`s of NAME keep it until `down --purge`.
# --tls serves https with a certificate for 127.0.0.1 from a CA of NAME's own, made with
# openssl into tls/ (ca.crt, the CA's certificate; server.crt and server.key, the registry's;
# the CA's key, ca.key, signs nothing else); later `up`s keep it until `down --purge`.
#
# `up` is idempotent: a running registry of NAME on the same port is left alone. It prints
#   export K8S_REGISTRY=127.0.0.1:<port>
#   export K8S_REGISTRY_TLS_VERIFY=false
# or with --tls
#   export K8S_REGISTRY=127.0.0.1:<port>
#   export K8S_REGISTRY_TLS_VERIFY=true
#   export K8S_REGISTRY_CA_FILE=<dir>/tls/ca.crt
# `status` prints one line and exits 0 when NAME is running, 1 when it is not.
# `down` stops it (TERM, then KILL after 10 s) and keeps the data; --purge deletes it too.
# Its daemon (pidfile, log, stop) is toolchain/lib/daemon.sh's.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LOG_TAG=registry
# shellcheck source=images/lib/common.sh
. "$HERE/images/lib/common.sh"
# shellcheck source=../../toolchain/lib/daemon.sh
. "$HERE/../../toolchain/lib/daemon.sh"

usage() {
  sed -n '5,7p' "${BASH_SOURCE[0]}" | sed 's/^# *//' >&2
  exit 2
}

verb=${1:-}
[ "$#" -gt 0 ] && shift
name=local port="" auth="" tls=0 purge=0
while [ "$#" -gt 0 ]; do
  case $1 in
    --name) name=${2:?--name needs a value}; shift 2 ;;
    --port) port=${2:?--port needs a value}; shift 2 ;;
    --auth) auth=${2:?--auth needs USER or USER:PASS}; shift 2 ;;
    --tls) tls=1; shift ;;
    --purge) purge=1; shift ;;
    -h | --help) usage ;;
    *) echo "registry.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
[[ $name =~ ^[a-z0-9][a-z0-9_-]*$ ]] || die 2 "--name wants lowercase letters, digits, - or _, got '$name'"
[ -z "$port" ] || [[ $port =~ ^[0-9]+$ && $port -ge 1 && $port -le 65535 ]] || die 2 "--port wants a TCP port, got '$port'"

dir=$DEPLOY_STATE_DIR/registry/$name
pidfile=$dir/registry.pid

# The registry is a daemon of toolchain/lib/daemon.sh, named `registry`, its pidfile and log
# in $dir; its pidfile holds the PID alone (DAEMON_PROGRAM=""), as older registry.sh wrote
# and read it. A registry an older registry.sh started is adopted when its process serves our
# config.yml (daemon.sh's registry.start is written for it).
DAEMON_RUN=$dir DAEMON_LOG=$dir DAEMON_PROGRAM=""
adopt_old_pidfile() {
  local pid start spid=""
  [ -f "$pidfile" ] || return 0
  read -r pid <"$pidfile" || true
  [ -f "$dir/registry.start" ] && read -r spid start <"$dir/registry.start"
  [[ $pid =~ ^[0-9]+$ ]] && [ "$spid" != "$pid" ] || return 0
  if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "serve $dir/config.yml"; then
    start=$(proc_start "$pid") && echo "$pid $start" >"$dir/registry.start"
  fi
  return 0
}
running_pid() { adopt_old_pidfile; daemon_pid registry; }

has_tls() { [ -s "$dir/tls/server.crt" ]; }

# HTTP status of GET /v2/ (200 open, 401 with auth), or 000 when nothing answers; over
# https, checked against NAME's CA, when NAME has --tls.
probe() {
  if has_tls; then
    curl -s -o /dev/null -m 2 -w '%{http_code}' --cacert "$dir/tls/ca.crt" "https://127.0.0.1:$1/v2/" || true
  else
    curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$1/v2/" || true
  fi
}

answers() {
  local code
  code=$(probe "$1")
  [ "$code" = 200 ] || [ "$code" = 401 ]
}

pick_port() {
  if [ -n "$port" ]; then
    echo "$port"
  elif [ -f "$dir/port" ]; then
    cat "$dir/port"
  elif [ "$name" = local ]; then
    echo "${K8S_LOCAL_REGISTRY_PORT:-5000}"
  else
    die 2 "registry '$name' has no port yet: give --port"
  fi
}

print_exports() {
  if has_tls; then
    printf 'export K8S_REGISTRY=127.0.0.1:%s\nexport K8S_REGISTRY_TLS_VERIFY=true\nexport K8S_REGISTRY_CA_FILE=%s\n' "$1" "$dir/tls/ca.crt"
  else
    printf 'export K8S_REGISTRY=127.0.0.1:%s\nexport K8S_REGISTRY_TLS_VERIFY=false\n' "$1"
  fi
}

# tls/: a CA of NAME's own (EC P-256, 2 years) and the registry's certificate it signs, for
# IP 127.0.0.1 (Go's TLS, skopeo's and containerd's, checks the subjectAltName only).
make_tls() {
  local t=$dir/tls ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
  [ -s "$t/server.crt" ] && return 0
  rm -rf "$t.tmp"
  mkdir -p "$t.tmp"
  chmod 0700 "$t.tmp"
  {
    openssl req -x509 "${ec[@]}" -keyout "$t.tmp/ca.key" -out "$t.tmp/ca.crt" -days 730 \
      -subj "/CN=deploy test registry $name CA" \
      -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign &&
      openssl req "${ec[@]}" -keyout "$t.tmp/server.key" -out "$t.tmp/server.csr" -subj /CN=127.0.0.1 &&
      printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$t.tmp/server.ext" &&
      openssl x509 -req -in "$t.tmp/server.csr" -CA "$t.tmp/ca.crt" -CAkey "$t.tmp/ca.key" \
        -CAcreateserial -days 730 -extfile "$t.tmp/server.ext" -out "$t.tmp/server.crt"
  } >/dev/null 2>"$t.tmp/openssl.log" || { cat "$t.tmp/openssl.log" >&2; die 3 "openssl failed to make the CA of registry '$name'"; }
  rm -f "$t.tmp/server.csr" "$t.tmp/server.ext" "$t.tmp/ca.srl" "$t.tmp/openssl.log"
  # the CA's certificate is read by the deployer and containerd; the keys by the registry only
  chmod 0755 "$t.tmp"
  chmod 0644 "$t.tmp/ca.crt" "$t.tmp/server.crt"
  chmod 0600 "$t.tmp/ca.key" "$t.tmp/server.key"
  mv "$t.tmp" "$t"
}

write_config() {
  local p=$1
  {
    printf 'version: 0.1\n'
    printf 'log:\n  level: info\n  formatter: text\n'
    printf 'storage:\n  filesystem:\n    rootdirectory: %s/data\n  delete:\n    enabled: true\n' "$dir"
    printf 'http:\n  addr: 127.0.0.1:%s\n  headers:\n    X-Content-Type-Options: [nosniff]\n' "$p"
    if has_tls; then
      printf '  tls:\n    certificate: %s/tls/server.crt\n    key: %s/tls/server.key\n' "$dir" "$dir"
    fi
    if [ -s "$dir/htpasswd" ]; then
      printf 'auth:\n  htpasswd:\n    realm: deploy-local-registry\n    path: %s/htpasswd\n' "$dir"
    fi
  } >"$dir/config.yml.tmp"
  mv "$dir/config.yml.tmp" "$dir/config.yml"
}

set_password() {
  local user=${auth%%:*} pass
  if [[ $auth == *:* ]]; then
    pass=${auth#*:}
  else
    IFS= read -r pass || die 2 "--auth $user: give the password on stdin"
  fi
  if [ -z "$user" ] || [ -z "$pass" ]; then die 2 "--auth wants USER:PASS (or USER, password on stdin)"; fi
  # The password goes to htpasswd on stdin, never in its argv.
  printf '%s\n' "$pass" | htpasswd -B -i -c "$dir/htpasswd.tmp" "$user" 2>/dev/null ||
    die 3 "htpasswd failed for user $user"
  chmod 0600 "$dir/htpasswd.tmp"
  mv "$dir/htpasswd.tmp" "$dir/htpasswd"
}

up() {
  local p pid
  p=$(pick_port)
  if pid=$(running_pid); then
    local was
    was=$(cat "$dir/port")
    [ "$was" = "$p" ] || die 2 "registry '$name' runs on port $was (pid $pid), not $p: run 'registry.sh down --name $name' first"
    if [ -n "$auth" ] && [ ! -s "$dir/htpasswd" ]; then
      die 2 "registry '$name' runs without auth: run 'registry.sh down --name $name' first"
    fi
    if [ "$tls" = 1 ] && ! has_tls; then
      die 2 "registry '$name' runs without TLS: run 'registry.sh down --name $name' first"
    fi
    answers "$p" || die 3 "registry '$name' (pid $pid) does not answer on 127.0.0.1:$p; see $dir/registry.log"
    log "registry '$name' already running (pid $pid) on 127.0.0.1:$p"
    print_exports "$p"
    return 0
  fi
  ensure_host_packages_or_die registry
  [ "$(probe "$p")" = 000 ] || die 3 "port $p on 127.0.0.1 is taken by another program; pick another with --port or K8S_LOCAL_REGISTRY_PORT"
  mkdir -p "$dir/data"
  [ -z "$auth" ] || set_password
  [ "$tls" = 0 ] || make_tls
  write_config "$p"
  echo "$p" >"$dir/port"
  start_daemon registry docker-registry serve "$dir/config.yml"
  pid=$(daemon_pid registry) || pid=""
  if ! wait_until 20 answers "$p"; then
    stop_daemon registry 2 || true
    tail -n 20 "$dir/registry.log" >&2 || true
    die 3 "the registry did not answer on 127.0.0.1:$p within 20 s (log above: $dir/registry.log)"
  fi
  log "registry '$name' up (pid $pid) on 127.0.0.1:$p$([ -s "$dir/htpasswd" ] && echo ', basic auth')$(has_tls && echo ", https (CA $dir/tls/ca.crt)"), data in $dir/data"
  print_exports "$p"
}

down() {
  if running_pid >/dev/null; then
    stop_daemon registry 10 || die 3 "registry '$name' survives SIGKILL"
  else
    log "registry '$name' is not running"
  fi
  rm -f "$pidfile" "$dir/registry.start"
  if [ "$purge" = 1 ]; then
    remove_tree "$dir"
    log "registry '$name': data deleted"
  fi
}

status() {
  local pid
  if pid=$(running_pid) && answers "$(cat "$dir/port")"; then
    echo "registry $name: running, pid $pid, 127.0.0.1:$(cat "$dir/port"), auth $([ -s "$dir/htpasswd" ] && echo basic || echo none), tls $(has_tls && echo "CA $dir/tls/ca.crt" || echo none), data $dir/data"
  else
    echo "registry $name: stopped"
    return 1
  fi
}

case $verb in
  up) up ;;
  down) down ;;
  status) status ;;
  *) usage ;;
esac
