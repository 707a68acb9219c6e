import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { stateDoc } from '../support/state-backend.js';
import { ensureBuilt, startServerProcess } from '../support/state-server.js';
import { type PostgresServer, sharedPostgres, stopSharedPostgres } from '../support/postgres-server.js';
import { cliSource, newStoreData, type RunBackend, startServedBackend, type StoreData, withStore } from './state-stores.js';
import { until } from '../support/until.js';
import { APPLY, inProvisioner, KEY, requireTofu, tofu, tofuOk, waitForLock, workDir } from './state-tofu-helpers.js';

// The shared state backend on PostgreSQL, with the real OpenTofu and a real PostgreSQL
// server: several `deploy state serve` processes on one database are one backend; a server
// killed mid-apply leaves a lock every other server reports and can release; a database
// restart is a 503 (tofu retries), never a 404, and the server recovers by itself.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let root: string;
let postgres: PostgresServer;
beforeAll(async () => {
  requireTofu();
  ensureBuilt();
  root = await mkdtemp(join(tmpdir(), 'deploy-state-pg-'));
  postgres = await sharedPostgres();
});
afterAll(async () => {
  await stopSharedPostgres();
  await rm(root, { recursive: true, force: true });
}, 120_000);

/** The LockInfo tofu prints when it cannot take the lock ("Lock Info:" block). */
function printedHolder(out: string): { ID: string; Who: string; Operation: string; Created: string } | undefined {
  const field = (name: string) => new RegExp(`^\\s*${name}:\\s+(.+)$`, 'm').exec(out)?.[1]?.trim();
  const ID = field('ID');
  if (!out.includes('Error acquiring the state lock') || !ID) return undefined;
  return { ID, Who: field('Who') ?? '', Operation: field('Operation') ?? '', Created: field('Created') ?? '' };
}

/** The `run` trigger of the null_resource in a state document: which run applied it. */
function appliedRun(state: string): string {
  const doc = JSON.parse(state) as { resources: { type: string; instances: { attributes: { triggers: { run: string } } }[] }[] };
  return doc.resources.find((r) => r.type === 'null_resource')!.instances[0]!.attributes.triggers.run;
}

async function closeAll(backends: RunBackend[]): Promise<void> {
  await Promise.all(backends.map((b) => b.close()));
}

describe('the state backend on PostgreSQL: credentials', () => {
  it("takes the database password from libpq's PGPASSWORD or a pgpass file, and never logs it", async () => {
    const db = await postgres.createDatabase();
    const pgpass = join(root, 'pgpass');
    await writeFile(pgpass, `127.0.0.1:${postgres.port}:${db.name}:deploy:${db.password}\n`, { mode: 0o600 });
    const ways = { PGPASSWORD: { PGPASSWORD: db.password }, PGPASSFILE: { PGPASSFILE: pgpass } };
    for (const [way, env] of Object.entries(ways)) {
      const server = await startServerProcess(db.urlWithoutPassword, { ...env, DEPLOY_LOG_LEVEL: 'debug' });
      try {
        expect((await fetch(`${server.url}/k`, { method: 'POST', body: stateDoc(1, 'l-1') })).status, way).toBe(200);
        expect((await fetch(`${server.url}/k`)).status, way).toBe(200);
      } finally {
        await server.stop();
      }
      expect(server.stderr()).toContain(db.urlWithoutPassword);
      expect(server.stderr(), way).not.toContain(db.password);
    }
  });
});

