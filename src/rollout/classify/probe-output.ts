/**
 * Reads what the node's probes print (the protocol: src/contract/probes.ts): `systemd: <state>`
 * and, when not running, the failed units of `systemctl --failed --no-legend --plain`; the
 * kubelet puts that output into the pod's "Unhealthy" event:
 * "Readiness probe failed: systemd: degraded\nbroken.service loaded failed failed ...".
 * (kubelet prober: `"%s probe failed: %s", probeType, output`.)
 */
import { SYSTEMD_STATE_PREFIX, SYSTEMD_STATES, type SystemdState } from '../../contract/probes.js';

export type ProbeKind = 'Readiness' | 'Startup' | 'Liveness';

export interface ProbeReport {
  readonly probe: ProbeKind;
  /** The systemd state the probe saw, when its output carries our `systemd: <state>` line. */
  readonly systemdState: SystemdState | undefined;
  /** Unit names from the `systemctl --failed` lines that follow. */
  readonly failedUnits: readonly string[];
  /** The probe's output, as the kubelet gave it. */
  readonly output: string;
}

const HEADER = /^(?:\(combined from similar events\): )?(Readiness|Startup|Liveness) probe (?:failed|errored[^:]*): ?/;
const UNIT = /^[\w@.:\\-]+\.(service|socket|mount|automount|swap|target|path|timer|slice|scope|device)$/;

/** Parses an "Unhealthy" event message; undefined when it is not a probe report. */
export function parseProbeMessage(message: string | null | undefined): ProbeReport | undefined {
  if (!message) return undefined;
  const m = HEADER.exec(message);
  if (!m) return undefined;
  const output = message.slice(m[0].length);
  const lines = output.split('\n').map((l) => l.trim()).filter((l) => l.length > 0);
  let systemdState: SystemdState | undefined;
  const failedUnits: string[] = [];
  for (const line of lines) {
    const state = systemdStateOf(line);
    if (state !== undefined) {
      systemdState = state;
      continue;
    }
    // `--plain` drops the bullet; strip it anyway in case a systemd prints it.
    const first = line.replace(/^[●*×]\s*/, '').split(/\s+/)[0] ?? '';
    if (UNIT.test(first) && !failedUnits.includes(first)) failedUnits.push(first);
  }
  return { probe: m[1] as ProbeKind, systemdState, failedUnits, output };
}

/** The state of a `systemd: <state>` line (`unknown` for a word systemctl does not print), or undefined for another line. */
function systemdStateOf(line: string): SystemdState | undefined {
  if (!line.startsWith(SYSTEMD_STATE_PREFIX)) return undefined;
  const word = line.slice(SYSTEMD_STATE_PREFIX.length);
  if (word.length === 0 || /\s/.test(word)) return undefined;
  return (SYSTEMD_STATES as readonly string[]).includes(word) ? (word as SystemdState) : 'unknown';
}

/** systemd will not get to `running` by itself from these: boot is over and something failed. */
export function isTerminalSystemdState(state: SystemdState | undefined): state is 'degraded' | 'maintenance' {
  return state === 'degraded' || state === 'maintenance';
}
