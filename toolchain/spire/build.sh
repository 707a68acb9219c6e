#!/usr/bin/env bash
# Builds SPIRE (spire-server, spire-agent) once into the versioned cache (toolchain/cache.sh).
# Idempotent: a second run skips both in well under a second.
#
#   npm run spire:build      (or: bash toolchain/spire/build.sh)
#
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

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=toolchain/cache.sh
. "$here/../cache.sh"

SPIRE_VERSION=1.13.3

if ! command -v go >/dev/null 2>&1; then
  echo "spire-build: 'go' is not on PATH; install Go >= 1.26 (e.g. the official tarball)" >&2
  exit 3
fi
if ! command -v gcc >/dev/null 2>&1; then
  echo "spire-build: 'gcc' is not on PATH; SPIRE builds with cgo (apt-get install gcc libc6-dev)" >&2
  exit 3
fi

export CGO_ENABLED=1
# Upstream stamps the tag the same way, without the "v" (Makefile go_ldflags: the datastore
# parses it as semver and panics on "v1.13.3"); without it `-version` says "1.13.3-dev-unk".
LDFLAGS="-s -w -X github.com/spiffe/spire/pkg/common/version.gittag=$SPIRE_VERSION"

build_program() {
  local name=$1
  (cd "$here" && go build -mod=readonly -buildvcs=false -trimpath -ldflags "$LDFLAGS" \
    -o "$BUILD_OUT" "github.com/spiffe/spire/cmd/$name")
}

total_start=$SECONDS
cache_log "cache: $DEPLOY_CACHE_DIR"
build_once "spire/$SPIRE_VERSION/spire-server" build_program spire-server
build_once "spire/$SPIRE_VERSION/spire-agent" build_program spire-agent
cache_log "spire: done in $((SECONDS - total_start))s"
