/** Durations on the command line: `300s`, `5m`, `1m30s`, `1500ms`, or plain seconds (`300`). */

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses a duration to milliseconds; undefined when it is not one (or not positive). */
export function parseDurationMs(text: string): number | undefined {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) {
    const ms = Number(t) * 1000;
    return ms > 0 ? ms : undefined;
  }
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/gy;
  let total = 0;
  let consumed = 0;
  for (let m = re.exec(t); m; m = re.exec(t)) {
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    consumed = re.lastIndex;
  }
  if (consumed !== t.length || consumed === 0 || total <= 0) return undefined;
  return Math.round(total);
}
