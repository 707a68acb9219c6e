import { describe, expect, it } from 'vitest';
import { DEFAULT_ROLLOUT_TIMEOUT, DURATION_RULES, durationOf, parseDuration, readDuration } from '../../../src/config/duration.js';
import { loadCoordinates } from '../../../src/config/load.js';
import { ConfigError } from '../../../src/errors.js';

describe('Duration: one value, read in the form each use needs', () => {
  it('GIVEN 1h30m WHEN parsed THEN it is 5400 s, 5 400 000 ms, and 5400s as the graph passes it', () => {
    const d = parseDuration(' 1h30m ')!;
    expect(d).toEqual(durationOf(5400));
    expect([d.seconds, d.ms, d.text]).toEqual([5400, 5_400_000, '5400s']);
  });

  it('the rollout timeout has one default, 5m: 300 s, passed to `deploy rollout` as 300s', () => {
    expect(DURATION_RULES.rolloutTimeout.defaultText).toBe('5m');
    expect([DEFAULT_ROLLOUT_TIMEOUT.seconds, DEFAULT_ROLLOUT_TIMEOUT.text]).toEqual([300, '300s']);
    expect(loadCoordinates({}, { K8S_REGISTRY: 'r' }, process.cwd()).rolloutTimeout).toEqual(DEFAULT_ROLLOUT_TIMEOUT);
  });
});

describe('the rollout timeout (DEPLOY_ROLLOUT_TIMEOUT, --rollout-timeout): 10s up to 6h', () => {
  it.each([
    ['10s', 10],
    ['90', 90],
    ['5m', 300],
    ['6h', 21_600],
    ['5h59m59s', 21_599],
  ])('%s is accepted as %i s', (text, seconds) => {
    const r = readDuration(text, DURATION_RULES.rolloutTimeout);
    expect(r.ok && r.value.seconds).toBe(seconds);
  });

  it.each([
    ['9s', 'must be at least 10s: systemd needs time to boot'],
    ['0', 'must be at least 10s: systemd needs time to boot'],
    ['6h1s', 'must be at most 6h'],
    ['soon', 'must be a duration such as 90s, 5m or 1h'],
    ['5 m', 'must be a duration such as 90s, 5m or 1h'],
    ['-1s', 'must be a duration such as 90s, 5m or 1h'],
    ['1d', 'must be a duration such as 90s, 5m or 1h'],
    ['', 'must be a duration such as 90s, 5m or 1h'],
  ])('%j is refused: %s', (text, problem) => {
    expect(readDuration(text, DURATION_RULES.rolloutTimeout)).toEqual({ ok: false, problem });
  });

  it('GIVEN a flag and the environment WHEN the coordinates are read THEN the flag wins and a refusal names both, exit 2', () => {
    expect(loadCoordinates({ rolloutTimeout: '2m' }, { K8S_REGISTRY: 'r', DEPLOY_ROLLOUT_TIMEOUT: '1h' }, process.cwd()).rolloutTimeout.seconds).toBe(120);
    const err = (() => {
      try {
        loadCoordinates({}, { K8S_REGISTRY: 'r', DEPLOY_ROLLOUT_TIMEOUT: '7h' }, process.cwd());
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).exitCode).toBe(2);
    expect((err as ConfigError).issues).toContainEqual({ where: 'DEPLOY_ROLLOUT_TIMEOUT (or --rollout-timeout)', message: 'must be at most 6h' });
  });
});

describe('`deploy rollout --timeout` by hand: any positive duration, as before', () => {
  it.each([['1s', 1], ['5s', 5], ['7h', 25_200], ['300', 300]])('%s is accepted', (text, seconds) => {
    const r = readDuration(text, DURATION_RULES.rolloutStep);
    expect(r.ok && r.value.seconds).toBe(seconds);
  });
  it.each(['0s', '0', 'abc', '5x', ''])('%j is refused', (text) => {
    expect(readDuration(text, DURATION_RULES.rolloutStep)).toEqual({ ok: false, problem: 'not a duration' });
  });
});

describe('the stop timeout (DEPLOY_STOP_TIMEOUT): at least 1s, default 30s', () => {
  it('defaults to 30s and refuses 0s', () => {
    expect(loadCoordinates({}, { K8S_REGISTRY: 'r' }, process.cwd()).stopTimeout.seconds).toBe(30);
    expect(readDuration('0s', DURATION_RULES.stopTimeout)).toEqual({ ok: false, problem: DURATION_RULES.stopTimeout.min.message });
  });
});

describe('the probe period (DEPLOY_PROBE_PERIOD): 1s to 1h, default 10s', () => {
  it('defaults to 10s, takes a flag over the environment, refuses 0s, 2h and words', () => {
    expect(loadCoordinates({}, { K8S_REGISTRY: 'r' }, process.cwd()).probePeriod.seconds).toBe(10);
    expect(loadCoordinates({}, { K8S_REGISTRY: 'r', DEPLOY_PROBE_PERIOD: '1m' }, process.cwd()).probePeriod.seconds).toBe(60);
    expect(loadCoordinates({ probePeriod: '30s' }, { K8S_REGISTRY: 'r', DEPLOY_PROBE_PERIOD: '1m' }, process.cwd()).probePeriod.seconds).toBe(30);
    expect(readDuration('0s', DURATION_RULES.probePeriod)).toEqual({ ok: false, problem: DURATION_RULES.probePeriod.min.message });
    expect(readDuration('2h', DURATION_RULES.probePeriod)).toEqual({ ok: false, problem: DURATION_RULES.probePeriod.max!.message });
    expect(readDuration('often', DURATION_RULES.probePeriod)).toEqual({ ok: false, problem: DURATION_RULES.probePeriod.notADuration });
  });
});
