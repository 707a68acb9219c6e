#!/usr/bin/env bash
# Writes the docker archive of one node image variant to $BUILD_OUT (set by build_once):
#   variant.sh <rootfs-dir> <variant> <repo> [NAME=VALUE]...
# The archive's tag is <variant>-<12 hex of the image config digest>.
# Variant `spire` also needs SPIRE_AGENT_BIN (the spire-agent program, set by build.sh).
# <rootfs-dir> is a cached tree of rootfs.sh; it is hard-linked, never written to.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LOG_TAG=images/variant
. "$HERE/lib/common.sh"
. "$HERE/lib/docker-archive.sh"

rootfs=$1 variant=$2 repo=$3
shift 3
out=${BUILD_OUT:?variant.sh writes to BUILD_OUT}

scratch=$(mktemp -d "$(dirname "$out")/variant.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
# Hard links: well under a second for ~10k files. The cached tree stays untouched because
# files are only added, or replaced after `rm -f`, never written in place.
cp -al "$rootfs/root" "$scratch/root"
r=$scratch/root
added=()
SPIRE_AGENT_ID=990 # below Debian's dynamic system IDs in use here (998, 999)
case $variant in
  good) ;;
  broken)
    mkdir -p "$r/etc/systemd/system/multi-user.target.wants"
    rm -f "$r/etc/systemd/system/broken.service"
    cat >"$r/etc/systemd/system/broken.service" <<'UNIT'
[Unit]
Description=A unit that always fails (the broken node image: systemd ends degraded)

[Service]
Type=oneshot
ExecStart=/bin/sh -c 'echo "broken.service: failing on purpose" >&2; exit 1'

[Install]
WantedBy=multi-user.target
UNIT
    ln -sfn ../broken.service "$r/etc/systemd/system/multi-user.target.wants/broken.service"
    added+=(etc/systemd/system/broken.service etc/systemd/system/multi-user.target.wants/broken.service
      etc/systemd/system/multi-user.target.wants etc/systemd/system)
    ;;
  hang | slow-stop | late-fail)
    # hang: a start job that never ends and never fails: systemd stays `starting` (the
    #   rollout deadline's test). late-fail: a service that runs, then fails 20 s after its
    #   start: systemd reaches `running` and falls to `degraded` (the soak's test). slow-stop: a unit whose ExecStop takes 15 s and logs its
    #   stop, and a unit that logs reaching shutdown.target, both to /var/lib/stop-log on the
    #   node's claim (the stop timeout's test: does systemd get to finish?)
    if [ "$variant" = hang ]; then
      variant_units=(hang.service)
      cat >"$scratch/hang.service" <<'UNIT'
[Unit]
Description=A start job that never ends (the hang node image: systemd stays starting)

[Service]
Type=oneshot
ExecStart=/bin/sleep infinity
TimeoutStartSec=infinity

[Install]
WantedBy=multi-user.target
UNIT
    elif [ "$variant" = late-fail ]; then
      variant_units=(late-fail.service)
      cat >"$scratch/late-fail.service" <<'UNIT'
[Unit]
Description=A service that fails 20 s after its start (the late-fail node image: running, then degraded)

[Service]
Type=simple
ExecStart=/bin/sh -c 'sleep 20; echo "late-fail.service: failing 20 s after the boot, on purpose" >&2; exit 1'

[Install]
WantedBy=multi-user.target
UNIT
    else
      variant_units=(slow-stop.service shutdown-reached.service)
      cat >"$scratch/slow-stop.service" <<'UNIT'
[Unit]
Description=A unit whose stop takes 15 s (the slow-stop node image)
After=local-fs.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/sh -c 'echo "started $(date +%%s.%%N)" >>/var/lib/stop-log'
ExecStop=/bin/sh -c 'echo "stop-begin $(date +%%s.%%N)" >>/var/lib/stop-log; sleep 15; echo "stop-end $(date +%%s.%%N)" >>/var/lib/stop-log'
TimeoutStopSec=120

[Install]
WantedBy=multi-user.target
UNIT
      # Started by the shutdown itself: final.target comes after shutdown.target (halt.target
      # -> systemd-halt.service), and shutdown.target only after every unit's stop is done.
      cat >"$scratch/shutdown-reached.service" <<'UNIT'
[Unit]
Description=Logs that systemd reached shutdown.target (the slow-stop node image)
DefaultDependencies=no
After=shutdown.target
Before=final.target

[Service]
Type=oneshot
ExecStart=/bin/sh -c 'echo "shutdown-target $(date +%%s.%%N)" >>/var/lib/stop-log'

