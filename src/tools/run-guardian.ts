/**
 * The run guardian: a few lines of `sh` that outlive deploy by design, so that nothing else
 * does. run.ts starts it once per deploy process, at the first process the run starts, in a
 * session of its own (a Ctrl-C on the terminal does not reach it) with its stdin a pipe from
 * deploy on which deploy never writes. The read returns at end of file, which comes when the
 * last writer closes: deploy exited, or was killed (kill -9, the OOM killer: the kernel closes
 * its descriptors all the same). Node opens its pipes close-on-exec, so no child holds the
 * write end open.
 *
 * Then it ends every process whose environment carries the run's mark (run-mark.ts): SIGTERM
 * (tofu takes it as its interrupt and may still save its state to a backend that is not
 * deploy's own), then, after the grace, SIGKILL to whatever still carries it. Found by the
 * mark at each step, never by name, and only processes that still carry it get a signal (a
 * PID that was freed and used again by another program has another environment). After a
 * normal exit nothing carries the mark any more and it leaves at once (one grep).
 *
 * The same script with stdin at end of file is the reaper's hand (run.ts): it ends what a run
 * whose deploy and guardian were both killed left behind.
 *
 * Needs `grep -z` (GNU grep, busybox): POSIX sh cannot read the NUL-separated environ files.
 */
import { RUN_MARK_VAR } from './run-mark.js';

/** How long the marked processes get between SIGTERM and SIGKILL. */
export const GUARDIAN_GRACE_MS = 10_000;

/** The name the guardian runs under ($0 of its `sh -c`): what `ps` shows. */
export const GUARDIAN_NAME = 'deploy-run-guardian';

/**
 * The script, for `sh -c SCRIPT deploy-run-guardian <mark> <grace in tenths of a second>`.
 * The mark is checked by run-mark.ts's form (digits, dots, hex) before it gets here.
 */
export const GUARDIAN_SCRIPT = `
mark=$1 ticks=$2
while read -r _; do :; done
found=
find_marked() {
  found=
  for f in $(grep -lsxzF -e "${RUN_MARK_VAR}=$mark" /proc/[0-9]*/environ); do
    p=\${f#/proc/}
    p=\${p%/environ}
    [ "$p" = "$$" ] || found="$found $p"
  done
}
find_marked
[ -n "$found" ] || exit 0
termed=' '
waited=0
while :; do
  for p in $found; do
    case $termed in
      *" $p "*) ;;
      *) kill -TERM "$p" 2>/dev/null; termed="$termed$p " ;;
    esac
  done
  [ "$waited" -ge "$ticks" ] && break
  sleep 0.2 2>/dev/null || sleep 1
  waited=$((waited + 2))
  find_marked
  [ -n "$found" ] || exit 0
done
rounds=0
while [ -n "$found" ] && [ "$rounds" -lt 10 ]; do
  for p in $found; do kill -KILL "$p" 2>/dev/null; done
  sleep 0.1 2>/dev/null || sleep 1
  rounds=$((rounds + 1))
  find_marked
done
`;

/** The arguments of `sh` for the guardian of `mark`. */
export function guardianArgs(mark: string, graceMs: number = GUARDIAN_GRACE_MS): string[] {
  return ['-c', GUARDIAN_SCRIPT, GUARDIAN_NAME, mark, String(Math.max(0, Math.round(graceMs / 100)))];
}
