#!/usr/bin/env bash
# Builds the base root file system shared by every node image variant into $1:
#   $1/root      the tree (Debian 12 minbase + systemd as /sbin/init, dbus, iproute2,
#                openssh-server, bash), configured to boot as a container's PID 1
#   $1/created   its build time (RFC 3339), used as the image's "created"
# Called by build.sh through build_once, which sets BUILD_OUT and renames it into the cache.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LOG_TAG=images/rootfs
. "$HERE/lib/common.sh"
. "$HERE/lib/debian-mirror.sh"
. "$HERE/lib/docker-archive.sh"

SUITE=bookworm
PACKAGES=systemd,systemd-sysv,dbus,iproute2,openssh-server,bash

# Units that must not run in a node pod.
MASKED_UNITS=(
  # FR-011: the pod's CNI address and routes on eth0 must stay; nothing may manage links.
  systemd-networkd.service systemd-networkd.socket systemd-networkd-wait-online.service
  # Periodic jobs that reach the network or scrub file systems the pod does not own; their
  # failure, hours after boot, would turn systemd `degraded` and the pod NotReady.
  apt-daily.timer apt-daily-upgrade.timer apt-daily.service apt-daily-upgrade.service
  e2scrub_all.timer e2scrub_all.service e2scrub_reap.service fstrim.timer
  # The root file system and the tmpfs mounts are the runtime's, not systemd's.
  systemd-remount-fs.service
  # No consoles in a pod.
  console-getty.service getty@tty1.service
)

out=${1:-${BUILD_OUT:?usage: rootfs.sh <out-dir> (or BUILD_OUT set by build_once)}}
[ "$(id -u)" -eq 0 ] || die 3 "debootstrap needs root"
ensure_host_packages_or_die images

read -r mirror keyring < <(debian_mirror "$SUITE") ||
  die 3 "no apt source for Debian $SUITE found in /etc/apt; set DEPLOY_DEBIAN_MIRROR to a Debian mirror URI"
keyring_args=()
[ -n "${keyring:-}" ] && [ -f "$keyring" ] && keyring_args=(--keyring="$keyring")

mkdir -p "$DEPLOY_CACHE_DIR/.partial"
scratch=$(mktemp -d "$DEPLOY_CACHE_DIR/.partial/debootstrap.XXXXXX")
trap 'remove_tree "$scratch"' EXIT
root=$scratch/root

log "debootstrap $SUITE (minbase + $PACKAGES) ..."
if ! debootstrap --variant=minbase --include="$PACKAGES" "${keyring_args[@]}" \
  "$SUITE" "$root" "$mirror" >"$scratch/debootstrap.log" 2>&1; then
  tail -n 20 "$scratch/debootstrap.log" >&2
  [ -f "$root/debootstrap/debootstrap.log" ] && tail -n 20 "$root/debootstrap/debootstrap.log" >&2
  die 3 "debootstrap failed (log above)"
fi
unmount_under "$root"

log "configuring the tree ..."
# The machine ID comes from the runtime (container_uuid, FR-013): systemd only does that
# when /etc/machine-id is empty; dbus then reads /etc/machine-id too.
: >"$root/etc/machine-id"
rm -f "$root/var/lib/dbus/machine-id"
# Host keys live under /var/lib/ssh (FR-014), made on first boot; none in the image.
rm -f "$root"/etc/ssh/ssh_host_*
# The runtime bind-mounts these three; keep neutral contents (debootstrap copies the host's).
echo node >"$root/etc/hostname"
: >"$root/etc/resolv.conf"
printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
# The apt sources name this machine's mirror; a node never runs apt.
rm -f "$root/etc/apt/sources.list" "$root"/etc/apt/sources.list.d/*

# Our files (units, sshd configuration), modes from the repository's executable bits.
(cd "$HERE/files" && find . -type f | sort) | while read -r f; do
  mode=0644
  [ -x "$HERE/files/$f" ] && mode=0755
  install -D -m "$mode" "$HERE/files/$f" "$root/$f"
done
units=$root/etc/systemd/system
mkdir -p "$units/ssh.service.requires" "$units/multi-user.target.wants"
ln -sfn ../ssh-host-keys.service "$units/ssh.service.requires/ssh-host-keys.service"
ln -sfn /lib/systemd/system/ssh.service "$units/multi-user.target.wants/ssh.service"
for unit in "${MASKED_UNITS[@]}"; do
  ln -sfn /dev/null "$units/$unit"
done

# Smaller image: caches, lists, docs, logs; device nodes and mount points stay empty (the
# runtime provides /dev, /proc, /sys, /run, /tmp).
rm -rf "${root:?}"/var/cache/apt/* "${root:?}"/var/lib/apt/lists/* "${root:?}"/var/cache/debconf/*-old \
  "${root:?}"/usr/share/doc/* "${root:?}"/usr/share/man/* "${root:?}"/usr/share/info/* \
  "${root:?}"/dev/* "${root:?}"/proc/* "${root:?}"/sys/* "${root:?}"/run/* "${root:?}"/tmp/* "${root:?}/debootstrap"
find "$root/var/log" -type f -delete
[ -x "$root/sbin/init" ] || die 1 "the tree has no /sbin/init"

mkdir -p "$out"
date -u +%Y-%m-%dT%H:%M:%SZ >"$out/created"
mv -T "$root" "$out/root"
# The tree's layer, shared by every variant and configuration (variant.sh), written here, once,
# under build_once's lock and before any variant links the tree: a variant's `cp -al` (and the
# removal of its copy) changes the link count, so the ctime, of every file of the tree, and a
# tar of the tree at that moment fails ("file changed as we read it"). Written by the first
# variant, as before, two variants built at once on a cold machine (the e2e files run two at a
# time) broke each other's archive.
tar_layer "$out/root" "$out/base-layer.tar"
log "rootfs ready: $(du -sm "$out/root" | cut -f1) MB, its layer $(du -sm "$out/base-layer.tar" | cut -f1) MB"