[Install]
WantedBy=final.target
UNIT
    fi
    for unit in "${variant_units[@]}"; do
      wants=multi-user.target.wants
      [ "$unit" = shutdown-reached.service ] && wants=final.target.wants
      mkdir -p "$r/etc/systemd/system/$wants"
      rm -f "$r/etc/systemd/system/$unit"
      cp "$scratch/$unit" "$r/etc/systemd/system/$unit"
      ln -sfn "../$unit" "$r/etc/systemd/system/$wants/$unit"
      added+=("etc/systemd/system/$unit" "etc/systemd/system/$wants/$unit" "etc/systemd/system/$wants")
    done
    added+=(etc/systemd/system)
    ;;
  spire)
    # good + the SPIRE agent: its program, its user, units and root helper (variants/spire/).
    [ -x "${SPIRE_AGENT_BIN:-}" ] || die 2 "variant spire needs SPIRE_AGENT_BIN (the spire-agent program)"
    install -D -m 0755 "$SPIRE_AGENT_BIN" "$r/usr/local/bin/spire-agent"
    added+=(usr/local/bin/spire-agent usr/local/bin)
    while read -r f; do
      mode=0644
      [ -x "$HERE/variants/spire/$f" ] && mode=0755
      rm -f "$r/$f"
      install -D -m "$mode" "$HERE/variants/spire/$f" "$r/$f"
      added+=("$f" "$(dirname "$f")")
    done < <(cd "$HERE/variants/spire" && find . -type f | sed 's|^\./||' | LC_ALL=C sort)
    # A system user without login for the agent (fixed IDs: the same image, the same owner).
    # The account files are replaced, never written in place (hard links into the cache).
    add_line() { # FILE LINE: FILE again with LINE appended, its mode and owner kept
      cp -p "$r/$1" "$scratch/account"
      printf '%s\n' "$2" >>"$scratch/account"
      rm -f "$r/$1"
      mv "$scratch/account" "$r/$1"
      added+=("$1")
    }
    if awk -F: -v id="$SPIRE_AGENT_ID" '$3 == id || $1 == "spire-agent"' "$r/etc/passwd" "$r/etc/group" | grep -q .; then
      die 1 "the tree already has the user or ID spire-agent/$SPIRE_AGENT_ID; choose another SPIRE_AGENT_ID"
    fi
    add_line etc/passwd "spire-agent:x:$SPIRE_AGENT_ID:$SPIRE_AGENT_ID:SPIRE agent:/nonexistent:/usr/sbin/nologin"
    add_line etc/group "spire-agent:x:$SPIRE_AGENT_ID:"
    add_line etc/shadow 'spire-agent:!*:::::::'
    add_line etc/gshadow 'spire-agent:!*::'
    units=etc/systemd/system
    # the [Install] sections' WantedBy, as `systemctl enable` would link them
    for link in multi-user.target.wants/spire-agent.service timers.target.wants/spire-agent-token.timer \
      paths.target.wants/spire-agent-token.path timers.target.wants/spire-agent-bundle.timer \
      paths.target.wants/spire-agent-bundle.path; do
      mkdir -p "$r/$units/$(dirname "$link")"
      ln -sfn "../$(basename "$link")" "$r/$units/$link"
      added+=("$units/$link" "$units/$(dirname "$link")")
    done
    added+=(etc/systemd/system etc/systemd etc usr/local/sbin usr/local usr)
    ;;
  *) die 2 "unknown variant '$variant'" ;;
esac
if [ "$#" -gt 0 ]; then
  rm -f "$r/etc/node-config"
  printf '%s\n' "$@" >"$r/etc/node-config"
  added+=(etc/node-config etc)
fi
# Same inputs, same bytes: what was added gets the tree's time, not the clock's.
for p in "${added[@]+"${added[@]}"}"; do
  touch -h -r "$rootfs/created" "$r/$p"
done

mkdir "$scratch/archive"
# The tree's layer, shared by every variant and configuration, cached beside the tree; then,
# when the variant adds anything, one layer of what it adds (a few KB for a configuration). A
# new configuration then moves only its own layer: the registry has the base layer (skopeo
# skips it) and so has a host that ran an image of this tree (the kubelet pulls one small
# layer), as with an application's release on a shared base image. (Before, each image was
# one 150 MB layer: a push and a pull of 150 MB per new configuration, about 10 s of each
# bench apply here.)
# rootfs.sh wrote it with the tree (never here: see there).
base=$rootfs/base-layer.tar
[ -s "$base" ] || die 3 "the cached tree $rootfs has no base-layer.tar (rootfs.sh writes it): delete $rootfs and build again"
created_by="test/cluster/images/build.sh $variant${*:+ --config $*}"
layers=("$base" "$created_by")
if [ "${#added[@]}" -gt 0 ]; then
  printf '%s\n' "${added[@]}" | LC_ALL=C sort -u >"$scratch/added"
  tar_layer "$r" "$scratch/top-layer.tar" "$scratch/added"
  layers=("$base" "test/cluster/images/rootfs.sh" "$scratch/top-layer.tar" "$created_by")
fi
# Env container=docker: systemd's container detection; SIGRTMIN+3: systemd's clean shutdown.
write_layered_archive "$out" "$repo:$variant-" "$(cat "$rootfs/created")" "$scratch/archive" \
  '{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","container=docker"],"Cmd":["/sbin/init"],"StopSignal":"SIGRTMIN+3"}' \
  "${layers[@]}" >/dev/null
