#!/usr/bin/env bash
# Builds OpenTofu's http backend client tests with deploy_state_serve_test.go added, once per
# OpenTofu version and test file, into the cache:
#   $DEPLOY_CACHE_DIR/opentofu-http-client-test/<version>-<sha of the test file>/http.test
# Prints the binary's path. The OpenTofu module comes from Go's module cache (the tofu build
# put it there) or the Go module proxy; its tests' own dependencies likewise.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=SCRIPTDIR/../../../toolchain/lib/go-build.sh
. "$here/../../../toolchain/lib/go-build.sh"
version=v$TOFU_VERSION
test_file="$here/deploy_state_serve_test.go"
key="opentofu-http-client-test/${version#v}-$(sha256sum "$test_file" | cut -c1-12)/http.test"

build() {
  local dir src
  dir=$(go mod download -json "github.com/opentofu/opentofu@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -d "$dir" ] || { echo "build.sh: go mod download found no directory for opentofu $version" >&2; return 3; }
  src=$(mktemp -d)
  trap 'rm -rf "$src"' RETURN
  cp -r "$dir/." "$src"
  chmod -R u+w "$src"
  cp "$test_file" "$src/internal/backend/remote-state/http/"
  (cd "$src" && CGO_ENABLED=0 go test -c -mod=mod -buildvcs=false -trimpath -o "$BUILD_OUT" ./internal/backend/remote-state/http)
}

build_once "$key" build >&2
cache_path "$key"
