import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { takeRunLock } from '../../src/state/run-lock.js';
import { runCli } from '../support/cli.js';
import { ensureBuilt } from '../support/state-server.js';
import { stopSharedPostgres } from '../support/postgres-server.js';
import { cliSource, newStoreData, type RunBackend, STORE_KINDS, startRunBackend, startServedBackend, withStore } from './state-stores.js';
import { APPLY, inProvisioner, KEY, killGroup, requireTofu, tofu, tofuOk, waitForLock, workDir } from './state-tofu-helpers.js';

// The state backend with the real OpenTofu (built by the global setup) and the real null and
// random providers from the offline mirror, on each store: SQLite (the embedded backend of a
// run, and a server process on the same data directory) and PostgreSQL (server processes on
// one database, as a team's shared backend).

let root: string;
beforeAll(async () => {
  requireTofu();
  ensureBuilt();
  root = await mkdtemp(join(tmpdir(), 'deploy-state-tofu-'));
});
afterAll(async () => {
  await stopSharedPostgres();
  await rm(root, { recursive: true, force: true });
}, 120_000);

describe.each(STORE_KINDS)('the state backend on %s with the real tofu', (kind) => {
  it('two concurrent applies on one key: the second fails with the holder\'s ID, Who and Created', async () => {
    const data = await newStoreData(kind, root, `concurrent-${kind}`);
    // run A: the backend of one deploy run; run B: another server process on the same data
    // (two `deploy apply` runs on one machine, or two servers of a team on one database)
    const a = await startRunBackend(data, KEY);
    const b = await startServedBackend(data, KEY);
    const bEnv = b.env;
    try {
      const dirA = await workDir(root, `concurrent-a-${kind}`, a.env);
      const dirB = await workDir(root, `concurrent-b-${kind}`, bEnv);
      const runA = tofu(dirA, [...APPLY, '-var', 'sleep=8'], a.env);
      const holder = await waitForLock(data, KEY);
      const runB = await tofu(dirB, APPLY, bEnv).done;
      expect(runB.code).not.toBe(0);
      expect(runB.out).toContain('Error acquiring the state lock');
      expect(runB.out).toMatch(new RegExp(`ID:\\s+${holder.ID}`));
      expect(holder.Who).toBeTruthy();
      expect(runB.out).toMatch(new RegExp(`Who:\\s+${holder.Who!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      // tofu prints Created as Go's time format: "2026-11-30 04:05:06.123 +0000 UTC"
      const created = /Created:\s+(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)/.exec(runB.out)?.[1];
      expect(created).toBe(holder.Created!.slice(0, 19).replace('T', ' '));
      const resultA = await runA.done;
      expect(resultA.code, resultA.out).toBe(0);
      // the lock is released, B may now go (no changes to make: same state, same config)
      expect(await withStore(data, (s) => s.lockOf(KEY))).toBeUndefined();
      const again = await tofuOk(dirB, [...APPLY], bEnv);
      expect(again).toMatch(/Resources: 0 added, 0 changed, 0 destroyed|No changes/);
    } finally {
      await b.close();
      await a.close();
    }
  });

  it('an apply killed with SIGKILL leaves a lock that `deploy state unlock <ID>` releases', async () => {
    const data = await newStoreData(kind, root, `killed-${kind}`);
    const backend = await startRunBackend(data, KEY);
    try {
      const dir = await workDir(root, `killed-${kind}`, backend.env);
      const run = tofu(dir, [...APPLY, '-var', 'sleep=15'], backend.env);
      const holder = await waitForLock(data, KEY);
      // once it is in the provisioner, kill it: no chance to unlock
      await inProvisioner(run);
      killGroup(run.child);
      expect((await run.done).signal).toBe('SIGKILL');
      expect((await withStore(data, (s) => s.lockOf(KEY)))?.ID).toBe(holder.ID);

      const blocked = await tofu(dir, APPLY, backend.env).done;
      expect(blocked.code).not.toBe(0);
      expect(blocked.out).toContain(holder.ID);

      const source = cliSource(data, backend);
      const unlock = await runCli(['state', 'unlock', holder.ID, ...source.args], source.env);
      expect(unlock.code, unlock.stderr).toBe(0);
      expect(unlock.stdout).toContain(`released lock ${holder.ID} on "${KEY}"`);
      const out = await tofuOk(dir, APPLY, backend.env);
      expect(out).toContain('Apply complete!');
      expect(await withStore(data, (s) => s.lockOf(KEY))).toBeUndefined();

      // tofu's own force-unlock (it sends {"ID": ...}) releases such a lock too
      const run2 = tofu(dir, [...APPLY, '-var', 'sleep=15', '-var', 'run=2'], backend.env);
      const holder2 = await waitForLock(data, KEY);
      killGroup(run2.child);
      await run2.done;
      const wrongForce = await tofu(dir, ['force-unlock', '-force', '-no-color', 'not-the-holder'], backend.env).done;
      expect(wrongForce.code).not.toBe(0);
      expect((await withStore(data, (s) => s.lockOf(KEY)))?.ID).toBe(holder2.ID);
      await tofuOk(dir, ['force-unlock', '-force', '-no-color', holder2.ID], backend.env);
      expect(await withStore(data, (s) => s.lockOf(KEY))).toBeUndefined();
    } finally {
      await backend.close();
    }
  });

  it("deploy's run lock: tofu writes under it with -lock=false and ?ID=; another tofu meets the run's Who; a killed run's lock goes with unlock --held-by", async () => {
    const data = await newStoreData(kind, root, `run-lock-${kind}`);
    const backend = await startRunBackend(data, KEY);
    const who = `cd test run ${process.pid}.1`;
    try {
      const dir = await workDir(root, `run-lock-${kind}`, backend.env);
      const lock = await takeRunLock({ backend: backend.http, key: KEY, operation: 'deploy apply', who, signal: new AbortController().signal });
      const underLock = { ...backend.env, TF_HTTP_ADDRESS: lock.tofuAddress };
      const run = tofu(dir, [...APPLY.filter((a) => !a.startsWith('-lock')), '-lock=false', '-var', 'sleep=6'], underLock);
      // meanwhile a tofu that takes its own lock (another run) is refused, naming this run
      const other = await tofu(dir, APPLY, backend.env).done;
      expect(other.code).not.toBe(0);
      expect(other.out).toContain('Error acquiring the state lock');
      expect(other.out).toMatch(new RegExp(`Who:\\s+${who.replace(/[.]/g, '\\.')}`));
      const r = await run.done;
      expect(r.code, r.out).toBe(0);
      expect((await withStore(data, (s) => s.latest(KEY)))?.serial).toBeGreaterThan(0);
      expect((await withStore(data, (s) => s.lockOf(KEY)))?.Who, 'held until the run releases it').toBe(who);
      const noop = await tofu(dir, ['plan', '-no-color', '-detailed-exitcode', '-lock=false'], underLock).done;
      expect(noop.code, noop.out).toBe(0);

      // the run "is killed": its lock stays; only that run's name releases it
      const source = cliSource(data, backend);
      const wrong = await runCli(['state', 'unlock', '--held-by', 'some other run', '--key', KEY, ...source.args], source.env);
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain(`held by ${who}`);
      const unlock = await runCli(['state', 'unlock', '--held-by', who, ...source.args], source.env);
      expect(unlock.code, unlock.stderr).toBe(0);
      expect(unlock.stdout).toContain(`released lock ${lock.info.ID} on "${KEY}"`);
      expect(await tofuOk(dir, APPLY, backend.env)).toMatch(/No changes|0 added, 0 changed, 0 destroyed/);
    } finally {
      await backend.close();
    }
  });

  it('the state survives a server restart: the next plan has no changes', async () => {
    const data = await newStoreData(kind, root, `restart-${kind}`);
    let backend: RunBackend = await startRunBackend(data, KEY);
    let dir: string;
    try {
      dir = await workDir(root, `restart-${kind}`, backend.env);
      await tofuOk(dir, APPLY, backend.env);
    } finally {
      await backend.close();
    }
    const before = (await withStore(data, (s) => s.latest(KEY)))!;
    backend = await startRunBackend(data, KEY); // a new server: a new port, a new password
    try {
      const plan = await tofu(dir, ['plan', '-no-color', '-detailed-exitcode', '-lock-timeout=0s'], backend.env).done;
      expect(plan.code, plan.out).toBe(0);
      expect(plan.out).toContain('No changes');
      // the password made in the first apply is the one still in state
      const after = (await withStore(data, (s) => s.read(KEY)))!;
      expect(after.sha256).toBe(before.sha256);
      // `deploy state show` of this real state never prints the password
      const password = (JSON.parse(after.body.toString()) as { outputs: { pw: { value: string } } }).outputs.pw.value;
      expect(password).toHaveLength(20);
      const source = cliSource(data, backend);
      const show = await runCli(['state', 'show', KEY, ...source.args], source.env);
      expect(show.code, show.stderr).toBe(0);
      expect(JSON.parse(show.stdout).resources.map((r: { type: string }) => r.type)).toContain('random_password');
      expect(show.stdout).not.toContain(password);
    } finally {
      await backend.close();
    }
  });

  it('a POST retried after its response was dropped is idempotent', async () => {
    const data = await newStoreData(kind, root, `retry-${kind}`);
    const backend = await startRunBackend(data, KEY);
    const target = new URL(backend.address);
    // a proxy that passes everything through, but cuts the connection after the first POST
    // was stored, before its answer reaches tofu (as a dropped response would)
    const posts: { sha: string; status: number; dropped: boolean }[] = [];
    let dropNext = false;
    const proxy: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const up = httpRequest(
          { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
          (upRes) => {
            const back: Buffer[] = [];
            upRes.on('data', (c: Buffer) => back.push(c));
            upRes.on('end', () => {
              if (req.method === 'POST') {
                const drop = dropNext;
                dropNext = false;
                posts.push({ sha: createHash('sha256').update(body).digest('hex'), status: upRes.statusCode!, dropped: drop });
                if (drop) {
                  res.socket?.destroy();
                  return;
                }
              }
              res.writeHead(upRes.statusCode!, upRes.headers);
              res.end(Buffer.concat(back));
            });
          },
        );
        up.end(body);
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const port = (proxy.address() as { port: number }).port;
    const viaProxy = `http://127.0.0.1:${port}/${KEY}`;
    const env = { ...backend.env, TF_HTTP_ADDRESS: viaProxy, TF_HTTP_LOCK_ADDRESS: viaProxy, TF_HTTP_UNLOCK_ADDRESS: viaProxy, TF_HTTP_RETRY_WAIT_MIN: '0' };
    try {
      const dir = await workDir(root, `retry-${kind}`, env);
      dropNext = true;
      const out = await tofuOk(dir, APPLY, env);
      expect(out).toContain('Apply complete!');
      const dropped = posts.findIndex((p) => p.dropped);
      expect(dropped).toBeGreaterThanOrEqual(0);
      // tofu sent the same bytes again, and the backend answered success without a new version
      const resend = posts[dropped + 1]!;
      expect(resend.sha).toBe(posts[dropped]!.sha);
      expect(resend.status).toBe(200);
      const versions = await withStore(data, (s) => s.versions(KEY));
      expect(versions.filter((v) => v.sha256 === resend.sha)).toHaveLength(1);
      expect(new Set(versions.map((v) => v.serial)).size).toBe(versions.length);
      const plan = await tofu(dir, ['plan', '-no-color', '-detailed-exitcode', '-lock-timeout=0s'], env).done;
      expect(plan.code, plan.out).toBe(0);
    } finally {
      await new Promise((r) => proxy.close(r));
      proxy.closeAllConnections();
      await backend.close();
    }
  });
});
