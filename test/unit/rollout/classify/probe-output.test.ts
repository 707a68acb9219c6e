import { describe, expect, it } from 'vitest';
import { isTerminalSystemdState, parseProbeMessage } from '../../../../src/rollout/classify/probe-output.js';

describe('parseProbeMessage', () => {
  it('reads the state and the failed units of a readiness failure', () => {
    const r = parseProbeMessage('Readiness probe failed: systemd: degraded\nbroken.service loaded failed failed Always fails\nother@x.service loaded failed failed Other\n');
    expect(r).toMatchObject({ probe: 'Readiness', systemdState: 'degraded', failedUnits: ['broken.service', 'other@x.service'] });
  });

  it('reads a startup probe during boot, with no units', () => {
    expect(parseProbeMessage('Startup probe failed: systemd: starting')).toMatchObject({ probe: 'Startup', systemdState: 'starting', failedUnits: [] });
  });

  it('takes a bullet-prefixed unit line and an aggregated message', () => {
    const r = parseProbeMessage('(combined from similar events): Readiness probe failed: systemd: maintenance\n● var-lib.mount loaded failed failed /var/lib');
    expect(r).toMatchObject({ probe: 'Readiness', systemdState: 'maintenance', failedUnits: ['var-lib.mount'] });
  });

  it('maps an empty state (no bus yet) to unknown, and an odd one to unknown', () => {
    expect(parseProbeMessage('Startup probe failed: systemd: unknown')?.systemdState).toBe('unknown');
    expect(parseProbeMessage('Startup probe failed: systemd: weird')?.systemdState).toBe('unknown');
  });

  it('ignores what is not a probe report, and output without our systemd line', () => {
    expect(parseProbeMessage('Back-off restarting failed container')).toBeUndefined();
    expect(parseProbeMessage(undefined)).toBeUndefined();
    expect(parseProbeMessage('Readiness probe errored and resulted in unknown state: rpc error: code = Unknown desc = failed to exec in container')).toMatchObject({ probe: 'Readiness', systemdState: undefined });
  });

  it('degraded and maintenance are terminal; starting is not', () => {
    expect(isTerminalSystemdState('degraded')).toBe(true);
    expect(isTerminalSystemdState('maintenance')).toBe(true);
    expect(isTerminalSystemdState('starting')).toBe(false);
    expect(isTerminalSystemdState(undefined)).toBe(false);
  });
});
