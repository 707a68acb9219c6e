# shellcheck shell=bash
# What every Go build script sources (toolchain/build-tools.sh, toolchain/cluster,
# toolchain/spire, toolchain/helm, toolchain/cd, test/integration/state-opentofu-client): the
# versions (toolchain/versions.env), build_once and cache_path (cache.sh: keyed by version,
# skipped when present, one builder per key), log/die, and the Go build step:
#
#   require_go              exit 3 with what to install when `go` is not on PATH
#   go_build DIR ARGS...    `go build ARGS...` inside DIR (a Go tools module, or a source tree)
#                           with -mod=readonly (the committed go.sum is complete; a build never
#                           rewrites it), -buildvcs=false and -trimpath (the same bytes from the
#                           same inputs; the build runs in a read-only tree). CGO_ENABLED comes
#                           from the caller (0 unless it says otherwise).
_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/../versions.env
. "$_LIB/../versions.env"
# shellcheck source=SCRIPTDIR/cache.sh
. "$_LIB/cache.sh"

require_go() {
  command -v go >/dev/null 2>&1 ||
    die 3 "'go' is not on PATH; install Go >= 1.26.6 (e.g. Debian's golang or the official tarball)"
}

go_build() {
  local dir=$1
  shift
  (cd "$dir" && CGO_ENABLED=${CGO_ENABLED:-0} go build -mod=readonly -buildvcs=false -trimpath "$@")
}
