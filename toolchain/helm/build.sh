#!/usr/bin/env bash
# Builds Helm 4 once into the versioned cache (toolchain/lib/cache.sh), for the benchmarks only
# (bench/: P3 compares `helm upgrade --rollback-on-failure` with `deploy apply`).
# Helm comes from the Go tools module beside this file (go.mod pins helm.sh/helm/v4 at
# HELM_VERSION of toolchain/versions.env; go.sum is complete), so nothing but the Go module
# proxy is needed.
#
#   bash toolchain/helm/build.sh
#
# Prints on stdout:  HELM=<cache>/helm/<version>/helm
# Cold: about 1-2 min on 2 cores; warm: skipped in well under a second.
set -euo pipefail
export LOG_TAG=helm-build

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib/go-build.sh
. "$here/../lib/go-build.sh"

require_go

build_helm() {
  # The version Helm reports (`helm version`) is stamped like upstream's Makefile does.
  go_build "$here" -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=v$HELM_VERSION" \
    -o "$BUILD_OUT" helm.sh/helm/v4/cmd/helm
}

build_once "helm/$HELM_VERSION/helm" build_helm
echo "HELM=$(cache_path "helm/$HELM_VERSION/helm")"
