import { describe, expect, it } from 'vitest';
import { loadSettled } from '../../../../bench/lib/settle.ts';

const samples = (loads: number[]) => loads.map((load1, i) => ({ atSeconds: i * 10, load1 }));

describe('the host at rest before measuring: the 1-minute load no longer falling', () => {
  it('GIVEN a load still falling by more than a tenth over the last minute THEN not settled', () => {
    expect(loadSettled(samples([40, 35, 30, 26, 22, 19, 17]))).toBe(false);
  });

  it('GIVEN a load that fell by less than a tenth over the last minute (or rose) THEN settled', () => {
    expect(loadSettled(samples([40, 30, 20, 16, 15.5, 15.2, 15, 14.8, 14.6, 14.5, 14.4]))).toBe(true);
    expect(loadSettled(samples([8, 8, 9, 9, 10, 10, 11]))).toBe(true);
  });

  it('GIVEN samples spanning less than the window THEN not settled, whatever the load', () => {
    expect(loadSettled(samples([5, 5, 5, 5, 5, 5]))).toBe(false);
    expect(loadSettled([])).toBe(false);
  });
});
