import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DeployError, ExitCode } from '../../../../src/errors.js';
import { startEmbeddedBackend } from '../../../../src/state/embedded.js';
import { loadSqlite, requireSqlite } from '../../../../src/state/store/sqlite.js';
import { DATABASE_FILE } from '../../../../src/state/store/sqlite-store.js';
import { runCli, tempDir } from '../../../support/cli.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** A data directory whose database a newer deploy wrote (PRAGMA user_version beyond ours). */
async function newerDataDir(): Promise<string> {
  const { dir, cleanup } = await tempDir('deploy-newer-schema-');
  cleanups.push(cleanup);
  const db = new (loadSqlite().DatabaseSync)(join(dir, DATABASE_FILE));
  db.exec('PRAGMA user_version = 99');
  db.close();
  return dir;
}

const NEWER_HINT = '  what to do: a newer deploy wrote this state data: run that version of deploy (or a later one) against it; this one changed nothing in it\n';

describe('state data this deploy cannot use: exit 3 with what to do, never 1 "unexpected"', () => {
  it('GIVEN a database of a newer schema WHEN deploy state list reads it THEN exit 3 naming the file, both versions and what to do', async () => {
    const dir = await newerDataDir();
    const r = await runCli(['state', 'list', '--data', dir], { PATH: process.env.PATH });
    expect(r.code).toBe(ExitCode.tool);
    expect(r.stderr).toBe(`deploy: cannot open the state data in ${dir}: ${join(dir, DATABASE_FILE)} has schema version 99, newer than this deploy understands (2)\n${NEWER_HINT}`);
  });

  it('GIVEN a database of a newer schema WHEN deploy state serve opens it THEN exit 3 with what to do, and nothing is served', async () => {
    const dir = await newerDataDir();
    const r = await runCli(['state', 'serve', '--listen', '127.0.0.1:0', '--data', dir], { PATH: process.env.PATH });
    expect(r.code).toBe(ExitCode.tool);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('newer than this deploy understands (2)\n');
    expect(r.stderr.endsWith(NEWER_HINT)).toBe(true);
  });

  it('GIVEN a database of a newer schema WHEN the embedded backend opens it THEN its error carries exit 3 and the same hint (not "check that the directory is writable")', async () => {
    const dir = await newerDataDir();
    const err = await startEmbeddedBackend({ key: 'g-all', dataDir: dir }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeployError);
    expect((err as DeployError).exitCode).toBe(ExitCode.tool);
    expect((err as DeployError).message).toBe(`the embedded state backend could not open its data in ${dir}: ${join(dir, DATABASE_FILE)} has schema version 99, newer than this deploy understands (2)`);
    expect(`  what to do: ${(err as DeployError).hint}\n`).toBe(NEWER_HINT);
  });

  it('GIVEN a Node.js without node:sqlite (22.12: only behind a flag) WHEN the state backend loads it THEN exit 3 saying which Node it needs and how to run deploy', () => {
    const err = (() => {
      try {
        requireSqlite(undefined, 'v22.12.0');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(DeployError);
    expect((err as DeployError).exitCode).toBe(ExitCode.tool);
    expect((err as DeployError).message).toBe('node:sqlite is not available in Node.js v22.12.0: the state backend needs Node.js >= 22.13');
    expect((err as DeployError).hint).toBe('run deploy as bin/deploy (it uses the Node 24 that `npm ci` installs under node_modules/node), or put Node.js >= 22.13 on PATH');
    // this Node has it
    expect(requireSqlite(loadSqlite(), process.version).DatabaseSync).toBeTypeOf('function');
  });
});
