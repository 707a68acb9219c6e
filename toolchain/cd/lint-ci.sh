#!/usr/bin/env bash
# The lints of CI (`npm run lint:ci`):
#   ShellCheck        every shell script of the repository (tracked or new, not ignored):
#                     files named *.sh and files with a sh/bash shebang. Sourced libraries
#                     (no shebang) are checked as bash with SC2034 off: their variables are
#                     for the scripts that source them. `-x -P SCRIPTDIR` follows `.` lines.
#   actionlint        .forgejo/workflows/*.yml (actionlint, toolchain/versions.env; built once into the cache
#                     by toolchain/cd/build.sh; it runs shellcheck on the `run:` scripts too)
#   nix-instantiate   --parse of every *.nix file (syntax only: nothing is fetched or built)
# Missing programs: shellcheck and nix-instantiate come from Debian (shellcheck, nix-bin) and
# are installed from the `lint` group of
# toolchain/host-packages.list (apt-get, as root); otherwise it names the package and fails.
# Exit status: 0 when every lint passes, 1 when one reports a problem, 3 when a tool is missing.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$repo" || exit 3

export LOG_TAG=lint-ci
# shellcheck source=../lib/log.sh
. "$here/../lib/log.sh"

bash "$here/../host-packages.sh" lint || exit 3
actionlint=$(bash "$here/build.sh" actionlint | sed -n 's/^ACTIONLINT=//p')
[ -x "$actionlint" ] || {
  say "actionlint could not be built (toolchain/cd/build.sh actionlint)"
  exit 3
}

# Files of the work tree (tracked, or new and not ignored), NUL-separated.
files() { git ls-files -z -co --exclude-standard -- "$@"; }

failed=0

scripts=() libraries=()
while IFS= read -r -d '' f; do
  [ -f "$f" ] || continue
  first=$(head -n 1 "$f")
  case $first in
    '#!'*sh*) scripts+=("$f") ;;
    *) [[ $f == *.sh ]] && libraries+=("$f") ;;
  esac
done < <(files)

say "shellcheck: ${#scripts[@]} scripts, ${#libraries[@]} sourced libraries"
if [ "${#scripts[@]}" -gt 0 ] && ! shellcheck -x -P SCRIPTDIR "${scripts[@]}"; then
  failed=1
fi
if [ "${#libraries[@]}" -gt 0 ] && ! shellcheck -x -P SCRIPTDIR -s bash -e SC2034 "${libraries[@]}"; then
  failed=1
fi

workflows=()
while IFS= read -r -d '' f; do [ -f "$f" ] && workflows+=("$f"); done < <(files '.forgejo/workflows/*.yml' '.forgejo/workflows/*.yaml')
say "actionlint: ${#workflows[@]} workflows"
if [ "${#workflows[@]}" -gt 0 ] && ! "$actionlint" -shellcheck "$(command -v shellcheck)" "${workflows[@]}"; then
  failed=1
fi

nix_files=()
while IFS= read -r -d '' f; do [ -f "$f" ] && nix_files+=("$f"); done < <(files '*.nix')
say "nix-instantiate --parse: ${#nix_files[@]} files"
for f in "${nix_files[@]}"; do
  if ! nix-instantiate --parse "$f" >/dev/null; then
    say "$f does not parse"
    failed=1
  fi
done

if [ "$failed" = 0 ]; then
  say "all lints passed"
else
  say "some lints failed (see above)"
fi
exit "$failed"
