# shellcheck shell=bash
# Building programs once into the versioned cache outside the repository.
#
#   build_once <key> <cmd...>   runs <cmd...> unless "$DEPLOY_CACHE_DIR/<key>" exists. The command
#                               writes its output (a file or a directory) to "$BUILD_OUT", a
#                               temporary path under "$DEPLOY_CACHE_DIR/.partial/" (never beside
#                               the final one, where a reader could mistake it); on success it is
#                               renamed into place, so an interrupted build never looks finished.
#                               Concurrent calls for the same key wait for each other (flock,
#                               bounded: 2 hours). Logs "built <key> in <n>s" or
#                               "skipped <key> (present)". Returns the command's exit status.
#   cache_path <key>            prints "$DEPLOY_CACHE_DIR/<key>"
#
# Layout: one path per program keyed by version (toolchain/versions.env), e.g.
#   tofu/<version>/tofu
#   kubernetes/<version>/kubectl
#   mirror/<registry host>/hashicorp/<name>/<version>/linux_amd64/terraform-provider-...
# A build is skipped when its output path exists, so a warm machine pays seconds.
_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/paths.sh
. "$_LIB/paths.sh"
# shellcheck source=SCRIPTDIR/log.sh
. "$_LIB/log.sh"

cache_path() {
  printf '%s/%s\n' "$DEPLOY_CACHE_DIR" "$1"
}

build_once() {
  if [ "$#" -lt 2 ]; then
    echo "usage: build_once <key> <command...>" >&2
    return 2
  fi
  local key=$1
  shift
  local out="$DEPLOY_CACHE_DIR/$key"
  if [ -e "$out" ]; then
    log "skipped $key (present)"
    return 0
  fi
  mkdir -p "$(dirname "$out")" "$DEPLOY_CACHE_DIR/.locks" "$DEPLOY_CACHE_DIR/.partial"
  local flat
  flat=$(printf '%s' "$key" | tr '/' '_')
  local lock="$DEPLOY_CACHE_DIR/.locks/$flat.lock"
  local status=0
  (
    # One builder per key; a second caller waits (bounded: 2 hours) and then finds it present.
    exec 9>"$lock"
    if ! flock -w 7200 9; then
      echo "build_once: timed out waiting for the lock $lock" >&2
      exit 1
    fi
    if [ -e "$out" ]; then
      log "skipped $key (built by another process)"
      exit 0
    fi
    tmp="$DEPLOY_CACHE_DIR/.partial/$flat.$$"
    rm -rf "$tmp"
    start=$SECONDS
    log "building $key ..."
    if BUILD_OUT="$tmp" "$@"; then
      if [ ! -e "$tmp" ]; then
        echo "build_once: the command for $key succeeded but wrote nothing to \$BUILD_OUT" >&2
        exit 1
      fi
      mv -T "$tmp" "$out"
      log "built $key in $((SECONDS - start))s"
    else
      rc=$?
      rm -rf "$tmp"
      log "FAILED $key after $((SECONDS - start))s (exit $rc)"
      exit "$rc"
    fi
  ) || status=$?
  return "$status"
}
