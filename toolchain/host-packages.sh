#!/usr/bin/env bash
# The host's Debian packages, from the one list toolchain/host-packages.list.
#
#   bash toolchain/host-packages.sh GROUP...     install what GROUP needs and is missing
#   bash toolchain/host-packages.sh --list GROUP...   print the packages, one a line
#   . toolchain/host-packages.sh                 (sourced) defines:
#     ensure_host_packages GROUP...    the same as the first form; returns 3 on failure
#     ensure_debian_packages PKG...    install the named packages that are missing
#
# GROUP is a group of the list (deploy, cluster, registry, images, spire, tests, lint, ...) or
# a group of groups (@demo, @test: what `npm run demo` and `npm test` need; the @ is optional).
# Missing packages are installed with apt-get as root (`apt-get update` once first; other
# scripts' apt runs are waited for, bounded); otherwise the message names them and the command
# that installs them. Installed packages are checked with dpkg-query only: no network, fast.
# Exit status: 0 when everything is installed, 2 for an unknown group, 3 when a package is
# missing and could not be installed.

_HOST_PACKAGES_LIST="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/host-packages.list"

# Prints the packages of the groups (groups of groups expanded), each once, in list order.
host_packages_of() {
  local want=" " g line
  for g in "$@"; do
    g=${g#@}
    line=$(awk -v g="@$g" '$1 == g { $1 = ""; print }' "$_HOST_PACKAGES_LIST")
    if [ -n "$line" ]; then
      # shellcheck disable=SC2086 # one group a word
      want+="$(printf '%s ' $line)"
    elif awk -v g="$g" '$1 == g { found = 1 } END { exit !found }' "$_HOST_PACKAGES_LIST"; then
      want+="$g "
    else
      echo "host-packages: unknown group '$g' (see $_HOST_PACKAGES_LIST)" >&2
      return 2
    fi
  done
  awk -v want="$want" '
    /^[^#@]/ && index(want, " " $1 " ") && !seen[$2]++ { print $2 }' "$_HOST_PACKAGES_LIST"
}

ensure_debian_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "missing Debian packages: ${missing[*]}; install them: apt-get install ${missing[*]}" >&2
    return 3
  fi
  echo "installing missing Debian packages: ${missing[*]}" >&2
  # Other scripts may run apt at the same time: wait for dpkg's lock, bounded.
  if ! { apt-get -o DPkg::Lock::Timeout=600 update -qq >&2 &&
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
      --no-install-recommends "${missing[@]}" >&2; }; then
    echo "apt-get install ${missing[*]} failed; check the apt sources in /etc/apt" >&2
    return 3
  fi
}

ensure_host_packages() {
  local pkgs
  pkgs=$(host_packages_of "$@") || return 2
  # shellcheck disable=SC2086 # one package a word
  ensure_debian_packages $pkgs
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -uo pipefail
  if [ "${1:-}" = --list ]; then
    shift
    host_packages_of "$@"
    exit
  fi
  [ "$#" -gt 0 ] || { sed -n '4,6p' "$0" | sed 's/^# *//' >&2; exit 2; }
  ensure_host_packages "$@"
fi
