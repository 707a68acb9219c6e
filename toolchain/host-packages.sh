#!/usr/bin/env bash
# The host's Debian packages, from the one list toolchain/host-packages.list.
#
#   bash toolchain/host-packages.sh GROUP...     install what GROUP needs and is missing
#   bash toolchain/host-packages.sh --list GROUP...   print the packages, one a line
#
# GROUP is a group of the list (deploy, cluster, registry, images, spire, tests, lint, ...) or
# a group of groups (@demo, @test: what `npm run demo` and `npm test` need; the @ is optional).
# Missing packages are installed with apt-get as root (`apt-get update` once first; other
# scripts' apt runs are waited for, bounded); otherwise the message names them and the command
# that installs them. Installed packages are checked with dpkg-query only: no network, fast.
# Scripts source toolchain/lib/apt.sh for the same (ensure_host_packages GROUP...).
# Exit status: 0 when everything is installed, 2 for an unknown group, 3 when a package is
# missing and could not be installed.
set -uo pipefail
# shellcheck source=lib/apt.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib/apt.sh"

if [ "${1:-}" = --list ]; then
  shift
  host_packages_of "$@"
  exit
fi
[ "$#" -gt 0 ] || { sed -n '4,5p' "$0" | sed 's/^# *//' >&2; exit 2; }
ensure_host_packages "$@"
