# shellcheck shell=bash
# Debian packages of the host: what a script needs and is missing is installed with apt-get
# (as root), from the one list toolchain/host-packages.list.
#
#   host_packages_of GROUP...      the packages of the groups (groups of groups expanded), each
#                                  once, in list order; 2 for an unknown group
#   ensure_host_packages GROUP...  install the groups' missing packages; 2 unknown group, 3 failed
#   ensure_host_packages_or_die GROUP...  the same, or die 3
#   ensure_debian_packages PKG...  install the named packages that are missing; 3 when it cannot
#   apt_update                     `apt-get update`, waiting for other apt runs (bounded)
#   fetch_debian_package PKG DIR   download PKG's .deb (not installed: no maintainer scripts run)
#                                  and unpack it into DIR
#   debian_candidate PKG           the version apt would install (after an update when apt
#                                  knows none yet); fails when there is none
#
# GROUP is a group of the list (deploy, cluster, registry, images, spire, tests, lint, ...) or
# a group of groups (@demo, @test: what `npm run demo` and `npm test` need; the @ is optional).
# Installed packages are checked with dpkg-query only: no network, fast. Other scripts' apt
# runs are waited for (dpkg's lock, 600 s).
_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/log.sh
. "$_LIB/log.sh"
_HOST_PACKAGES_LIST="$(cd "$_LIB/.." && pwd)/host-packages.list"

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

apt_update() {
  apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
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
  if ! { apt_update && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
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

ensure_host_packages_or_die() {
  ensure_host_packages "$@" || die 3 "Debian packages missing (above)"
}

_debian_candidate() {
  apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: *//p' | head -n1
}

debian_candidate() {
  local v
  v=$(_debian_candidate "$1")
  if [ -z "$v" ] || [ "$v" = "(none)" ]; then
    apt_update || true
    v=$(_debian_candidate "$1")
  fi
  [ -n "$v" ] && [ "$v" != "(none)" ] && printf '%s\n' "$v"
}

fetch_debian_package() {
  local pkg=$1 out=$2
  mkdir -p "$out.deb"
  (cd "$out.deb" && apt-get -o APT::Sandbox::User=root download -qq "$pkg" >&2) || { rm -rf "$out.deb"; return 3; }
  dpkg-deb -x "$out.deb/${pkg}"_*.deb "$out"
  rm -rf "$out.deb"
}
