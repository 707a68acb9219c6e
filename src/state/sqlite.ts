import type * as NodeSqlite from 'node:sqlite';

let loaded: typeof NodeSqlite | undefined;

/**
 * Loads Node's built-in `node:sqlite` (no native addon to download or compile) and keeps its
 * one-time "SQLite is an experimental feature" warning off stderr. Only that warning is
 * dropped; every other warning goes through unchanged.
 */
export function loadSqlite(): typeof NodeSqlite {
  if (loaded) return loaded;
  const original = process.emitWarning;
  process.emitWarning = function emitWarning(this: unknown, warning: string | Error, ...rest: unknown[]): void {
    const text = typeof warning === 'string' ? warning : warning.message;
    const type = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: string } | undefined)?.type ?? (warning as Error).name;
    if (type === 'ExperimentalWarning' && /SQLite/i.test(text)) return;
    return (original as (...a: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    loaded = process.getBuiltinModule('node:sqlite') as typeof NodeSqlite;
  } finally {
    process.emitWarning = original;
  }
  if (!loaded) throw new Error('node:sqlite is not available: the state backend needs Node.js >= 22.13');
  return loaded;
}
