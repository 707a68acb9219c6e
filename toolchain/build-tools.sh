#!/usr/bin/env bash
# Builds OpenTofu and the four providers the CDKTF bindings pin, once, into the versioned cache
# (toolchain/lib/cache.sh), and writes the CLI config that serves the providers to `tofu init`
# as an offline filesystem mirror. Idempotent: a second run skips everything in seconds.
#
#   npm run tools            (or: bash toolchain/build-tools.sh)
#   bash toolchain/build-tools.sh --race-test   the provider patches' tests under the race
#                            detector only (npm test runs it); builds nothing
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
#   DEPLOY_PROVIDER_PATCHES  `all` (default): apply toolchain/tofu/patches/<name>-<version>/*.patch
#                            to those providers (today: the kubernetes provider's per-kind type
#                            cache, docs/provider-patch.md) and serve them from the patched
#                            mirror; `none`: build and serve the stock providers only. `deploy`
#                            reads the same variable to choose the mirror.
#
# What is missing is checked before anything is built: without the sources (and without
# DEPLOY_PROVIDERS=download) it stops at once, exit 3, with one line naming the providers and
# both ways out, instead of after a long tofu build.
#
# Outputs:
#   $DEPLOY_CACHE_DIR/tofu/<version>/tofu
#   $DEPLOY_CACHE_DIR/mirror/<registry host>/hashicorp/<name>/<version>/linux_amd64/terraform-provider-<name>_v<version>
#   $DEPLOY_CACHE_DIR/tofu.rc   (point TF_CLI_CONFIG_FILE at it; `deploy` does so by itself)
#   with patches (default), besides the stock mirror's unpatched providers:
#   $DEPLOY_CACHE_DIR/providers/<name>/<version>/patched-<sha256 of its patches, 12 hex>/terraform-provider-<name>_v<version>
#   $DEPLOY_CACHE_DIR/mirror-patched/...   the same layout as mirror/: the patched builds and
#                                          the stock mirror's others, hard links
#   $DEPLOY_CACHE_DIR/tofu-patched.rc
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
# The source tree of provider $1 at version $2 (it may be missing), whether it is there, and
# where the trees are looked for, in words for a message.
source_of() { echo "${DEPLOY_PROVIDER_SOURCES:-}/terraform-provider-$1-$2"; }
has_source() { [ -n "${DEPLOY_PROVIDER_SOURCES:-}" ] && [ -f "$(source_of "$1" "$2")/go.mod" ]; }
sources_where=${DEPLOY_PROVIDER_SOURCES:-"(DEPLOY_PROVIDER_SOURCES is unset and $repo/../shared/upstream does not exist)"}

PROVIDERS_MODE=${DEPLOY_PROVIDERS:-build}
case $PROVIDERS_MODE in
  build | download) ;;
  *) die 2 "DEPLOY_PROVIDERS must be 'build' or 'download', not '$PROVIDERS_MODE'" ;;
esac
PATCHES_MODE=${DEPLOY_PROVIDER_PATCHES:-all}
case $PATCHES_MODE in
  all | none) ;;
  *) die 2 "DEPLOY_PROVIDER_PATCHES must be 'all' or 'none', not '$PATCHES_MODE'" ;;
esac

provider_key() { # name version
  echo "mirror/$REGISTRY_HOST/hashicorp/$1/$2/$MIRROR_PLATFORM/terraform-provider-${1}_v$2"
}

# The patches of one provider tree, or nothing: toolchain/tofu/patches/<name>-<version>/*.patch
patch_dir_of() { # name version
  local d="$here/tofu/patches/$1-$2"
  compgen -G "$d/*.patch" >/dev/null && echo "$d"
  return 0
}

# The first 12 hex digits of the sha256 of the patches (names and contents, in name order): the
# patched build's cache key, so a changed patch builds once and an unchanged one is skipped.
patch_hash() { # dir
  (cd "$1" && for p in *.patch; do printf '%s\n' "$p"; cat "$p"; done) | sha256sum | cut -c1-12
}

# The cache key of a provider's build: the patched one where it has patches (unless
# DEPLOY_PROVIDER_PATCHES=none), else the stock mirror's path.
key_of() { # name version
  local dir
  dir=$(patch_dir_of "$1" "$2")
  if [ "$PATCHES_MODE" = all ] && [ -n "$dir" ]; then
    echo "providers/$1/$2/patched-$(patch_hash "$dir")/terraform-provider-${1}_v$2"
  else
    provider_key "$1" "$2"
  fi
}

