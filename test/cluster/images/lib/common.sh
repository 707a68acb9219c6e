# shellcheck shell=bash
# Helpers shared by the node-image scripts and test/cluster/registry.sh (sourced, not run).
#
#   log <msg...>              one line to stderr, prefixed with the script name
#   die <code> <msg...>       log and exit with <code>
#   ensure_host_packages_or_die <group>...
#                             installs the group's missing Debian packages
#                             (toolchain/host-packages.list), so a fresh machine works
#   wait_until <seconds> <cmd...>
#                             runs <cmd...> every 0.1-1 s until it succeeds; fails after
#                             <seconds> (every wait has a deadline)
#   unmount_under <dir>       unmounts everything mounted below <dir>, deepest first
#   remove_tree <dir>         unmount_under, then rm -rf on that file system only
#   DEPLOY_STATE_DIR          resolved and exported (per-user state: registry data, pidfiles)
#
# DEPLOY_CACHE_DIR and build_once come from toolchain/cache.sh.

_COMMON_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../../../../toolchain/cache.sh
. "$_COMMON_DIR/../../../../toolchain/cache.sh"
# shellcheck source=../../../../toolchain/host-packages.sh
. "$_COMMON_DIR/../../../../toolchain/host-packages.sh"

DEPLOY_STATE_DIR="${DEPLOY_STATE_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/k8s-deployer}"
export DEPLOY_STATE_DIR

log() {
  printf '%s: %s\n' "${LOG_TAG:-$(basename "$0")}" "$*" >&2
}

die() {
  local code=$1
  shift
  log "error: $*"
  exit "$code"
}

ensure_host_packages_or_die() {
  ensure_host_packages "$@" || die 3 "Debian packages missing (above)"
}

wait_until() {
  local deadline=$((SECONDS + $1)) delay=0.1
  shift
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep "$delay"
    case $delay in 0.1) delay=0.2 ;; 0.2) delay=0.5 ;; *) delay=1 ;; esac
  done
}

unmount_under() {
  local dir mnt
  dir=$(realpath -m "$1")
  # Mount points are field 5 of mountinfo (octal escapes for spaces: none in our paths).
  # Reverse order unmounts the deepest (most recent) first.
  while read -r mnt; do
    umount -l "$mnt" 2>/dev/null || true
  done < <(awk -v d="$dir" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | tac)
}

remove_tree() {
  if [ -z "$1" ] || [ "$1" = / ]; then die 1 "remove_tree: refusing '$1'"; fi
  [ -e "$1" ] || return 0
  unmount_under "$1"
  rm -rf --one-file-system "$1"
}
