import { describe, expect, it } from 'vitest';
import { READINESS_SCRIPT, STARTUP_SCRIPT, SYSTEMD_STATE_PREFIX } from '../../../src/contract/probes.js';
import { parseProbeMessage } from '../../../src/rollout/classify/probe-output.js';

describe('the probe protocol', () => {
  it('GIVEN the readiness and startup scripts THEN each prints the systemd state line the rollout step parses first', () => {
    for (const script of [READINESS_SCRIPT, STARTUP_SCRIPT]) expect(script).toContain(`echo "${SYSTEMD_STATE_PREFIX}\${state:-unknown}"`);
    expect(parseProbeMessage(`Readiness probe failed: ${SYSTEMD_STATE_PREFIX}degraded\nbroken.service loaded failed failed x`)).toMatchObject({ systemdState: 'degraded', failedUnits: ['broken.service'] });
  });
});
