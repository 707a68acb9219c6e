#!/usr/bin/env bash
# Makes sure the Debian programs of the CI lints are installed: the shellcheck program
# (package shellcheck) and nix-instantiate (package nix-bin, used offline: --parse, --eval).
# Missing ones are installed with apt-get when this runs as root (one `apt-get update` first);
# otherwise it names the package and fails.
#
#   bash toolchain/cd/debian-tools.sh [COMMAND:PACKAGE]...   (default: both)
#
# Exit status: 0 when every program is there, 3 when one is missing.
set -uo pipefail

say() { printf 'debian-tools: %s\n' "$*" >&2; }

want=("$@")
[ "${#want[@]}" -eq 0 ] && want=(shellcheck:shellcheck nix-instantiate:nix-bin)

apt_updated=0
status=0
for pair in "${want[@]}"; do
  cmd=${pair%%:*} pkg=${pair#*:}
  command -v "$cmd" >/dev/null 2>&1 && continue
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "$cmd is missing; installing the Debian package $pkg"
    if [ "$apt_updated" = 0 ]; then
      timeout 600 apt-get update -qq >/dev/null || true
      apt_updated=1
    fi
    DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq "$pkg" >/dev/null || true
  fi
  if ! command -v "$cmd" >/dev/null 2>&1; then
    say "$cmd is missing: install the Debian package $pkg (apt-get install $pkg)"
    status=3
  fi
done
exit "$status"