describe('the state backend on PostgreSQL: several servers are one backend', () => {
  it('50 concurrent tofu applies spread over two servers: each applies or names the holder; serials rise; the next plan is a no-op', async () => {
    const data = await newStoreData('postgres', root, 'fifty');
    const servers = [await startServedBackend(data, KEY), await startServedBackend(data, KEY)];
    try {
      const n = 50;
      const dirs: string[] = [];
      // tofu init of 50 runners, 10 at a time
      for (let i = 0; i < n; i += 10) {
        dirs.push(...(await Promise.all(Array.from({ length: Math.min(10, n - i) }, (_, j) => workDir(root, `fifty-${i + j}`, servers[(i + j) % 2]!.env)))));
      }
      const started = Date.now();
      // every run replaces the null_resource (its own `run`), so each apply writes a new serial;
      // a lock wait lets some runs queue for the lock, the others give up naming the holder
      const runs = dirs.map((dir, i) => tofu(dir, ['apply', '-auto-approve', '-no-color', '-lock-timeout=40s', '-var', `run=${i}`], servers[i % 2]!.env, 400_000));
      const results = await Promise.all(runs.map((r) => r.done));
      const ended = Date.now();

      const applied: number[] = [];
      const holders = new Set<string>();
      results.forEach((r, i) => {
        if (r.code === 0) {
          expect(r.out, `run ${i}`).toContain('Apply complete!');
          applied.push(i);
          return;
        }
        // anything else than a refused lock that names its holder is a failure of the backend
        const holder = printedHolder(r.out);
        expect(holder, `run ${i} failed otherwise than on the lock (exit ${r.code}):\n${r.out}`).toBeDefined();
        expect(holder!.ID).toMatch(UUID);
        expect(holder!.Who).toMatch(/\S+@\S+/);
        expect(holder!.Operation).toBe('OperationTypeApply');
        // Go's time format, "2026-12-01 14:55:01.123456789 +0000 UTC": to the second
        const created = Date.parse(`${holder!.Created.slice(0, 19).replace(' ', 'T')}Z`);
        expect(created, holder!.Created).toBeGreaterThanOrEqual(started - 2000);
        expect(created).toBeLessThanOrEqual(ended);
        holders.add(holder!.ID);
      });
      console.log(`50 concurrent applies over 2 servers: ${applied.length} applied, ${n - applied.length} refused naming ${holders.size} holder(s), ${((ended - started) / 1000).toFixed(1)} s`);
      expect(applied.length).toBeGreaterThanOrEqual(2);
      // only a run that took the lock can be named as a holder, and each such run applied
      expect(holders.size).toBeLessThanOrEqual(applied.length);
      // runs through each server applied
      expect(applied.some((i) => i % 2 === 0) && applied.some((i) => i % 2 === 1)).toBe(true);

      const { versions, state, lock } = await withStore(data, async (s) => ({ versions: await s.versions(KEY), state: await s.read(KEY), lock: await s.lockOf(KEY) }));
      expect(lock).toBeUndefined();
      const serials = versions.map((v) => v.serial);
      for (let i = 1; i < serials.length; i += 1) expect(serials[i]!, `serials ${serials.join(',')}`).toBeGreaterThan(serials[i - 1]!);
      expect(new Set(versions.map((v) => v.lineage)).size).toBe(1);
      // as many versions as applies (each apply may also write once more before its end)
      expect(versions.length).toBeGreaterThanOrEqual(applied.length);

      // the final state parses, through either server, and is the last version
      for (const server of servers) {
        const got = await fetch(server.address, { headers: { Authorization: `Basic ${Buffer.from(`ops:${server.env.TF_HTTP_PASSWORD}`).toString('base64')}` } });
        expect(got.status).toBe(200);
        const text = await got.text();
        expect(text).toBe(state!.body.toString());
        expect(JSON.parse(text).serial).toBe(serials.at(-1));
      }
      const last = appliedRun(state!.body.toString());
      expect(applied).toContain(Number(last));
      const plan = await tofu(dirs[Number(last)]!, ['plan', '-no-color', '-detailed-exitcode', '-lock-timeout=0s', '-var', `run=${last}`], servers[Number(last) % 2]!.env).done;
      expect(plan.code, plan.out).toBe(0);
      expect(plan.out).toContain('No changes');
    } finally {
      await closeAll(servers);
    }
  });

  it('a server killed with SIGKILL mid-apply: the run fails cleanly, the other server names the holder and releases it, the next apply converges', async () => {
    const data = await newStoreData('postgres', root, 'killed-server');
    const [a, b] = [await startServedBackend(data, KEY), await startServedBackend(data, KEY)];
    try {
      const dirA = await workDir(root, 'killed-server-a', a.env);
      const dirB = await workDir(root, 'killed-server-b', b.env);
      const run = tofu(dirA, [...APPLY, '-var', 'sleep=6'], a.env);
      const holder = await waitForLock(data, KEY);
      await inProvisioner(run);
      await a.process!.kill9();
      const killedAt = Date.now();
      const result = await run.done;
      // tofu could neither save the state nor release the lock through the dead server: it
      // says both and exits non-zero, within its retries (it does not print the lock's ID:
      // `deploy state list` through another server shows it, below)
      expect(result.code, result.out).not.toBe(0);
      expect(result.signal).toBeNull();
      expect(result.out).toContain('Failed to save state');
      expect(result.out).toContain('Error releasing the state lock');
      expect(Date.now() - killedAt).toBeLessThan(120_000);

      // the other server reports the lock with its holder, at once
      const source = cliSource(data, b);
      const list = await runCli(['state', 'list', '--json', ...source.args], source.env);
      expect(list.code, list.stderr).toBe(0);
      expect(JSON.parse(list.stdout)).toMatchObject([{ key: KEY, lock: { ID: holder.ID, Who: holder.Who } }]);
      const blocked = await tofu(dirB, APPLY, b.env).done;
      expect(blocked.code).not.toBe(0);
      expect(printedHolder(blocked.out)?.ID).toBe(holder.ID);
      // nothing half-written: every kept version is whole (the killed run saved none)
      await withStore(data, async (s) => {
        for (const v of await s.versions(KEY)) expect(JSON.parse((await s.read(KEY, v.serial))!.body.toString()).serial).toBe(v.serial);
      });

      const unlock = await runCli(['state', 'unlock', holder.ID, ...source.args], source.env);
      expect(unlock.code, unlock.stderr).toBe(0);
      expect(unlock.stdout).toContain(`released lock ${holder.ID} on "${KEY}"`);
      const out = await tofuOk(dirB, APPLY, b.env);
      expect(out).toContain('Apply complete!');
      const plan = await tofu(dirB, ['plan', '-no-color', '-detailed-exitcode', '-lock-timeout=0s'], b.env).done;
      expect(plan.code, plan.out).toBe(0);
    } finally {
      await closeAll([a, b]);
    }
  });

  it('PostgreSQL restarted during an apply: 503 (never 404 or an empty state) while it is down, then the same server carries on', async () => {
    const data: StoreData = await newStoreData('postgres', root, 'pg-restart');
    const server = await startServedBackend(data, KEY);
    const auth = { Authorization: `Basic ${Buffer.from(`ops:${server.env.TF_HTTP_PASSWORD}`).toString('base64')}` };
    // tofu retries a 5xx TF_HTTP_RETRY_MAX times (default 2: 3 s); an operator who expects
    // database fail-overs sets more
    const env = { ...server.env, TF_HTTP_RETRY_MAX: '10', TF_HTTP_RETRY_WAIT_MIN: '1', TF_HTTP_RETRY_WAIT_MAX: '2' };
    try {
      const dir = await workDir(root, 'pg-restart', env);
      await tofuOk(dir, APPLY, env);
      const before = await (await fetch(server.address, { headers: auth })).text();
      const pid = server.process!.child.pid;

      const run = tofu(dir, [...APPLY, '-var', 'sleep=6', '-var', 'run=2'], env);
      await waitForLock(data, KEY);
      await inProvisioner(run); // tofu has read the state, sleeps in the provisioner
      await postgres.stop();
      const get = await fetch(server.address, { headers: auth });
      expect(get.status).toBe(503);
      expect(get.headers.get('retry-after')).toBe('1');
      expect(await get.text()).toMatch(/unavailable/);
      expect((await fetch(server.address, { method: 'LOCK', headers: auth, body: JSON.stringify({ ID: 'probe' }) })).status).toBe(503);
      // wait until tofu's own save met the outage, then bring the database back
      await until('tofu\'s save meeting the outage (a state-storage-failed event of a POST)', () => /"kind":"state-storage-failed"[^\n]*"method":"POST"/.test(server.process!.stderr()), {
        timeoutMs: 60_000,
        seen: () => `the server's stderr:\n${server.process!.stderr()}`,
      });
      await postgres.start();
      const result = await run.done;
      expect(result.code, result.out).toBe(0);
      expect(result.out).toContain('Apply complete!');
      // the same server process, no restart; the new state is there and the lock is free
      expect(server.process!.child.exitCode).toBeNull();
      expect(server.process!.child.pid).toBe(pid);
      const after = await (await fetch(server.address, { headers: auth })).text();
      expect(JSON.parse(after).serial).toBeGreaterThan(JSON.parse(before).serial);
      expect(appliedRun(after)).toBe('2');
      expect(await withStore(data, (s) => s.lockOf(KEY))).toBeUndefined();
      const plan = await tofu(dir, ['plan', '-no-color', '-detailed-exitcode', '-lock-timeout=0s', '-var', 'run=2'], env).done;
      expect(plan.code, plan.out).toBe(0);
    } finally {
      if (!postgres.pid()) await postgres.start();
      await server.close();
    }
  });
});
