# shellcheck shell=bash
# ensure_debian_packages PKG...: installs the Debian packages that are missing (as root,
# `apt-get update` once first), so a fresh machine builds and runs the cluster; otherwise
# fails naming them and the command that installs them. Sourced by build.sh and
# test/cluster/cluster.sh.
ensure_debian_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "missing Debian packages: ${missing[*]}; install them: apt-get install ${missing[*]}" >&2
    return 3
  fi
  echo "installing missing Debian packages: ${missing[*]}" >&2
  # Other scripts may run apt at the same time: wait for dpkg's lock, bounded.
  if ! { apt-get -o DPkg::Lock::Timeout=600 update -qq >&2 &&
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
      --no-install-recommends "${missing[@]}" >&2; }; then
    echo "apt-get install ${missing[*]} failed; check the apt sources" >&2
    return 3
  fi
}
