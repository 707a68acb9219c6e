#!/usr/bin/env bash
# Boots a node image archive for real with runc, the way the cluster runs it (systemd as
# PID 1, tmpfs on /run, /run/lock and /tmp, env container_uuid, the CRI's default
# capabilities), and reports what systemd says. No user namespace: the cluster's runtime
# handler adds that (test/cluster, part A); this checks the image itself.
#
#   test/cluster/images/boot-check.sh <archive.tar> [--uuid UUID] [--var-lib DIR] [--timeout SECONDS] [--journal]
#                                     [--mount SRC:DEST]... [--settle SECONDS] [--unit UNIT]...
#
# --var-lib DIR   bind-mounts DIR on /var/lib (as the node's state claim is); by default an
#                 empty temporary directory, so the first boot of a fresh claim is checked.
# --timeout       deadline for boot and for shutdown each (default 60 s).
# --journal       print the boot's journal (warnings and worse) to stderr; it is printed
#                 anyway when the state is not `running`.
# --mount SRC:DEST  bind-mounts the host's SRC read-only on DEST (a pod's volume, e.g. the
#                 SPIRE token and ConfigMap of the `spire` variant); repeatable.
# --settle S      waits S seconds after boot before reading the state (a unit that restarts
#                 or fails late shows then).
# --unit UNIT     prints UNIT=<name> <ActiveState>/<SubState> restarts=<NRestarts>; repeatable.
# Prints KEY=VALUE lines on stdout (values on one line, newlines as \n):
#   STATE           `systemctl is-system-running` once boot is over (running, degraded, ...)
#   FAILED_UNITS    failed units, comma-separated
#   MACHINE_ID      /etc/machine-id inside;  UUID  the container_uuid given
#   PROBE_EXIT / PROBE_OUTPUT   the Deployment's readiness probe command, run inside
#   NETWORKD        `systemctl is-enabled systemd-networkd.service`
#   ETH0            eth0's IPv4 address and default route after boot, as a CNI plugin set
#                   them before start (FR-011: nothing in the node may change them);
#                   ETH0_BEFORE  the same, as set
# The container gets its own network namespace with a veth pair (eth0 inside, 10.254.N.2/30,
# default route via .1), like a pod's; both are deleted on exit.
#   SSH             `systemctl is-active ssh.service`;  SSH_HOST_KEY  its ed25519 public key
#   BOOT_MS         from start until boot was over;  STOP_MS  from signal 37 until stopped
# Exits 0 when the container booted and stopped (whatever the state), 3 otherwise.
# Everything it starts is removed on exit: the container, its cgroups, the bundle.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LOG_TAG=images/boot-check
. "$HERE/lib/common.sh"

