import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, type ServerProcess, startServerProcess } from '../support/state-server.js';
import { stopSharedPostgres } from '../support/postgres-server.js';
import { newStoreData, STORE_KINDS, withStore } from './state-stores.js';

// kill -9 of the server while it writes, and restarts: the state is the previous or the new
// version, never a torn one, and nothing acknowledged is lost. On each store: SQLite (a
// killed process's write is a torn WAL frame at most) and PostgreSQL (a killed server's
// connection closes and its open transaction is rolled back).

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function bigState(serial: number, lineage: string, bytes: number): Buffer {
  const resources = [{ mode: 'managed', type: 'null_resource', name: 'n', instances: [{ attributes: { id: String(serial) } }] }];
  // distinct content per serial, so a torn mix of two versions cannot pass for either
  const pad = createHash('sha256').update(String(serial)).digest('hex').repeat(Math.ceil(bytes / 64)).slice(0, bytes);
  return Buffer.from(JSON.stringify({ version: 4, serial, lineage, outputs: {}, resources, pad }));
}

let root: string;
beforeAll(async () => {
  ensureBuilt();
  root = await mkdtemp(join(tmpdir(), 'deploy-state-crash-'));
});
afterAll(async () => {
  await stopSharedPostgres();
  await rm(root, { recursive: true, force: true });
}, 120_000);

describe.each(STORE_KINDS)('the state backend on %s under kill -9', (kind) => {
  it('keeps the previous or the new version, never a torn one, across 6 kills mid-write', async () => {
    const data = await newStoreData(kind, root, 'crash');
    const lineage = randomUUID();
    const sent = new Map<string, number>(); // sha -> serial of every body sent
    let acknowledged = 0;
    let serial = 0;
    let inFlightAtKill = 0;
    const outcomes: string[] = [];
    for (let round = 0; round < 6; round += 1) {
      const server: ServerProcess = await startServerProcess(data.data, data.serveEnv);
      const url = `${server.url}/crash`;
      // the state after a restart: whole, one of the bodies sent, not older than acknowledged
      const got = await fetch(url);
      if (serial > 0 && !(acknowledged === 0 && got.status === 404)) {
        // (404 only while nothing was ever acknowledged: the first POST may have died too)
        expect(got.status).toBe(200);
        const body = Buffer.from(await got.arrayBuffer());
        const was = sent.get(sha(body));
        expect(was, 'the stored state is not one of the versions sent (torn?)').toBeDefined();
        expect(was!).toBeGreaterThanOrEqual(acknowledged);
        outcomes.push(was === serial ? 'in-flight version kept' : 'previous version kept');
        serial = Math.max(serial, was!);
      }
      // write 4 MB states back to back; kill -9 while one is on its way in
      const killAfterMs = 40 + round * 35;
      const started = Date.now();
      let killed = false;
      while (!killed) {
        serial += 1;
        const body = bigState(serial, lineage, 4 * 1024 * 1024);
        sent.set(sha(body), serial);
        const post = fetch(url, { method: 'POST', body, headers: { 'Content-Type': 'application/json' } })
          .then((r) => r.status)
          .catch(() => 0);
        if (Date.now() - started >= killAfterMs) {
          // somewhere inside the request: upload, checks, SQLite commit, or the answer
          await new Promise((r) => setTimeout(r, [1, 5, 10, 20, 35, 60][round]));
          await server.kill9();
          killed = true;
          inFlightAtKill += 1;
        }
        const status = await post;
        if (status === 200) acknowledged = serial;
        else if (!killed) throw new Error(`POST serial ${serial} answered ${status}: ${server.stderr()}`);
      }
    }
    expect(inFlightAtKill).toBe(6);
    console.log(`kill -9 outcomes: ${outcomes.join(', ')}`);
    expect(acknowledged).toBeGreaterThan(0);

    // after the last kill: the database is intact and every kept version is whole
    await withStore(data, async (store) => {
      const versions = await store.versions('crash');
      expect(versions.length).toBeGreaterThanOrEqual(acknowledged > 0 ? 1 : 0);
      for (const v of versions) {
        const body = (await store.read('crash', v.serial))!.body;
        expect(sha(body)).toBe(v.sha256);
        expect(sent.get(v.sha256)).toBe(v.serial);
      }
      expect(versions.at(-1)!.serial).toBeGreaterThanOrEqual(acknowledged);
    });
  });

  it('serves the same state and lock after a clean restart', async () => {
    const data = await newStoreData(kind, root, 'restart');
    const lineage = randomUUID();
    const holder = { ID: randomUUID(), Who: 'dave@host', Created: new Date().toISOString(), Operation: 'OperationTypeApply' };
    const first = await startServerProcess(data.data, data.serveEnv);
    const body = bigState(7, lineage, 1000);
    expect((await fetch(`${first.url}/k`, { method: 'POST', body })).status).toBe(200);
    expect((await fetch(`${first.url}/k`, { method: 'LOCK', body: JSON.stringify(holder) })).status).toBe(200);
    expect(await first.stop()).toBe(0);
    const second = await startServerProcess(data.data, data.serveEnv);
    try {
      const got = await fetch(`${second.url}/k`);
      expect(Buffer.from(await got.arrayBuffer()).equals(body)).toBe(true);
      const lock = await fetch(`${second.url}/k`, { method: 'LOCK', body: JSON.stringify({ ID: randomUUID() }) });
      expect(lock.status).toBe(423);
      expect(await lock.json()).toEqual(holder);
    } finally {
      await second.stop();
    }
  });
});
