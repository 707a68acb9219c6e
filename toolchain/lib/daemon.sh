# shellcheck shell=bash
# Background daemons, one pidfile each, found and stopped by PID only (never by name).
#
#   DAEMON_RUN (default $S/run)  where the pidfiles go: <DAEMON_RUN>/<name>.pid
#   DAEMON_LOG (default $S/log)  where the logs go: <DAEMON_LOG>/<name>.log (appended)
#
#   start_daemon NAME CMD...   starts CMD in its own session (setsid: it outlives the caller and
#                              a Ctrl-C of it) unless NAME is running; stdin from /dev/null,
#                              output to its log, no other descriptor of the caller (a caller
#                              reading our stdout, or holding a lock, must not wait for it)
#   daemon_pid NAME            prints the PID when NAME's pidfile names a live process that is
#                              the one start_daemon started, else fails
#   require_alive NAME         dies (3) with the tail of NAME's log when it is not running: for
#                              waits, so that a crash is not reported as a timeout
#   stop_daemons SECS NAME...  TERM to each running NAME, then KILL to what is left after SECS
#                              (then 5 s more); 1 when one survives SIGKILL
#   stop_daemon NAME [SECS]    the same for one (default 15 s)
#
# The pidfile holds "<pid> <program>" (or the PID alone when DAEMON_PROGRAM is empty), as the
# older scripts wrote and read it, so that they (another checkout, a run not yet rebased)
# still find the daemons this one started. Beside it, <name>.start holds "<pid> <start time>":
# the process's start time (field 22 of /proc/PID/stat, set at fork and kept across exec). It
# tells the daemon from a later process that got its PID, and it is there the moment the
# process is, so a daemon that has not exec'ed its program yet (a loaded machine) is never
# called dead (issue 16). A zombie counts as dead. <program> is the program past
# `env NAME=VALUE...`, or DAEMON_PROGRAM when set. A daemon an older script started (no
# .start for its PID) is checked as that script checked it: by "<pid> <program> <start>"
# when the pidfile has the start, else by the program (argv[0] or /proc/PID/exe).
_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/log.sh
. "$_LIB/log.sh"
# shellcheck source=SCRIPTDIR/wait.sh
. "$_LIB/wait.sh"

_daemon_pidfile() { printf '%s/%s.pid' "${DAEMON_RUN:-$S/run}" "$1"; }
_daemon_logfile() { printf '%s/%s.log' "${DAEMON_LOG:-$S/log}" "$1"; }

# _proc_state_start PID: "<state> <start time>" of PID (fields 3 and 22 of /proc/PID/stat),
# or fails when there is no such process (a zombie is one until its parent reaps it).
_proc_state_start() {
  local stat f
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  # the fields after the command name, which may hold spaces: ") S ppid ..." -> field 22 is the 20th
  read -r -a f <<<"${stat##*) }"
  printf '%s %s\n' "${f[0]}" "${f[19]}"
}

# proc_start PID: its start time in clock ticks since boot; fails when PID is gone or a zombie.
proc_start() {
  local st
  st=$(_proc_state_start "$1") || return 1
  case ${st%% *} in Z | X | x) return 1 ;; esac
  printf '%s\n' "${st#* }"
}

# pid_is PID START: PID is alive and is still the process that started at START.
pid_is() {
  local start
  start=$(proc_start "$1") && [ "$start" = "$2" ]
}

daemon_pid() {
  local f pid exe start spid sstart
  f=$(_daemon_pidfile "$1")
  [ -f "$f" ] || return 1
  read -r pid exe start <"$f" || true
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  if [ -f "${f%.pid}.start" ]; then
    read -r spid sstart <"${f%.pid}.start" || true
    [ "$spid" = "$pid" ] && start=$sstart
  fi
  if [ -n "$start" ]; then
    pid_is "$pid" "$start" || return 1
  else
    proc_start "$pid" >/dev/null || return 1
    [ -n "$exe" ] || return 1
    [ "$({ tr '\0' '\n' <"/proc/$pid/cmdline"; } 2>/dev/null | head -n1)" = "$exe" ] ||
      [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$exe" ] || return 1
  fi
  echo "$pid"
}

start_daemon() {
  local name=$1 pid start
  shift
  if pid=$(daemon_pid "$name"); then
    log "$name already running (pid $pid)"
    return 0
  fi
  local pidfile logfile
  pidfile=$(_daemon_pidfile "$name")
  logfile=$(_daemon_logfile "$name")
  mkdir -p "$(dirname "$pidfile")" "$(dirname "$logfile")"
  setsid "$@" >>"$logfile" 2>&1 </dev/null 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
  pid=$!
  local exe=$1 a
  if [ "$exe" = env ]; then
    for a in "${@:2}"; do [[ $a == *=* ]] || { exe=$a; break; }; done
  fi
  exe=${DAEMON_PROGRAM-$exe}
  # Gone already (it failed at once): no start time; require_alive then says so with its log.
  start=$(proc_start "$pid") || start=gone
  echo "$pid $start" >"${pidfile%.pid}.start"
  echo "$pid${exe:+ $exe}" >"$pidfile"
  log "$name started (pid $pid, log $logfile)"
}

require_alive() {
  local name=$1 logfile
  daemon_pid "$name" >/dev/null && return 0
  logfile=$(_daemon_logfile "$name")
  tail -n 20 "$logfile" >&2 2>/dev/null || true
  die 3 "$name exited (log above: $logfile)"
}

stop_daemons() {
  local secs=$1 name pid start pids=() names=() starts=() status=0
  shift
  local f
  for name in "$@"; do
    f=$(_daemon_pidfile "$name")
    if pid=$(daemon_pid "$name") && start=$(proc_start "$pid"); then
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid") names+=("$name") starts+=("$start")
    fi
    rm -f "$f" "${f%.pid}.start"
  done
  local i
  for i in "${!pids[@]}"; do
    pid=${pids[$i]}
    if wait_until "$secs" _daemon_gone "$pid" "${starts[$i]}"; then
      log "${names[$i]} stopped (pid $pid)"
      continue
    fi
    log "${names[$i]} (pid $pid) did not stop within ${secs}s: SIGKILL"
    if pid_is "$pid" "${starts[$i]}"; then kill -KILL "$pid" 2>/dev/null || true; fi
    if wait_until 5 _daemon_gone "$pid" "${starts[$i]}"; then
      log "${names[$i]} stopped (pid $pid)"
    else
      log "${names[$i]} (pid $pid) survives SIGKILL"
      status=1
    fi
  done
  return "$status"
}

stop_daemon() { stop_daemons "${2:-15}" "$1"; }

# PID START: the process has ended and been reaped (no /proc/PID), or PID is another process
# now. A zombie is not gone yet: a stop returns when nothing is left of the daemon.
_daemon_gone() {
  local st
  st=$(_proc_state_start "$1") || return 0
  [ "${st#* }" != "$2" ]
}
