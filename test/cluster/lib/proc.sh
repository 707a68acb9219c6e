# shellcheck shell=bash
# Background daemons of the cluster: one pidfile each under $S/run, logs under $S/log.
#
#   start_daemon NAME CMD...   starts CMD in its own session unless NAME is running, and returns
#                              once CMD runs (exec done) or has died
#   daemon_pid NAME            prints the PID when NAME's pidfile names a live process that
#                              is still NAME's program (argv[0] checked), else fails
#   stop_daemon NAME [SECS]    TERM, then KILL after SECS (default 15), by PID only
#   stop_daemons SECS NAME...  the same for several at once (TERM to all, then wait)
#   wait_until SECS CMD...     retries CMD (0.1 s .. 1 s apart) until it succeeds or SECS pass

clog() { printf '%s cluster: %s\n' "$(date -u +%H:%M:%S.%2N)" "$*" >&2; }
cdie() { local code=$1; shift; clog "error: $*"; exit "$code"; }

wait_until() {
  local deadline=$((SECONDS + $1)) delay=0.1
  shift
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep "$delay"
    case $delay in 0.1) delay=0.2 ;; 0.2) delay=0.3 ;; 0.3) delay=0.5 ;; *) delay=1 ;; esac
  done
}

daemon_pid() {
  local name=$1 pid exe
  [ -f "$S/run/$name.pid" ] || return 1
  read -r pid exe <"$S/run/$name.pid" || true
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  [ "$(argv0 "$pid")" = "$exe" ] || return 1
  echo "$pid"
}

argv0() { # PID: the process's argv[0], or nothing when it is gone
  [ -r "/proc/$1/cmdline" ] || return 0
  tr '\0' '\n' <"/proc/$1/cmdline" 2>/dev/null | head -n1
}

# True once PID runs EXE (the exec happened) or PID has no command line any more (it died, a
# zombie included: require_alive says so).
exec_done() {
  local a
  a=$(argv0 "$1")
  [ -z "$a" ] || [ "$a" = "$2" ]
}

start_daemon() {
  local name=$1 pid
  shift
  if pid=$(daemon_pid "$name"); then
    clog "$name already running (pid $pid)"
    return 0
  fi
  mkdir -p "$S/run" "$S/log"
  # setsid: its own session, so it outlives this script and a Ctrl-C of the caller.
  setsid "$@" >>"$S/log/$name.log" 2>&1 </dev/null &
  pid=$!
  # Record the program (past `env NAME=VALUE...`): daemon_pid checks argv[0] against it.
  local exe=$1 a
  if [ "$exe" = env ]; then
    for a in "${@:2}"; do [[ $a == *=* ]] || { exe=$a; break; }; done
  fi
  echo "$pid $exe" >"$S/run/$name.pid"
  # Until setsid (and env) have exec'ed the program, /proc/PID/cmdline still shows this shell's
  # fork, and daemon_pid would call a live daemon dead (a loaded machine loses that race: seen
  # right after a first run's apt installs). Wait for the exec; a daemon that dies at once is
  # left to require_alive, which prints its log.
  if ! wait_until 30 exec_done "$pid" "$exe"; then
    kill -KILL "$pid" 2>/dev/null || true
    cdie 3 "$name (pid $pid) did not exec $exe within 30 s (argv[0] still '$(argv0 "$pid")'); the machine is overloaded?"
  fi
  clog "$name started (pid $pid, log $S/log/$name.log)"
}

not_alive() { ! kill -0 "$1" 2>/dev/null; }

stop_daemon() {
  local name=$1 secs=${2:-15} pid
  if pid=$(daemon_pid "$name"); then
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_until "$secs" not_alive "$pid"; then
      clog "$name (pid $pid) did not stop within ${secs}s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      wait_until 5 not_alive "$pid" || clog "$name (pid $pid) survives SIGKILL"
    fi
    clog "$name stopped (pid $pid)"
  fi
  rm -f "$S/run/$name.pid"
}

# Fails with the log's tail when NAME died (used inside waits, so a crash is not a timeout).
require_alive() {
  local name=$1
  daemon_pid "$name" >/dev/null && return 0
  tail -n 20 "$S/log/$name.log" >&2 2>/dev/null || true
  cdie 3 "$name exited (log above: $S/log/$name.log)"
}

stop_daemons() {
  local secs=$1 name pid pids=() names=()
  shift
  for name in "$@"; do
    if pid=$(daemon_pid "$name"); then
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid"); names+=("$name")
    fi
    rm -f "$S/run/$name.pid"
  done
  local i
  for i in "${!pids[@]}"; do
    pid=${pids[$i]}
    if ! wait_until "$secs" not_alive "$pid"; then
      clog "${names[$i]} (pid $pid) did not stop within ${secs}s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      wait_until 5 not_alive "$pid" || clog "${names[$i]} (pid $pid) survives SIGKILL"
    fi
    clog "${names[$i]} stopped (pid $pid)"
  done
}
