#!/usr/bin/env bash
# Builds OpenTofu and the four providers the CDKTF bindings pin, once, into the versioned cache
# (toolchain/lib/cache.sh), and writes the CLI config that serves the providers to `tofu init`
# as an offline filesystem mirror. Idempotent: a second run skips everything in seconds.
#
#   npm run tools            (or: bash toolchain/build-tools.sh)
#
# Versions: toolchain/versions.env (TOFU_VERSION, PROVIDERS, MIRROR_PLATFORM).
# Environment:
#   DEPLOY_CACHE_DIR         where programs go (default ${XDG_CACHE_HOME:-$HOME/.cache}/k8s-deployer)
#   DEPLOY_PROVIDER_SOURCES  directory holding terraform-provider-<name>-<version>/ source trees
#                            (default: ../shared/upstream beside the repository, when it exists).
#                            Read only: nothing is written into it.
#   DEPLOY_PROVIDERS         `build` (default): build the providers from those sources into an
#                            offline mirror; `download`: build tofu only, write no mirror and no
#                            tofu.rc, and let `tofu init` download the pinned providers (needs
#                            network access to the OpenTofu registry; deploy then ignores the
#                            cache's tofu.rc too).
#
# What is missing is checked before anything is built: without the sources (and without
# DEPLOY_PROVIDERS=download) it stops at once, exit 3, with one line naming the providers and
# both ways out, instead of after a long tofu build.
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
export LOG_TAG=build-tools

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
# shellcheck source=lib/go-build.sh
. "$here/lib/go-build.sh"

IFS=, read -r -a pinned <<<"$PROVIDERS"
# The mirror's layout names the registry host that bare provider sources ("null") resolve to
# (https://opentofu.org/docs/cli/config/config-file/#filesystem_mirror). Only a directory
# name: nothing contacts it.
REGISTRY_HOST=registry.opentofu.org

if [ -z "${DEPLOY_PROVIDER_SOURCES:-}" ] && [ -d "$repo/../shared/upstream" ]; then
  DEPLOY_PROVIDER_SOURCES=$(cd "$repo/../shared/upstream" && pwd)
fi

PROVIDERS_MODE=${DEPLOY_PROVIDERS:-build}
case $PROVIDERS_MODE in
  build | download) ;;
  *) die 2 "DEPLOY_PROVIDERS must be 'build' or 'download', not '$PROVIDERS_MODE'" ;;
esac

provider_key() { # name version
  echo "mirror/$REGISTRY_HOST/hashicorp/$1/$2/$MIRROR_PLATFORM/terraform-provider-${1}_v$2"
}

# Before any build: which providers are neither in the cache nor buildable from a source tree.
missing=()
if [ "$PROVIDERS_MODE" = build ]; then
  for entry in "${pinned[@]}"; do
    name=${entry%%:*} version=${entry#*:}
    [ -e "$(cache_path "$(provider_key "$name" "$version")")" ] && continue
    [ -n "${DEPLOY_PROVIDER_SOURCES:-}" ] && [ -f "$DEPLOY_PROVIDER_SOURCES/terraform-provider-$name-$version/go.mod" ] && continue
    missing+=("$name $version")
  done
fi
if [ "${#missing[@]}" -gt 0 ]; then
  where=${DEPLOY_PROVIDER_SOURCES:-"(DEPLOY_PROVIDER_SOURCES is unset and $repo/../shared/upstream does not exist)"}
  names=$(printf '%s, ' "${missing[@]}")
  say "no source for the providers ${names%, } in $where: set DEPLOY_PROVIDER_SOURCES to a directory of terraform-provider-<name>-<version>/ source trees, or set DEPLOY_PROVIDERS=download to let \`tofu init\` download the pinned providers (needs network access to the OpenTofu registry); nothing was built"
  exit 3
fi

require_go

# Static binaries that do not depend on the host's libc; reproducible (the provider hashes in
# .terraform.lock.hcl depend on the bytes).
export CGO_ENABLED=0
total_start=$SECONDS

log "cache: $DEPLOY_CACHE_DIR"

build_tofu() {
  go_build "$here/tofu" -ldflags "-s -w -X github.com/opentofu/opentofu/version.dev=no" \
    -o "$BUILD_OUT" github.com/opentofu/opentofu/cmd/tofu
}

build_provider() {
  local src=$1 version=$2
  go_build "$src" -ldflags "-s -w -X main.version=$version" -o "$BUILD_OUT" .
}

build_once "tofu/$TOFU_VERSION/tofu" build_tofu

if [ "$PROVIDERS_MODE" = download ]; then
  log "DEPLOY_PROVIDERS=download: no providers built, no tofu.rc written; \`tofu init\` downloads them"
  log "done in $((SECONDS - total_start))s"
  exit 0
fi

for entry in "${pinned[@]}"; do
  name=${entry%%:*}
  version=${entry#*:}
  build_once "$(provider_key "$name" "$version")" build_provider "${DEPLOY_PROVIDER_SOURCES:-}/terraform-provider-$name-$version" "$version"
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
  log "wrote $rc"
fi
log "done in $((SECONDS - total_start))s"
