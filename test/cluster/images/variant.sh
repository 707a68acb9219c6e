#!/usr/bin/env bash
# Writes the docker archive of one node image variant to $BUILD_OUT (set by build_once):
#   variant.sh <rootfs-dir> <variant> <repo> [NAME=VALUE]...
# The archive's tag is <variant>-<12 hex of the image config digest>.
# <rootfs-dir> is a cached tree of rootfs.sh; it is hard-linked, never written to.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LOG_TAG=images/variant
. "$HERE/lib/common.sh"
. "$HERE/lib/docker-archive.sh"

rootfs=$1 variant=$2 repo=$3
shift 3
out=${BUILD_OUT:?variant.sh writes to BUILD_OUT}

scratch=$(mktemp -d "$(dirname "$out")/variant.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
# Hard links: well under a second for ~10k files. The cached tree stays untouched because
# files are only added, or replaced after `rm -f`, never written in place.
cp -al "$rootfs/root" "$scratch/root"
r=$scratch/root
added=()
case $variant in
  good) ;;
  broken)
    mkdir -p "$r/etc/systemd/system/multi-user.target.wants"
    rm -f "$r/etc/systemd/system/broken.service"
    cat >"$r/etc/systemd/system/broken.service" <<'UNIT'
[Unit]
Description=A unit that always fails (the broken node image: systemd ends degraded)

[Service]
Type=oneshot
ExecStart=/bin/sh -c 'echo "broken.service: failing on purpose" >&2; exit 1'

[Install]
WantedBy=multi-user.target
UNIT
    ln -sfn ../broken.service "$r/etc/systemd/system/multi-user.target.wants/broken.service"
    added+=(etc/systemd/system/broken.service etc/systemd/system/multi-user.target.wants/broken.service
      etc/systemd/system/multi-user.target.wants etc/systemd/system)
    ;;
  *) die 2 "unknown variant '$variant'" ;;
esac
if [ "$#" -gt 0 ]; then
  rm -f "$r/etc/node-config"
  printf '%s\n' "$@" >"$r/etc/node-config"
  added+=(etc/node-config etc)
fi
# Same inputs, same bytes: what was added gets the tree's time, not the clock's.
for p in "${added[@]+"${added[@]}"}"; do
  touch -h -r "$rootfs/created" "$r/$p"
done

mkdir "$scratch/archive"
write_docker_archive "$r" "$out" "$repo" "$variant" "$(cat "$rootfs/created")" \
  "test/cluster/images/build.sh $variant${*:+ --config $*}" "$scratch/archive" >/dev/null
