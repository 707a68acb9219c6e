#!/usr/bin/env bash
# Builds Helm 4 once into the versioned cache (toolchain/cache.sh), for the benchmarks only
# (bench/: P3 compares `helm upgrade --rollback-on-failure` with `deploy apply`).
# Helm comes from the Go tools module beside this file (go.mod pins helm.sh/helm/v4 v4.3.1;
# go.sum is complete), so nothing but the Go module proxy is needed.
#
#   bash toolchain/helm/build.sh
#
# Prints on stdout:  HELM=<cache>/helm/4.3.1/helm
# Cold: about 1-2 min on 2 cores; warm: skipped in well under a second.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=toolchain/cache.sh
. "$here/../cache.sh"

HELM_VERSION=4.3.1

if ! command -v go >/dev/null 2>&1; then
  echo "helm-build: 'go' is not on PATH; install Go >= 1.26.6" >&2
  exit 3
fi

export CGO_ENABLED=0

build_helm() {
  # The version Helm reports (`helm version`) is stamped like upstream's Makefile does.
  (cd "$here" && go build -mod=readonly -buildvcs=false -trimpath \
    -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=v$HELM_VERSION" \
    -o "$BUILD_OUT" helm.sh/helm/v4/cmd/helm)
}

build_once "helm/$HELM_VERSION/helm" build_helm
echo "HELM=$(cache_path "helm/$HELM_VERSION/helm")"
