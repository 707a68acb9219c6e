# shellcheck shell=bash
# wait_until SECS CMD...: runs CMD until it succeeds (0) or SECS pass (1). Every wait of the
# scripts has a deadline. The backoff: 0.1, 0.2, 0.3, 0.5 s, then every second, so a quick
# start is seen at once and a slow one costs no busy loop.
wait_until() {
  local deadline=$((SECONDS + $1)) delay=0.1
  shift
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep "$delay"
    case $delay in 0.1) delay=0.2 ;; 0.2) delay=0.3 ;; 0.3) delay=0.5 ;; *) delay=1 ;; esac
  done
}
