#!/usr/bin/env bash
# Writes a one-layer docker-archive tar (what `ctr images import` and skopeo's
# docker-archive: read) to $BUILD_OUT, from files of this host.
#
#   docker-archive.sh REF --file SRC:DEST [--file SRC:DEST]... [--symlink TARGET:DEST]...
#                     (--entrypoint JSON | --cmd JSON) [--env JSON]
#
# REF becomes the archive's RepoTags entry. The layer is reproducible (sorted, mtime 0,
# root-owned), so the same inputs give the same image ID.
set -euo pipefail
ref=$1; shift
entrypoint=null cmd=null env='[]'
root=$(mktemp -d); trap 'rm -rf "$root"' EXIT
mkdir -p "$root/fs"
while [ "$#" -gt 0 ]; do
  case $1 in
    --file) src=${2%%:*} dest=${2#*:}; mkdir -p "$root/fs/$(dirname "$dest")"; cp -L "$src" "$root/fs/$dest"; shift 2 ;;
    --symlink) tgt=${2%%:*} dest=${2#*:}; mkdir -p "$root/fs/$(dirname "$dest")"; ln -s "$tgt" "$root/fs/$dest"; shift 2 ;;
    --entrypoint) entrypoint=$2; shift 2 ;;
    --cmd) cmd=$2; shift 2 ;;
    --env) env=$2; shift 2 ;;
    *) echo "docker-archive.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$root/fs/dev" "$root/fs/proc" "$root/fs/sys" "$root/fs/tmp" "$root/fs/etc"
chmod 1777 "$root/fs/tmp"
# Member names without a leading ./ (what docker save writes; some readers insist).
tar_dir() { # DIR OUT
  (cd "$1" && find . -mindepth 1 -maxdepth 1 -printf '%P\n' | LC_ALL=C sort |
    tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf "$2" -T -)
}
tar_dir "$root/fs" "$root/layer.tar"
layer_sha=$(sha256sum "$root/layer.tar" | cut -d' ' -f1)
mkdir -p "$root/out"
mv "$root/layer.tar" "$root/out/$layer_sha.tar"
cat >"$root/config.json" <<JSON
{"architecture":"amd64","os":"linux","config":{"Entrypoint":$entrypoint,"Cmd":$cmd,"Env":$env,"WorkingDir":"/"},"rootfs":{"type":"layers","diff_ids":["sha256:$layer_sha"]},"history":[{"created_by":"test/cluster/lib/docker-archive.sh"}]}
JSON
config_sha=$(sha256sum "$root/config.json" | cut -d' ' -f1)
mv "$root/config.json" "$root/out/$config_sha.json"
printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s.tar"]}]\n' "$config_sha" "$ref" "$layer_sha" >"$root/out/manifest.json"
tar_dir "$root/out" "$BUILD_OUT"
