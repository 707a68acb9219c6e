import { describe, expect, it } from 'vitest';
import { parseDurationMs } from '../../../src/rollout/duration.js';

describe('parseDurationMs', () => {
  it('reads seconds, minutes, combinations and plain seconds', () => {
    expect(parseDurationMs('300s')).toBe(300_000);
    expect(parseDurationMs('5m')).toBe(300_000);
    expect(parseDurationMs('1m30s')).toBe(90_000);
    expect(parseDurationMs('1500ms')).toBe(1500);
    expect(parseDurationMs('1h')).toBe(3_600_000);
    expect(parseDurationMs('90')).toBe(90_000);
    expect(parseDurationMs('2.5s')).toBe(2500);
  });
  it('refuses what is not a positive duration', () => {
    for (const bad of ['', 'abc', '5x', '5m junk', '0s', '0', '-5s', 's']) expect(parseDurationMs(bad), bad).toBeUndefined();
  });
});
