# shellcheck shell=bash
# The programs of the test spire node: spire-server from the SPIRE build cache, and Debian's
# sshd, unpacked from its package into the cache: installing openssh-server would start an
# sshd on the host (its postinst) and add a user; we need neither.
#   ensure_programs   root, spire-server, the `spire` host packages, sshd: SSHD_BIN set, or die

fetch_sshd() { fetch_debian_package openssh-server "$BUILD_OUT"; }

ensure_programs() {
  [ "$(id -u)" -eq 0 ] || die 2 "the test spire node needs root (network namespace, mounts)"
  [ -x "$SPIRE_SERVER_BIN" ] || die 3 "spire-server $SPIRE_VERSION is missing ($SPIRE_SERVER_BIN); build it: npm run spire:build"
  # sshd's own libraries (openssh-client brings the rest), ssh-keygen, ip, unshare.
  ensure_host_packages_or_die spire
  local v
  v=$(debian_candidate openssh-server) || die 3 "apt knows no openssh-server package; check the apt sources"
  local key="debian/openssh-server/${v//:/_}"
  build_once "$key" fetch_sshd || die 3 "could not fetch Debian's openssh-server $v"
  SSHD_BIN="$(cache_path "$key")/usr/sbin/sshd"
  [ -x "$SSHD_BIN" ] || die 3 "no sshd in $(cache_path "$key")"
}
