# shellcheck shell=bash
# What the node-image scripts and test/cluster/registry.sh source: the shell library
# (toolchain/lib: paths, log/die, wait_until, build_once, the host packages, unmount_under and
# remove_tree). Set LOG_TAG before sourcing. Kept as the one line those scripts source:
# rootfs.sh's bytes are the cache key of the root file system, so it does not change.
_COMMON_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../../../toolchain/lib" && pwd)
for _lib in paths log wait cache apt mounts; do
  # shellcheck source=/dev/null
  . "$_COMMON_LIB/$_lib.sh"
done
unset _lib
