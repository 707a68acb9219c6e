#!/usr/bin/env bash
# Builds OpenTofu and the four providers the CDKTF bindings pin, once, into the versioned cache
# (toolchain/cache.sh), and writes the CLI config that serves the providers to `tofu init` as
# an offline filesystem mirror. Idempotent: a second run skips everything in seconds.
#
#   npm run tools            (or: bash toolchain/build-tools.sh)
#
# Environment:
#   DEPLOY_CACHE_DIR         where programs go (default ${XDG_CACHE_HOME:-$HOME/.cache}/k8s-deployer)
#   DEPLOY_PROVIDER_SOURCES  directory holding terraform-provider-<name>-<version>/ source trees
#                            (default: ../shared/upstream beside the repository, when it exists).
#                            Read only: nothing is written into it.
#
# Outputs:
#   $DEPLOY_CACHE_DIR/tofu/<version>/tofu
#   $DEPLOY_CACHE_DIR/mirror/<registry host>/hashicorp/<name>/<version>/linux_amd64/terraform-provider-<name>_v<version>
#   $DEPLOY_CACHE_DIR/tofu.rc   (point TF_CLI_CONFIG_FILE at it; `deploy` does so by itself)
#
# Why a tools module for tofu: OpenTofu's go.mod replaces github.com/hashicorp/hcl/v2 with
# OpenTofu's fork, and `go install pkg@version` refuses modules with replace directives, so
# toolchain/tofu/go.mod requires it as a tool and repeats the replace.
# Why source trees for the providers: the Go module proxy does not serve them (their tags lack
# the /vN suffix), but their dependencies are served.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
# shellcheck source=toolchain/cache.sh
. "$here/cache.sh"

TOFU_VERSION=1.12.6
# name:version, as pinned by @cdktf/provider-* in package.json (see ../shared/upstream/README.md)
PROVIDERS=(kubernetes:2.38.0 null:3.2.4 random:3.7.2 external:2.3.5)
PLATFORM=linux_amd64
# The mirror's layout names the registry host that bare provider sources ("null") resolve to
# (https://opentofu.org/docs/cli/config/config-file/#filesystem_mirror). Only a directory
# name: nothing contacts it.
REGISTRY_HOST=registry.opentofu.org

if [ -z "${DEPLOY_PROVIDER_SOURCES:-}" ] && [ -d "$repo/../shared/upstream" ]; then
  DEPLOY_PROVIDER_SOURCES=$(cd "$repo/../shared/upstream" && pwd)
fi

if ! command -v go >/dev/null 2>&1; then
  echo "build-tools: 'go' is not on PATH; install Go >= 1.26.6 (e.g. Debian's golang or the official tarball)" >&2
  exit 3
fi

# Static binaries that do not depend on the host's libc; -trimpath and no VCS stamping keep
# them reproducible (the provider hashes in .terraform.lock.hcl depend on the bytes) and let
# the build run in a read-only source tree. -mod=readonly: the committed go.sum files are
# complete; a build must never rewrite them.
export CGO_ENABLED=0
GO_BUILD=(go build -mod=readonly -buildvcs=false -trimpath)
total_start=$SECONDS

cache_log "cache: $DEPLOY_CACHE_DIR"

build_tofu() {
  (cd "$here/tofu" && "${GO_BUILD[@]}" \
    -ldflags "-s -w -X github.com/opentofu/opentofu/version.dev=no" \
    -o "$BUILD_OUT" github.com/opentofu/opentofu/cmd/tofu)
}

build_provider() {
  local src=$1 version=$2
  (cd "$src" && "${GO_BUILD[@]}" -ldflags "-s -w -X main.version=$version" -o "$BUILD_OUT" .)
}

build_once "tofu/$TOFU_VERSION/tofu" build_tofu

missing=()
for entry in "${PROVIDERS[@]}"; do
  name=${entry%%:*}
  version=${entry#*:}
  key="mirror/$REGISTRY_HOST/hashicorp/$name/$version/$PLATFORM/terraform-provider-${name}_v$version"
  if [ -e "$(cache_path "$key")" ]; then
    cache_log "skipped $key (present)"
    continue
  fi
  src="${DEPLOY_PROVIDER_SOURCES:-}/terraform-provider-$name-$version"
  if [ -z "${DEPLOY_PROVIDER_SOURCES:-}" ] || [ ! -f "$src/go.mod" ]; then
    missing+=("$name $version")
    continue
  fi
  build_once "$key" build_provider "$src" "$version"
done

# The CLI config: only the mirror, no `direct` block, so `tofu init` never reaches a registry.
# Written every run (cheap) because it names the absolute cache path.
rc="$DEPLOY_CACHE_DIR/tofu.rc"
tmp_rc="$rc.tmp.$$"
cat >"$tmp_rc" <<RC
# Written by toolchain/build-tools.sh: serve the providers built from source, offline.
provider_installation {
  filesystem_mirror {
    path    = "$DEPLOY_CACHE_DIR/mirror"
    include = ["$REGISTRY_HOST/hashicorp/*"]
  }
}
RC
if [ -f "$rc" ] && cmp -s "$tmp_rc" "$rc"; then
  rm -f "$tmp_rc"
else
  mv -f "$tmp_rc" "$rc"
  cache_log "wrote $rc"
fi

if [ "${#missing[@]}" -gt 0 ]; then
  for m in "${missing[@]}"; do
    echo "build-tools: no source for provider $m: set DEPLOY_PROVIDER_SOURCES to a directory with terraform-provider-<name>-<version>/ trees, or run tofu online (no TF_CLI_CONFIG_FILE) so that \`tofu init\` downloads it" >&2
  done
  cache_log "done in $((SECONDS - total_start))s, ${#missing[@]} provider(s) missing"
  exit 3
fi
cache_log "done in $((SECONDS - total_start))s"
