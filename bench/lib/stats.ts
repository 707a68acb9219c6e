/** Median and spread of a few runs (the benchmark's runs are few: 3 by default). */
export interface Spread {
  n: number;
  median: number;
  min: number;
  max: number;
}

export function spread(xs: readonly number[]): Spread {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  const median = s.length === 0 ? Number.NaN : s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { n: s.length, median, min: s[0] ?? Number.NaN, max: s.at(-1) ?? Number.NaN };
}

/** The run of median time (the upper middle of an even count), e.g. to show its profile. */
export function medianRun<T extends { ms: number }>(runs: readonly T[]): T {
  return [...runs].sort((a, b) => a.ms - b.ms)[Math.floor(runs.length / 2)]!;
}

export function secs(ms: number): string {
  return Number.isFinite(ms) ? (ms / 1000).toFixed(ms < 10_000 ? 2 : 1) : 'n/a';
}

/** "12.3 s (11.9-13.0)" */
export function showSecs(s: Spread): string {
  return `${secs(s.median)} s (${secs(s.min)}-${secs(s.max)})`;
}

/** Fisher-Yates with a seeded generator, so a run's interleaving is printed and repeatable. */
export function shuffled<T>(xs: readonly T[], seed: number): T[] {
  const out = [...xs];
  let state = seed >>> 0 || 1;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The list started at its `by`-th item (modulo its length): round `by` of an interleaving, so that no item always follows the same one. */
export function rotated<T>(xs: readonly T[], by: number): T[] {
  return xs.map((_, i) => xs[(((i + by) % xs.length) + xs.length) % xs.length]!);
}

/** Percentiles of the runs (nearest rank) and their mean, rounded to whole ms. */
export function percentiles(xs: readonly number[]): { n: number; min: number; p50: number; max: number; mean: number } {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? Number.NaN;
  return { n: s.length, min: s[0] ?? Number.NaN, p50: at(50), max: s.at(-1) ?? Number.NaN, mean: Math.round(s.reduce((a, b) => a + b, 0) / Math.max(1, s.length)) };
}
