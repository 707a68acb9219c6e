# shellcheck shell=bash
# The node's daemons, sshd and spire-server: toolchain/lib/daemon.sh's (pidfiles in $S/run,
# logs in $S/log), each started inside the node.
# start_node_daemon NAME ARGS...: starts a program of the node (spire-server or sshd, by
# name) as a daemon (toolchain/lib/daemon.sh) that runs as the node: in its netns and a
# private mount namespace whose /etc/ssh, /var/lib, /tmp, /usr/local/bin, /etc/machine-id and
# /etc/passwd are the node's own. Nothing the node reads afterwards is a host path, so a
# state or cache directory under /tmp works too (/tmp is replaced last). Every step execs, so
# the PID that start_daemon records is the program's own (recorded as /usr/local/bin/NAME,
# its path in the node, as older scripts did). Its log: $S/log/NAME.log.
start_node_daemon() {
  local name=$1
  shift
  # shellcheck disable=SC2016 # expanded by the inner shell
  DAEMON_PROGRAM=/usr/local/bin/$name start_daemon "$name" env SSHD_BIN="$SSHD_BIN" SPIRE_SERVER_BIN="$SPIRE_SERVER_BIN" \
    ip netns exec "$NETNS" unshare --mount --propagation private -- /bin/sh -euc '
    root=$1 name=$2; shift 2
    mount --bind "$root/bin" /usr/local/bin
    # Both programs in every daemon'"'"'s namespace: ssh sessions (children of sshd) run spire-server.
    mount --bind "$SSHD_BIN" /usr/local/bin/sshd
    mount --bind "$SPIRE_SERVER_BIN" /usr/local/bin/spire-server
    mount --bind "$root/etc/ssh" /etc/ssh
    mount --bind "$root/etc/machine-id" /etc/machine-id
    mount --bind "$root/etc/passwd" /etc/passwd
    mount --bind "$root/var/lib" /var/lib
    mount -t tmpfs -o mode=0755,size=16m tmpfs /run
    mkdir -m 0755 /run/sshd
    mount --bind "$root/tmp" /tmp
    unset SSHD_BIN SPIRE_SERVER_BIN
    exec "/usr/local/bin/$name" "$@"' node-exec "$S/root" "$name" "$@"
}
