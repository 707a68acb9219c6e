#!/usr/bin/env bash
# Builds the CD workflow's tools once into the versioned cache (toolchain/lib/cache.sh), at the
# versions of toolchain/versions.env:
#   actionlint   lints .forgejo/workflows/*.yml      (npm run lint:ci)
#   act          runs a workflow on this host         (test/e2e/cd-workflow.test.ts)
# from the Go tools module beside this file (go.mod pins both; go.sum is complete).
#
#   bash toolchain/cd/build.sh [all|actionlint|act]...
#
# Prints on stdout one line per program asked for, e.g.
#   ACTIONLINT=<cache>/actionlint/1.7.12/actionlint
#   ACT=<cache>/act/0.2.89/act
# Cold: about 5 s (actionlint) and 20-40 s (act) on 2 cores; warm: skipped in well under a second.
set -euo pipefail
export LOG_TAG=cd-build

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib/go-build.sh
. "$here/../lib/go-build.sh"

want=("$@")
[ "${#want[@]}" -eq 0 ] && want=(all)
for w in "${want[@]}"; do
  case $w in
    all | actionlint | act) ;;
    *) echo "usage: build.sh [all|actionlint|act]..." >&2; exit 2 ;;
  esac
done
wants() { printf '%s\n' "${want[@]}" | grep -qx -e all -e "$1"; }

require_go

build_actionlint() {
  go_build "$here" -ldflags "-s -w -X github.com/rhysd/actionlint.version=v$ACTIONLINT_VERSION" \
    -o "$BUILD_OUT" github.com/rhysd/actionlint/cmd/actionlint
}

build_act() {
  go_build "$here" -ldflags "-s -w -X main.version=v$ACT_VERSION" \
    -o "$BUILD_OUT" github.com/nektos/act
}

if wants actionlint; then
  build_once "actionlint/$ACTIONLINT_VERSION/actionlint" build_actionlint
  echo "ACTIONLINT=$(cache_path "actionlint/$ACTIONLINT_VERSION/actionlint")"
fi
if wants act; then
  build_once "act/$ACT_VERSION/act" build_act
  echo "ACT=$(cache_path "act/$ACT_VERSION/act")"
fi
