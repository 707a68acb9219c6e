# shellcheck shell=bash
# write_docker_archive <tree> <out.tar> <repo> <tag-prefix> <created> <created-by> <work-dir>
#   Writes the `docker save` format that skopeo (docker-archive:) and `ctr images import`
#   read: manifest.json, <config-digest>.json, <diff-id>/layer.tar. One uncompressed layer
#   holding <tree>; Cmd /sbin/init, StopSignal SIGRTMIN+3 (systemd's clean shutdown),
#   Env container=docker (systemd's container detection). Entries are sorted, owners
#   numeric and outer times fixed, so the same tree gives the same digests.
#   The tag (RepoTags <repo>:<tag-prefix>-<12 hex of the config digest>) follows the
#   content: it changes exactly when the image does.
#   <work-dir> (empty, same file system as <out.tar>) holds the parts; the caller removes it.
#   Prints the image ID (sha256:<config digest>) on stdout.
#   Format: https://github.com/moby/moby/blob/master/image/spec/v1.2.md (the "Combined
#   Image JSON + Filesystem Changeset Format" of docker save).
write_docker_archive() {
  local tree=$1 out=$2 repo=$3 tag_prefix=$4 created=$5 created_by=$6 work=$7
  local layer_sha config config_sha arch

  mkdir "$work/layer"
  # Top-level names without a "./" prefix, like the layers docker writes.
  (cd "$tree" && LC_ALL=C ls -A) >"$work/top"
  tar -C "$tree" --sort=name --numeric-owner --format=posix \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
    -cf "$work/layer/layer.tar" -T "$work/top"
  layer_sha=$(sha256sum "$work/layer/layer.tar" | cut -d' ' -f1)
  mv "$work/layer" "$work/$layer_sha"
  printf '1.0' >"$work/$layer_sha/VERSION"

  arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
  config=$(printf '{"architecture":"%s","os":"linux","created":"%s","config":{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","container=docker"],"Cmd":["/sbin/init"],"StopSignal":"SIGRTMIN+3"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created":"%s","created_by":"%s"}]}' \
    "$arch" "$created" "$layer_sha" "$created" "$created_by")
  config_sha=$(printf '%s' "$config" | sha256sum | cut -d' ' -f1)
  printf '%s' "$config" >"$work/$config_sha.json"
  printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]' \
    "$config_sha" "$repo:$tag_prefix-${config_sha:0:12}" "$layer_sha" >"$work/manifest.json"

  tar -C "$work" --owner=0 --group=0 --numeric-owner --mtime=@0 --format=posix \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
    -cf "$out" manifest.json "$config_sha.json" "$layer_sha/VERSION" "$layer_sha/layer.tar"
  printf 'sha256:%s\n' "$config_sha"
}
