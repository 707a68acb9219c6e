#!/usr/bin/env bash
# Builds the CD workflow's tools once into the versioned cache (toolchain/cache.sh):
#   actionlint v1.7.12   lints .forgejo/workflows/*.yml      (npm run lint:ci)
#   act v0.2.89          runs a workflow on this host         (test/e2e/cd-workflow.test.ts)
# from the Go tools module beside this file (go.mod pins both; go.sum is complete).
#
#   bash toolchain/cd/build.sh [all|actionlint|act]...
#
# Prints on stdout one line per program asked for, e.g.
#   ACTIONLINT=<cache>/actionlint/1.7.12/actionlint
#   ACT=<cache>/act/0.2.89/act
# Cold: about 5 s (actionlint) and 20-40 s (act) on 2 cores; warm: skipped in well under a second.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=toolchain/cache.sh
. "$here/../cache.sh"

ACTIONLINT_VERSION=1.7.12
ACT_VERSION=0.2.89

if ! command -v go >/dev/null 2>&1; then
  echo "cd-build: 'go' is not on PATH; install Go >= 1.26.6" >&2
  exit 3
fi

export CGO_ENABLED=0
GO_BUILD=(go build -mod=readonly -buildvcs=false -trimpath)

build_actionlint() {
  (cd "$here" && "${GO_BUILD[@]}" \
    -ldflags "-s -w -X github.com/rhysd/actionlint.version=v$ACTIONLINT_VERSION" \
    -o "$BUILD_OUT" github.com/rhysd/actionlint/cmd/actionlint)
}

build_act() {
  (cd "$here" && "${GO_BUILD[@]}" -ldflags "-s -w -X main.version=v$ACT_VERSION" \
    -o "$BUILD_OUT" github.com/nektos/act)
}

want=("$@")
[ "${#want[@]}" -eq 0 ] && want=(all)
for w in "${want[@]}"; do
  case $w in
    all | actionlint | act) ;;
    *) echo "usage: build.sh [all|actionlint|act]..." >&2; exit 2 ;;
  esac
done
wants() { printf '%s\n' "${want[@]}" | grep -qx -e all -e "$1"; }

if wants actionlint; then
  build_once "actionlint/$ACTIONLINT_VERSION/actionlint" build_actionlint
  echo "ACTIONLINT=$(cache_path "actionlint/$ACTIONLINT_VERSION/actionlint")"
fi
if wants act; then
  build_once "act/$ACT_VERSION/act" build_act
  echo "ACT=$(cache_path "act/$ACT_VERSION/act")"
fi
