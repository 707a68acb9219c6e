# shellcheck shell=bash
# sync: what the spire node's own service does with the hand-off.
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
  [ -d "$S/run" ] || die 3 "the test spire node is not up: npm run spire:up"
  (
    flock -w 120 8 || die 3 "another sync holds $S/run/sync.lock for over 120s"
    # under the lock: the syncer's own sync may be restarting the server right now
    daemon_pid spire-server >/dev/null || die 3 "the test spire node is not up: npm run spire:up"
    sync_once
  ) 8>"$S/run/sync.lock"
}

sync_once() {
  CLUSTERS=$(merged_clusters)
  local conf="$S/root/var/lib/spire/server.conf"
  write_server_conf "$conf.new"
  if ! cmp -s "$conf.new" "$conf"; then
    mv "$conf.new" "$conf"
    log "sync: k8s_psat clusters now: $CLUSTERS; restarting spire-server"
    stop_daemon spire-server
    start_node_daemon spire-server run -config /var/lib/spire/server.conf
    wait_until 60 server_healthy || { require_alive spire-server; die 3 "spire-server is not healthy within 60s after the restart"; }
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
      server_cli entry create -data /dev/stdin <<<"$missing" >/dev/null || die 3 "spire-server entry create failed for $f"
      log "sync: registered $(jq -r '[.entries[].spiffe_id] | join(", ")' <<<"$missing")"
    fi
  done
  while read -r id sid pid; do
    [ -n "$id" ] || continue
    case $sid in spiffe://"$TRUST_DOMAIN"/k8s/* | spiffe://"$TRUST_DOMAIN"/host/*) ;; *) continue ;; esac
    if ! grep -qxF "$sid $pid" <<<"$want"; then
      server_cli entry delete -entryID "$id" >/dev/null || die 3 "spire-server entry delete $id failed"
      log "sync: retired $sid"
    fi
  done <<<"$have"
}

# The syncer: sync whenever the hand-off changed.
# A real spire node reacts to the hand-off by itself; the test node's stand-in is a loop,
# started by `up` and stopped by `down` like the daemons (pidfile, by PID), that runs a sync
# whenever the files under /var/lib/spire/k8s changed (a look every 2 s). A sync that fails
# (say the server restarting) is tried again on the next look. It runs in the host's mount
# namespace, not the node's: it restarts spire-server, which start_node_daemon puts in a fresh one.

SYNC_EVERY=2

handoff_signature() {
  find "$S/root/var/lib/spire/k8s" -mindepth 1 -printf '%P %y %s %T@\n' 2>/dev/null | LC_ALL=C sort | sha256sum
}

cmd_sync_loop() {
  ensure_programs
  local last="" now
  log "syncer: watching $S/root/var/lib/spire/k8s every ${SYNC_EVERY}s"
  while :; do
    now=$(handoff_signature)
    if [ "$now" != "$last" ]; then
      if (
        flock -w 120 8 || exit 1
        sync_once
      ) 8>"$S/run/sync.lock"; then
        last=$now
      else
        log "syncer: sync failed; trying again in ${SYNC_EVERY}s"
      fi
    fi
    sleep "$SYNC_EVERY"
  done
}

# A daemon like the others (its log $S/log/syncer.log), run by this script's verb sync-loop.
start_syncer() {
  start_daemon syncer "$(readlink -f "$BASH")" "$HERE/spire-node.sh" sync-loop
}
