#!/usr/bin/env bash
# Builds SPIRE (spire-server, spire-agent) once into the versioned cache (toolchain/lib/cache.sh).
# Idempotent: a second run skips both in well under a second.
#
#   npm run spire:build      (or: bash toolchain/spire/build.sh)
#
# Version: SPIRE_VERSION of toolchain/versions.env.
# Outputs:
#   $DEPLOY_CACHE_DIR/spire/<version>/spire-server
#   $DEPLOY_CACHE_DIR/spire/<version>/spire-agent
#
# Why a tools module: the Go module proxy serves github.com/spiffe/spire, and `go.mod`
# here pins it with `tool` lines (go get -tool ...@v1.13.3) so the dependency graph is
# fixed by the committed go.sum (-mod=readonly: a build never rewrites it).
# Why cgo: SPIRE's server links its SQLite datastore driver (mattn/go-sqlite3) with cgo,
# as upstream's Makefile does; spire-agent is built the same way to match upstream.
set -euo pipefail
export LOG_TAG=spire-build

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib/go-build.sh
. "$here/../lib/go-build.sh"

require_go
command -v gcc >/dev/null 2>&1 ||
  die 3 "'gcc' is not on PATH; SPIRE builds with cgo (apt-get install gcc libc6-dev)"

export CGO_ENABLED=1
# Upstream stamps the tag the same way, without the "v" (Makefile go_ldflags: the datastore
# parses it as semver and panics on "v1.13.3"); without it `-version` says "1.13.3-dev-unk".
LDFLAGS="-s -w -X github.com/spiffe/spire/pkg/common/version.gittag=$SPIRE_VERSION"

build_program() {
  go_build "$here" -ldflags "$LDFLAGS" -o "$BUILD_OUT" "github.com/spiffe/spire/cmd/$1"
}

total_start=$SECONDS
log "cache: $DEPLOY_CACHE_DIR"
build_once "spire/$SPIRE_VERSION/spire-server" build_program spire-server
build_once "spire/$SPIRE_VERSION/spire-agent" build_program spire-agent
log "done in $((SECONDS - total_start))s"