archive=${1:?usage: boot-check.sh <archive.tar> [--uuid UUID] [--var-lib DIR] [--timeout SECONDS] [--journal]}
shift
uuid="" var_lib="" timeout=60 journal=0 settle=0
extra_mounts="" units=()
while [ "$#" -gt 0 ]; do
  case $1 in
    --mount)
      [[ $2 == /*:/* ]] || die 2 "--mount wants SRC:DEST, both absolute, got '$2'"
      [ -e "${2%%:*}" ] || die 2 "--mount: no ${2%%:*}"
      extra_mounts+=", {\"destination\": \"${2#*:}\", \"type\": \"bind\", \"source\": \"${2%%:*}\", \"options\": [\"rbind\", \"ro\"]}"
      shift 2
      ;;
    --settle) settle=$2; shift 2 ;;
    --unit) units+=("$2"); shift 2 ;;
    --uuid) uuid=$2; shift 2 ;;
    --var-lib) var_lib=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --journal) journal=1; shift ;;
    *) die 2 "unknown argument '$1'" ;;
  esac
done
[ -f "$archive" ] || die 2 "no archive at $archive"
[ "$(id -u)" -eq 0 ] || die 3 "runc needs root here"
ensure_host_packages_or_die images
[ -n "$uuid" ] || uuid=$(cat /proc/sys/kernel/random/uuid)

# The readiness probe of the Deployment (see the lead's shared shapes); it runs in the container.
# shellcheck disable=SC2016
PROBE='state=$(systemctl is-system-running 2>/dev/null); echo "systemd: ${state:-unknown}"; [ "$state" = running ] && exit 0; systemctl --failed --no-legend --plain 2>/dev/null; exit 1'

id=deploy-image-check-$$-$RANDOM
scratch=$(mktemp -d "${TMPDIR:-/tmp}/deploy-image-check.XXXXXX")
runc_root=$scratch/runc
cgroup_parent=deploy-image-check
netns=dic-$$-$RANDOM
cleanup() {
  if [ -d "$runc_root" ]; then
    runc --root "$runc_root" kill "$id" KILL >/dev/null 2>&1 || true
    runc --root "$runc_root" delete --force "$id" >/dev/null 2>&1 || true
  fi
  # runc removes the container's cgroups; the parent is ours too (empty once no check runs).
  local _ ctrls path mnt
  while IFS=: read -r _ ctrls path; do
    ctrls=${ctrls#name=}
    mnt=/sys/fs/cgroup/${ctrls%%,*}
    [ -n "$ctrls" ] || mnt=/sys/fs/cgroup/unified # the v2 line, "0::<path>"
    rmdir "${mnt%/}${path%/}/$cgroup_parent" 2>/dev/null || true
  done </proc/self/cgroup
  ip netns delete "$netns" 2>/dev/null || true # takes the veth pair with it
  remove_tree "$scratch"
}
trap cleanup EXIT

bundle=$scratch/bundle
mkdir -p "$bundle/rootfs" "$runc_root"
# Every layer, bottom first, as the runtime stacks them (a variant is the tree's layer and a
# small one of what it adds; our layers have no whiteouts).
mapfile -t layers < <(tar --occurrence=1 -xOf "$archive" manifest.json |
  sed -n 's/.*"Layers":\[\([^]]*\)\].*/\1/p' | tr ',' '\n' | tr -d '"' | sed '/^$/d')
[ "${#layers[@]}" -gt 0 ] || die 2 "$archive has no manifest.json with a layer: not a docker archive"
for layer in "${layers[@]}"; do
  tar --occurrence=1 -xOf "$archive" "$layer" | tar -x --numeric-owner -C "$bundle/rootfs"
done
if [ -z "$var_lib" ]; then
  var_lib=$scratch/var-lib
  mkdir -p "$var_lib"
fi

# A pod-like network: eth0 with an address and a default route, set before systemd starts.
subnet=$(((RANDOM % 250) + 1))
ip netns add "$netns"
host_if=dic$$
ip link add "$host_if" type veth peer name eth0 netns "$netns"
ip addr add "10.254.$subnet.1/30" dev "$host_if"
ip link set "$host_if" up
ip -n "$netns" addr add "10.254.$subnet.2/30" dev eth0
ip -n "$netns" link set eth0 up
ip -n "$netns" link set lo up
ip -n "$netns" route add default via "10.254.$subnet.1"
eth0_of() { # "<addr/len> default via <gw>", from `ip` in the given namespace
  printf '%s %s' "$("$@" -4 -o addr show dev eth0 | awk '{print $4}')" \
    "$("$@" -4 route show default | awk '{print $1, $2, $3}')"
}
eth0_before=$(eth0_of ip -n "$netns")

# The CRI's default capability set (containerd's oci.WithDefaultCapabilities): no
# CAP_SYS_ADMIN, as in the cluster.
caps='"CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_FSETID","CAP_FOWNER","CAP_MKNOD","CAP_NET_RAW","CAP_SETGID","CAP_SETUID","CAP_SETFCAP","CAP_SETPCAP","CAP_NET_BIND_SERVICE","CAP_SYS_CHROOT","CAP_KILL","CAP_AUDIT_WRITE"'
cat >"$bundle/config.json" <<JSON
{
  "ociVersion": "1.0.2",
  "process": {
    "terminal": false,
    "user": {"uid": 0, "gid": 0},
    "args": ["/sbin/init"],
    "env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "container=docker", "container_uuid=$uuid"],
    "cwd": "/",
    "capabilities": {"bounding": [$caps], "effective": [$caps], "permitted": [$caps]},
    "noNewPrivileges": false
  },
  "root": {"path": "rootfs", "readonly": false},
  "hostname": "image-check",
  "mounts": [
    {"destination": "/proc", "type": "proc", "source": "proc"},
    {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
    {"destination": "/dev/pts", "type": "devpts", "source": "devpts", "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"]},
    {"destination": "/dev/shm", "type": "tmpfs", "source": "shm", "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"]},
    {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue", "options": ["nosuid", "noexec", "nodev"]},
    {"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": ["nosuid", "noexec", "nodev", "ro"]},
    {"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup", "options": ["nosuid", "noexec", "nodev", "relatime", "rw"]},
    {"destination": "/run", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev", "mode=755"]},
    {"destination": "/run/lock", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev", "noexec"]},
    {"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev", "mode=1777"]},
    {"destination": "/var/lib", "type": "bind", "source": "$var_lib", "options": ["rbind", "rw"]}$extra_mounts
  ],
  "linux": {
    "namespaces": [{"type": "pid"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"}, {"type": "network", "path": "/run/netns/$netns"}],
    "cgroupsPath": "$cgroup_parent/$id",
    "resources": {"devices": [{"allow": false, "access": "rwm"}]},
    "maskedPaths": ["/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware"],
    "readonlyPaths": ["/proc/asound", "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"]
  }
}
JSON

in_container() {
  runc --root "$runc_root" exec "$id" "$@"
}
now_ms() {
  date +%s%3N
}
boot_over() {
  state=$(in_container systemctl is-system-running 2>/dev/null) || true
  case $state in running | degraded | maintenance | stopping) return 0 ;; *) return 1 ;; esac
}
stopped() {
  local s
  s=$(runc --root "$runc_root" state "$id" 2>/dev/null) || return 0
  [[ $s == *'"status": "stopped"'* ]]
}
one_line() {
  sed ':a;N;$!ba;s/\n/\\n/g'
}

t0=$(now_ms)
runc --root "$runc_root" run --detach --bundle "$bundle" "$id" \
  >"$scratch/console.log" 2>&1 </dev/null || {
  cat "$scratch/console.log" >&2
  die 3 "runc could not start the image"
}
state=""
if ! wait_until "$timeout" boot_over; then
  in_container journalctl -b --no-pager 2>/dev/null | tail -n 30 >&2 || cat "$scratch/console.log" >&2
  die 3 "systemd did not finish booting within ${timeout}s (last state: ${state:-none})"
fi
boot_ms=$(($(now_ms) - t0))
if [ "$settle" != 0 ]; then
  sleep "$settle"
  state=$(in_container systemctl is-system-running 2>/dev/null) || true
fi
# Boot is over; let a oneshot that fails late (and sshd's key generation) settle.
failed=$(in_container systemctl --failed --no-legend --plain 2>/dev/null | awk '{print $1}' | paste -sd, -)
machine_id=$(in_container cat /etc/machine-id)
probe_exit=0
probe_output=$(in_container /bin/sh -c "$PROBE" 2>&1) || probe_exit=$?
networkd=$(in_container systemctl is-enabled systemd-networkd.service 2>/dev/null) || true
eth0_after=$(eth0_of in_container ip)
ssh=$(in_container systemctl is-active ssh.service 2>/dev/null) || true
host_key=$(in_container cat /var/lib/ssh/ssh_host_ed25519_key.pub 2>/dev/null | cut -d' ' -f1,2) || true
unit_lines=""
for u in "${units[@]+"${units[@]}"}"; do
  unit_lines+=$(in_container systemctl show -p ActiveState -p SubState -p NRestarts "$u" 2>/dev/null |
    awk -F= -v u="$u" '{v[$1] = $2} END {printf "UNIT=%s %s/%s restarts=%s", u, v["ActiveState"], v["SubState"], v["NRestarts"]}')$'\n'
done
if [ "$state" != running ] || [ "$journal" = 1 ]; then
  in_container journalctl -b --no-pager -p warning 2>/dev/null | tail -n 20 >&2 || true
fi

t1=$(now_ms)
runc --root "$runc_root" kill "$id" 37
wait_until "$timeout" stopped || die 3 "systemd did not stop within ${timeout}s of signal 37 (SIGRTMIN+3)"
stop_ms=$(($(now_ms) - t1))

printf 'STATE=%s\nFAILED_UNITS=%s\nMACHINE_ID=%s\nUUID=%s\nPROBE_EXIT=%s\nPROBE_OUTPUT=%s\nNETWORKD=%s\nETH0_BEFORE=%s\nETH0=%s\nSSH=%s\nSSH_HOST_KEY=%s\nBOOT_MS=%s\nSTOP_MS=%s\n' \
  "$state" "$failed" "$machine_id" "$uuid" "$probe_exit" "$(printf '%s' "$probe_output" | one_line)" \
  "$networkd" "$eth0_before" "$eth0_after" "$ssh" "$host_key" "$boot_ms" "$stop_ms"
printf '%s' "$unit_lines"
