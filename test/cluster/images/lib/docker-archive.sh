# shellcheck shell=bash
# The one writer of docker archives (the `docker save` format that skopeo's docker-archive:
# and `ctr images import` read: manifest.json, <config-digest>.json, <diff-id>/layer.tar), for
# the node images (variant.sh), the local cluster's pause image (test/cluster/lib/node.sh) and
# the tests' small images. Format: https://github.com/moby/moby/blob/master/image/spec/v1.2.md
# (the "Combined Image JSON + Filesystem Changeset Format" of docker save).
#
# Sourced:
#   write_docker_archive <tree> <out.tar> <ref> <created> <created-by> <work-dir> <config>
#     One uncompressed layer holding <tree> (write_layered_archive, below, writes several);
#     <config> is the image config's "config" object (JSON: Env, Cmd or Entrypoint,
#     StopSignal, ...). Entries are sorted, owners numeric and
#     outer times fixed, so the same tree gives the same digests. <ref> (repo:tag) is the
#     RepoTags entry; a tag that ends in "-" gets the 12 hex of the config digest appended, so
#     it changes exactly when the image does. <work-dir> (empty, same file system as
#     <out.tar>) holds the parts; the caller removes it. Prints the image ID
#     (sha256:<config digest>) on stdout.
#
# Run, to write an archive of files of this host to $BUILD_OUT (build_once sets it):
#   docker-archive.sh REF --file SRC:DEST [--file SRC:DEST]... [--symlink TARGET:DEST]...
#                     (--entrypoint JSON | --cmd JSON) [--env JSON]
#   The tree also has /dev, /proc, /sys, /tmp and /etc; every entry is root's with time 0.
write_docker_archive() {
  local tree=$1 out=$2 ref=$3 created=$4 created_by=$5 work=$6 image_config=$7
  tar_layer "$tree" "$work/tree-layer.tar"
  write_layered_archive "$out" "$ref" "$created" "$work" "$image_config" "$work/tree-layer.tar" "$created_by"
}

# tar_layer <tree> <out.tar> [<list-file>]
#   One uncompressed layer: the whole <tree>, or only the entries of <list-file> (paths
#   relative to <tree>, one per line, sorted; a directory named there is its own entry, not
#   its contents). Sorted names, numeric owners, no atime/ctime: the same tree, the same bytes.
tar_layer() {
  local tree=$1 out=$2 list=${3:-}
  if [ -z "$list" ]; then
    # Top-level names without a "./" prefix, like the layers docker writes.
    list=$out.top
    (cd "$tree" && LC_ALL=C ls -A) >"$list"
    tar -C "$tree" --sort=name --numeric-owner --format=posix \
      --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
      -cf "$out" -T "$list"
    rm -f "$list"
  else
    tar -C "$tree" --no-recursion --numeric-owner --format=posix \
      --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
      -cf "$out" -T "$list"
  fi
}

# write_layered_archive <out.tar> <ref> <created> <work-dir> <config> (<layer.tar> <created-by>)...
#   The archive of these layers, bottom first, each with the history line that made it.
#   A layer goes into <work-dir> as a symbolic link, which tar follows (--dereference): never a
#   hard link. The cached base layer is read by every variant built at once, and a hard link
#   made or removed by one build changes the file's link count, so its ctime, while another's
#   tar reads it: GNU tar then fails with "file changed as we read it" (seen on a cold
#   machine, two e2e files building two variants at the same moment).
write_layered_archive() {
  local out=$1 ref=$2 created=$3 work=$4 image_config=$5
  shift 5
  local layer by sha diff_ids='' history='' layers='' members=() config config_sha arch
  while [ "$#" -gt 0 ]; do
    layer=$1 by=$2
    shift 2
    sha=$(sha256sum "$layer" | cut -d' ' -f1)
    mkdir -p "$work/$sha"
    ln -sfn "$(realpath "$layer")" "$work/$sha/layer.tar"
    printf '1.0' >"$work/$sha/VERSION"
    diff_ids+="${diff_ids:+,}\"sha256:$sha\""
    history+="${history:+,}{\"created\":\"$created\",\"created_by\":\"$by\"}"
    layers+="${layers:+,}\"$sha/layer.tar\""
    members+=("$sha/VERSION" "$sha/layer.tar")
  done

  arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
  config=$(printf '{"architecture":"%s","os":"linux","created":"%s","config":%s,"rootfs":{"type":"layers","diff_ids":[%s]},"history":[%s]}' \
    "$arch" "$created" "$image_config" "$diff_ids" "$history")
  config_sha=$(printf '%s' "$config" | sha256sum | cut -d' ' -f1)
  printf '%s' "$config" >"$work/$config_sha.json"
  case $ref in *-) ref=$ref${config_sha:0:12} ;; esac
  printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":[%s]}]' \
    "$config_sha" "$ref" "$layers" >"$work/manifest.json"

  tar -C "$work" --dereference --owner=0 --group=0 --numeric-owner --mtime=@0 --format=posix \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
    -cf "$out" manifest.json "$config_sha.json" "${members[@]}"
  printf 'sha256:%s\n' "$config_sha"
}

_docker_archive_cli() {
  set -euo pipefail
  local ref=$1 entrypoint=null cmd=null env='[]' root src dest
  shift
  : "${BUILD_OUT:?docker-archive.sh writes to BUILD_OUT}"
  root=$(mktemp -d)
  # shellcheck disable=SC2064 # the directory now: the trap runs after this function returned
  trap "rm -rf '$root'" EXIT
  mkdir -p "$root/fs" "$root/work"
  while [ "$#" -gt 0 ]; do
    case $1 in
      --file) src=${2%%:*} dest=${2#*:}; mkdir -p "$root/fs/$(dirname "$dest")"; cp -L "$src" "$root/fs/$dest"; shift 2 ;;
      --symlink) src=${2%%:*} dest=${2#*:}; mkdir -p "$root/fs/$(dirname "$dest")"; ln -s "$src" "$root/fs/$dest"; shift 2 ;;
      --entrypoint) entrypoint=$2; shift 2 ;;
      --cmd) cmd=$2; shift 2 ;;
      --env) env=$2; shift 2 ;;
      *) echo "docker-archive.sh: unknown argument $1" >&2; exit 2 ;;
    esac
  done
  mkdir -p "$root/fs/dev" "$root/fs/proc" "$root/fs/sys" "$root/fs/tmp" "$root/fs/etc"
  chmod 1777 "$root/fs/tmp"
  chmod 0755 "$root/fs"
  # root's, time 0: the same files give the same image
  [ "$(id -u)" -ne 0 ] || chown -R -h 0:0 "$root/fs"
  find "$root/fs" -mindepth 1 -exec touch -h -d @0 {} +
  write_docker_archive "$root/fs" "$BUILD_OUT" "$ref" 1970-01-01T00:00:00Z \
    "test/cluster/images/lib/docker-archive.sh" "$root/work" \
    "{\"Entrypoint\":$entrypoint,\"Cmd\":$cmd,\"Env\":$env,\"WorkingDir\":\"/\"}" >/dev/null
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  _docker_archive_cli "$@"
fi
