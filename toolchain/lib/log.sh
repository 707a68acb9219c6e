# shellcheck shell=bash
# One line a message, on stderr, tagged with LOG_TAG (set it at the top of each script; the
# default is the script's name):
#   log MSG...         "<HH:MM:SS.cc> <tag>: MSG" (UTC): progress of long jobs, daemons
#   say MSG...         "<tag>: MSG": a short command's findings (CI logs carry their own clock)
#   die CODE MSG...    log "error: MSG", then exit CODE (2 usage or configuration, 3 a program
#                      or the host failed; the scripts' documented codes)
log() { printf '%s %s: %s\n' "$(date -u +%H:%M:%S.%2N)" "${LOG_TAG:-${0##*/}}" "$*" >&2; }
say() { printf '%s: %s\n' "${LOG_TAG:-${0##*/}}" "$*" >&2; }
die() {
  local code=$1
  shift
  log "error: $*"
  exit "$code"
}