# Before any build: which providers are neither in the cache nor buildable from a source tree.
missing=()
if [ "$PROVIDERS_MODE" = build ]; then
  for entry in "${pinned[@]}"; do
    name=${entry%%:*} version=${entry#*:}
    [ -e "$(cache_path "$(key_of "$name" "$version")")" ] && continue
    has_source "$name" "$version" && continue
    missing+=("$name $version")
  done
fi
if [ "${#missing[@]}" -gt 0 ]; then
  names=$(printf '%s, ' "${missing[@]}")
  say "no source for the providers ${names%, } in $sources_where: set DEPLOY_PROVIDER_SOURCES to a directory of terraform-provider-<name>-<version>/ source trees, or set DEPLOY_PROVIDERS=download to let \`tofu init\` download the pinned providers (needs network access to the OpenTofu registry); nothing was built"
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

# A writable copy $1 of the source tree $2 (the sources stay read-only) with the patches of $3
# applied in name order; sets patch_pkgs (the Go packages of the tests they add) and patch_tests (the
# tests they add, func Test...).
patched_tree() { # tree src patch_dir
  local tree=$1 src=$2 p
  patch_pkgs=() patch_tests=()
  rm -rf "$tree"
  cp -R "$src" "$tree"
  chmod -R u+w "$tree"
  for p in "$3"/*.patch; do
    log "applying $(basename "$p")"
    (cd "$tree" && git apply -p1 "$p") || die 1 "the patch $p does not apply to $src"
    # The patch's own tests (the upstream tests of these packages need test data that the
    # source trees leave out), in the Go packages of the test files it touches: a patch that
    # also changes a package without tests of its own (0003's one line in ./kubernetes/) does
    # not compile that package's upstream tests (a minute, and more under -race) for nothing.
    mapfile -t -O "${#patch_pkgs[@]}" patch_pkgs < <(sed -n 's|^+++ b/\(.*\)/[^/]*_test\.go$|./\1/|p' "$p" | sort -u)
    mapfile -t -O "${#patch_tests[@]}" patch_tests < <(sed -n 's|^+func \(Test[A-Za-z0-9_]*\)(.*|\1|p' "$p")
  done
  # each package once, in the order the patches first name it (0002 and 0004 both test ./manifest/provider/)
  mapfile -t patch_pkgs < <(printf '%s\n' "${patch_pkgs[@]}" | awk '!seen[$0]++')
  [ "${#patch_tests[@]}" -gt 0 ] || die 1 "the patches in $3 add no Go test (func Test...): a patch must prove itself"
}

# go test of the patches' own tests in tree $1 (after patched_tree), with the flags that follow:
# each test's verdict and what it logs (a generated test's seed, a failure's message).
test_patches() { # tree go-test-flags...
  local tree=$1 run
  shift
  run="^($(IFS='|'; echo "${patch_tests[*]}"))\$"
  log "testing the patched packages ${patch_pkgs[*]}: ${#patch_tests[@]} tests $*"
  (cd "$tree" && go test -mod=readonly -count=1 "$@" -run "$run" -v "${patch_pkgs[@]}" | grep -E '^(--- |ok|FAIL|PASS)|^ +[a-z_0-9]+_test\.go:[0-9]+: ')
}

# The patched build: the patched tree, the patches' tests run (a patch that fails its tests is
# never installed), then the same build as the stock one. The tests run with CGO_ENABLED=0 like
# the build, so they share its compiled packages: the race detector (cgo, every dependency
# compiled again) runs in `npm test` instead (--race-test below), not on the way to a first
# deploy (issue 32, P11).
build_patched_provider() {
  local src=$1 version=$2 patch_dir=$3
  local tree="$BUILD_OUT.src"
  patched_tree "$tree" "$src" "$patch_dir"
  test_patches "$tree" || die 1 "the tests of the patched $src failed; nothing was installed"
  go_build "$tree" -ldflags "-s -w -X main.version=$version" -o "$BUILD_OUT.bin" .
  rm -rf "$tree"
  mv "$BUILD_OUT.bin" "$BUILD_OUT"
}

# Puts $2 at $1 as a hard link (a copy across file systems), replaced atomically when it is
# not already that file.
link_into() { # dest src
  [ "$1" -ef "$2" ] && return 0
  mkdir -p "$(dirname "$1")"
  ln -f "$2" "$1.tmp.$$" 2>/dev/null || cp -f "$2" "$1.tmp.$$"
  mv -f "$1.tmp.$$" "$1"
}

# Writes the CLI config $1 that serves the mirror $2 (every run: it names absolute paths).
write_rc() { # rc mirror
  local rc=$1 tmp_rc="$1.tmp.$$"
  cat >"$tmp_rc" <<RC
# Written by toolchain/build-tools.sh: serve the providers built from source, offline.
provider_installation {
  filesystem_mirror {
    path    = "$2"
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
}

# --race-test: the patches' tests again under the race detector (cgo: needs gcc), in a
# temporary tree; builds and installs nothing. test/integration/provider-patches.test.ts.
if [ "${1:-}" = --race-test ]; then
  command -v gcc >/dev/null 2>&1 ||
    die 3 "the race detector needs a C compiler (gcc, libc6-dev): \`bash toolchain/host-packages.sh @tests\` installs them"
  work=$(mktemp -d "${TMPDIR:-/tmp}/provider-race.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  tested=0
  export CGO_ENABLED=1
  for entry in "${pinned[@]}"; do
    name=${entry%%:*}
    version=${entry#*:}
    dir=$(patch_dir_of "$name" "$version")
    [ -n "$dir" ] || continue
    # the build may have taken the provider from the cache; the race test needs its source
    has_source "$name" "$version" ||
      die 3 "no source for the patched provider $name $version in $sources_where: the race test runs the patches' tests on its source tree; set DEPLOY_PROVIDER_SOURCES to a directory of terraform-provider-<name>-<version>/ source trees"
    patched_tree "$work/$name" "$(source_of "$name" "$version")" "$dir"
    test_patches "$work/$name" -race || die 1 "the race test of the patched $name $version failed"
    tested=$((tested + 1))
  done
  log "race-tested the patches of $tested provider(s) in $((SECONDS - total_start))s"
  exit 0
fi

build_once "tofu/$TOFU_VERSION/tofu" build_tofu

if [ "$PROVIDERS_MODE" = download ]; then
  log "DEPLOY_PROVIDERS=download: no providers built, no tofu.rc written; \`tofu init\` downloads them"
  log "done in $((SECONDS - total_start))s"
  exit 0
fi

# Each provider once: stock, or patched where it has patches (unless DEPLOY_PROVIDER_PATCHES=none).
for entry in "${pinned[@]}"; do
  name=${entry%%:*}
  version=${entry#*:}
  src=$(source_of "$name" "$version")
  key=$(key_of "$name" "$version")
  if [ "$key" = "$(provider_key "$name" "$version")" ]; then
    build_once "$key" build_provider "$src" "$version"
  else
    build_once "$key" build_patched_provider "$src" "$version" "$(patch_dir_of "$name" "$version")"
  fi
done

# The CLI config: only the mirror, no `direct` block, so `tofu init` never reaches a registry.
# DEPLOY_PROVIDER_PATCHES=none: the stock mirror (mirror/, tofu.rc: the layout they always
# had). Else the patched mirror: the same layout, hard links to each provider's build above.
if [ "$PATCHES_MODE" = none ]; then
  write_rc "$DEPLOY_CACHE_DIR/tofu.rc" "$DEPLOY_CACHE_DIR/mirror"
else
  # Beside the mirror, the list of the patches its builds have (`<name> <version> <patch>` a
  # line): deploy reads it to know what the providers do (src/tools/providers.ts
  # whyNoComputedFieldsPatch: a plan may skip tofu's refresh only with that patch).
  patch_list="$DEPLOY_CACHE_DIR/mirror-patched.patches"
  : >"$patch_list.tmp.$$"
  for entry in "${pinned[@]}"; do
    name=${entry%%:*}
    version=${entry#*:}
    link_into "$DEPLOY_CACHE_DIR/mirror-patched/$REGISTRY_HOST/hashicorp/$name/$version/$MIRROR_PLATFORM/terraform-provider-${name}_v$version" \
      "$(cache_path "$(key_of "$name" "$version")")"
    dir=$(patch_dir_of "$name" "$version")
    if [ -n "$dir" ]; then
      for p in "$dir"/*.patch; do echo "$name $version $(basename "$p")" >>"$patch_list.tmp.$$"; done
    fi
  done
  mv -f "$patch_list.tmp.$$" "$patch_list"
  write_rc "$DEPLOY_CACHE_DIR/tofu-patched.rc" "$DEPLOY_CACHE_DIR/mirror-patched"
fi
log "done in $((SECONDS - total_start))s (DEPLOY_PROVIDER_PATCHES=$PATCHES_MODE)"
