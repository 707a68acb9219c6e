#!/usr/bin/env bash
# Node images for the local cluster: Debian 12 with systemd as PID 1, as docker archives.
#
#   test/cluster/images/build.sh <variant> [--config NAME=VALUE]...
#   test/cluster/images/build.sh prune     deletes cached trees and archives of older inputs
#
# Variants:
#   good     boots to `running` with no failed units
#   broken   good + broken.service, a unit that always fails: systemd ends `degraded`
#   hang     good + hang.service, a start job that never ends: systemd stays `starting`
#   late-fail good + late-fail.service, a service that fails 20 s after its start: systemd
#            reaches `running`, then ends `degraded` (the soak's test)
#   slow-stop good + slow-stop.service (its ExecStop takes 15 s) and shutdown-reached.service
#            (runs once shutdown.target is reached); both log to /var/lib/stop-log
#   spire    good + the SPIRE agent (/usr/local/bin/spire-agent from toolchain/spire, built
#            first when missing), its user and units (variants/spire/): it attests when the
#            pod has the SPIRE volumes and is skipped without them (README.md)
# --config NAME=VALUE (repeatable) writes the pairs, one per line, to /etc/node-config: a
#   changed configuration, hence a new image with its own tag, made from the cached root
#   file system in seconds.
# --out FILE puts the archive at FILE too (a symbolic link to the cached archive), so that
#   the script serves as a group plan's image.build (FR-002; test/e2e/deploy-build.test.ts).
#
# Prints on stdout (shell-quotable KEY=VALUE lines):
#   ARCHIVE=<path of the docker-archive tar>
#   TAG=<variant>-<12 hex of IMAGE_ID>   (suggested registry tag: changes iff the image does)
#   IMAGE_ID=sha256:<config digest>
# Everything is cached by content under ${DEPLOY_CACHE_DIR}/images/<tree key>/ (see
# toolchain/lib/cache.sh), the tree key being a hash of rootfs.sh and files/:
#   rootfs/                      the debootstrapped tree, ~45-90 s cold
#   node-<variant>-<key>.tar     one archive per (variant, configuration, archive writer)
# A second call with the same inputs only hashes the inputs and prints the same lines.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LOG_TAG=images/build
# shellcheck source=lib/common.sh
. "$HERE/lib/common.sh"

IMAGE_REPO=localhost/deploy-node

usage() {
  echo "usage: build.sh good|broken|hang|late-fail|slow-stop|spire [--config NAME=VALUE]... [--out FILE] | build.sh prune" >&2
  exit 2
}

variant=${1:-}
[ "$#" -gt 0 ] && shift
case $variant in good | broken | hang | late-fail | slow-stop | spire | prune) ;; *) usage ;; esac
configs=()
out=
while [ "$#" -gt 0 ]; do
  case $1 in
    --out)
      if [ "$#" -lt 2 ] || [ -z "$2" ]; then usage; fi
      out=$2
      shift 2
      ;;
    --config)
      [ "$#" -ge 2 ] || usage
      [[ $2 =~ ^[A-Za-z_][A-Za-z0-9_]*=[^$'\n']*$ ]] || die 2 "--config wants NAME=VALUE on one line, got '$2'"
      configs+=("$2")
      shift 2
      ;;
    --config=*)
      set -- --config "${1#--config=}" "${@:2}"
      ;;
    *) usage ;;
  esac
done

# The spire variant's program, from the SPIRE build cache (built there once when missing,
# so a cold machine works; root is not needed for that).
# shellcheck source=../../../toolchain/versions.env
. "$HERE/../../../toolchain/versions.env"
if [ "$variant" = spire ]; then
  SPIRE_AGENT_BIN=$(cache_path "spire/$SPIRE_VERSION/spire-agent")
  if [ ! -x "$SPIRE_AGENT_BIN" ]; then
    log "spire-agent $SPIRE_VERSION is not built yet: bash toolchain/spire/build.sh"
    bash "$HERE/../../../toolchain/spire/build.sh" >&2 || die 3 "building SPIRE failed (above); the spire variant needs spire-agent"
  fi
  [ -x "$SPIRE_AGENT_BIN" ] || die 3 "no spire-agent at $SPIRE_AGENT_BIN after the SPIRE build"
  export SPIRE_AGENT_BIN
fi

# Content keys: the tree (and its layer) depends on rootfs.sh, files/ and the layer's writer
# (lib/docker-archive.sh); an archive on the tree,
# variant.sh, the archive writer, the variant and the configuration, and for `spire` on
# variants/spire/ and the agent program's bytes (its sha256: a rebuilt agent, a new image).
hash_inputs() {
  (
    cd "$HERE"
    for f in "$@"; do
      find "$f" -type f | LC_ALL=C sort | while read -r p; do
        if [ -x "$p" ]; then printf "%s x\n" "$p"; else printf "%s\n" "$p"; fi
        sha256sum <"$p"
      done
    done
  ) | sha256sum | cut -c1-16
}
rootfs_key=$(hash_inputs rootfs.sh files lib/docker-archive.sh)
archive_key=$({
  printf '%s\n%s\n' "$rootfs_key" "$variant"
  printf 'config %s\n' "${configs[@]+"${configs[@]}"}"
  hash_inputs variant.sh lib/docker-archive.sh
  if [ "$variant" = spire ]; then
    hash_inputs variants/spire
    printf 'spire-agent %s %s\n' "$SPIRE_VERSION" "$(sha256sum <"$SPIRE_AGENT_BIN" | cut -d' ' -f1)"
  fi
} | sha256sum | cut -c1-12)
archive_rel=images/$rootfs_key/node-$variant-$archive_key.tar
archive=$(cache_path "$archive_rel")

if [ "$variant" = prune ]; then
  for old in "$DEPLOY_CACHE_DIR"/images/*/; do
    [ "$(basename "$old")" = "$rootfs_key" ] && continue
    log "deleting $old (built from older inputs)"
    remove_tree "${old%/}"
  done
  exit 0
fi

if [ ! -e "$archive" ]; then
  [ "$(id -u)" -eq 0 ] || die 3 "building a node image needs root (debootstrap, file owners)"
  ensure_host_packages_or_die images
  rootfs_rel=images/$rootfs_key/rootfs
  build_once "$rootfs_rel" "$HERE/rootfs.sh" || die 3 "building the root file system failed"
  rootfs=$(cache_path "$rootfs_rel")

  build_once "$archive_rel" "$HERE/variant.sh" "$rootfs" "$variant" "$IMAGE_REPO" \
    "${configs[@]+"${configs[@]}"}" || die 3 "writing the archive $archive failed"
fi

# manifest.json is the archive's first member: reading it costs milliseconds.
manifest=$(tar --occurrence=1 -xOf "$archive" manifest.json)
config_sha=$(sed -n 's/^\[{"Config":"\([0-9a-f]\{64\}\)\.json".*/\1/p' <<<"$manifest")
tag=$(sed -n 's/.*"RepoTags":\["[^"]*:\([^":]*\)"\].*/\1/p' <<<"$manifest")
if [ -z "$config_sha" ] || [ -z "$tag" ]; then die 1 "cannot read manifest.json of $archive; delete it and build again"; fi
if [ -n "$out" ]; then
  ln -sfn "$archive" "$out" || die 3 "cannot write $out (--out)"
  log "wrote $out -> $archive"
fi
printf 'ARCHIVE=%q\nTAG=%s\nIMAGE_ID=sha256:%s\n' "$archive" "$tag" "$config_sha"
