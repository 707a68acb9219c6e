import type * as NodeSqlite from 'node:sqlite';
import { ToolError } from '../../errors.js';

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
  let found: unknown;
  try {
    found = process.getBuiltinModule?.('node:sqlite');
  } catch {
    // a Node.js that knows no node:sqlite (or only behind --experimental-sqlite) may throw
    found = undefined;
  } finally {
    process.emitWarning = original;
  }
  loaded = requireSqlite(found, process.version);
  return loaded;
}

/**
 * The module, or the error that says what to do (exit 3): Node.js 22.12 passes bin/deploy.js's
 * version check but has node:sqlite only behind a flag; it is on by default from 22.13.
 */
export function requireSqlite(found: unknown, nodeVersion: string): typeof NodeSqlite {
  if (found) return found as typeof NodeSqlite;
  throw new ToolError(`node:sqlite is not available in Node.js ${nodeVersion}: the state backend needs Node.js >= 22.13`, {
    hint: 'run deploy as bin/deploy (it uses the Node 24 that `npm ci` installs under node_modules/node), or put Node.js >= 22.13 on PATH',
  });
}
