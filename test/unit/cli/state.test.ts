import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { pino } from 'pino';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run } from '../../../src/cli/main.js';
import { listTree, runCli, tempDir } from '../../support/cli.js';
import { sharedPostgres, stopSharedPostgres } from '../../support/postgres-server.js';
import { call, lockInfo, startTestBackend, type TestBackend } from '../../support/state-backend.js';

const lineage = 'c0ffee00-0000-4000-8000-000000000003';
const secretState = (serial: number) =>
  Buffer.from(
    JSON.stringify({
      version: 4,
      serial,
      lineage,
      outputs: { admin: { value: 'out-secret-xyz', type: 'string', sensitive: true } },
      resources: [
        {
          mode: 'managed',
          type: 'random_password',
          name: 'db',
          instances: [{ attributes: { id: 'none', result: 'pw-secret-abc' }, sensitive_attributes: [[{ type: 'get_attr', value: 'result' }]] }],
        },
      ],
    }),
  );

/** Runs `deploy ...` in-process, with a logger into a buffer and an abortable signal. */
function startCli(args: string[], env: NodeJS.ProcessEnv) {
  const out = new PassThrough();
  const err = new PassThrough();
  const logs = new PassThrough();
  const text = { stdout: '', stderr: '', logs: '' };
  out.on('data', (d) => (text.stdout += String(d)));
  err.on('data', (d) => (text.stderr += String(d)));
  logs.on('data', (d) => (text.logs += String(d)));
  const controller = new AbortController();
  const logger = pino({ level: 'debug' }, logs);
  const done = run(['node', 'deploy', ...args], { stdout: out, stderr: err, env, logger: () => logger, signal: controller.signal });
  return { text, done, stop: () => controller.abort(new Error('SIGTERM')) };
}

async function waitFor<T>(fn: () => T | undefined, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('deploy state serve: exposure', () => {
  it('refuses a non-loopback address without credentials, naming the variables', async () => {
    const r = await runCli(['state', 'serve', '--listen', '0.0.0.0:0', '--data', '/nonexistent/never-created'], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('DEPLOY_STATE_USERNAME');
    expect(r.stderr).toContain('DEPLOY_STATE_PASSWORD');
  });

  it('refuses half-set credentials and a malformed address', async () => {
    expect((await runCli(['state', 'serve', '--listen', '127.0.0.1:0'], { DEPLOY_STATE_USERNAME: 'u' })).code).toBe(2);
    expect((await runCli(['state', 'serve', '--listen', 'nohostport'], {})).code).toBe(2);
  });

  it('takes credentials only from the environment (no flag), and says so in --help', async () => {
    const r = await runCli(['state', 'serve', '--help'], {});
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('DEPLOY_STATE_USERNAME');
    expect(r.stdout).toContain('DEPLOY_STATE_PASSWORD');
    expect(r.stdout).not.toMatch(/--(user|pass)/);
    expect((await runCli(['state', 'serve', '--password', 'x'], {})).code).toBe(2);
  });

  it('serves an exposed address with basic auth, and never logs the password', async () => {
    const { dir, cleanup } = await tempDir();
    const env = { DEPLOY_STATE_USERNAME: 'ops', DEPLOY_STATE_PASSWORD: 'pw-never-logged-42' };
    const cli = startCli(['state', 'serve', '--listen', '0.0.0.0:0', '--data', dir], env);
    try {
      const base = (await waitFor(() => /^(http:\/\/\S+)\n/.exec(cli.text.stdout)?.[1])).replace('0.0.0.0', '127.0.0.1');
      expect((await call(`${base}/k`, 'GET')).status).toBe(401);
      const auth = { Authorization: `Basic ${Buffer.from('ops:pw-never-logged-42').toString('base64')}` };
      expect((await call(`${base}/k`, 'LOCK', lockInfo(), auth)).status).toBe(200);
      expect((await call(`${base}/k`, 'GET', undefined, { Authorization: `Basic ${Buffer.from('ops:pw-never-logged-43').toString('base64')}` })).status).toBe(401);
    } finally {
      cli.stop();
    }
    expect(await cli.done).toBe(0);
    const all = cli.text.stdout + cli.text.stderr + cli.text.logs;
    expect(cli.text.logs).toContain('state-serving');
    expect(all).not.toContain('pw-never-logged');
    await cleanup();
  });
});

describe('deploy state serve on PostgreSQL', () => {
  afterAll(stopSharedPostgres, 60_000);

  it('refuses a password in --data (argv), and never echoes it', async () => {
    const r = await runCli(['state', 'serve', '--data', 'postgres://deploy:argv-secret-91@127.0.0.1:5432/db'], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--data');
    expect(r.stderr).toContain('DEPLOY_STATE_DATABASE_URL');
    expect(r.stderr).not.toContain('argv-secret-91');
    const q = await runCli(['state', 'serve', '--data', 'postgresql://deploy@127.0.0.1/db?password=argv-secret-92'], {});
    expect(q.code).toBe(2);
    expect(q.stderr).not.toContain('argv-secret-92');
  });

  it('names DEPLOY_STATE_DATABASE_URL when it is not a postgres URL', async () => {
    const r = await runCli(['state', 'serve'], { DEPLOY_STATE_DATABASE_URL: 'mysql://x@y/z' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('DEPLOY_STATE_DATABASE_URL');
  });

  it('fails with exit 3, the address and no password, when the database is unreachable', async () => {
    const r = await runCli(['state', 'serve', '--listen', '127.0.0.1:0'], { DEPLOY_STATE_DATABASE_URL: 'postgres://deploy:env-secret-93@127.0.0.1:1/db' });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('postgres://deploy@127.0.0.1:1/db');
    expect(r.stderr).not.toContain('env-secret-93');
  });

  it('names DEPLOY_STATE_DATABASE_PASSWORD_FILE when it cannot be read (exit 3)', async () => {
    const r = await runCli(['state', 'serve', '--listen', '127.0.0.1:0', '--data', 'postgres://deploy@127.0.0.1:1/db'], {
      DEPLOY_STATE_DATABASE_PASSWORD_FILE: '/nonexistent/db-password',
    });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('DEPLOY_STATE_DATABASE_PASSWORD_FILE (/nonexistent/db-password)');
  });

  it('list, versions, show and unlock refuse a database URL in --data, pointing at a server, without echoing it', async () => {
    for (const verb of [['list'], ['versions', 'k'], ['show', 'k'], ['unlock', 'some-id']]) {
      const r = await runCli(['state', ...verb, '--data', 'postgres://deploy:argv-secret-94@127.0.0.1:5432/db'], {});
      expect(r.code, verb.join(' ')).toBe(2);
      expect(r.stderr).toContain('TF_HTTP_ADDRESS');
      expect(r.stderr).not.toContain('argv-secret-94');
    }
  });

  it('--help says where the database credentials come from', async () => {
    const r = await runCli(['state', 'serve', '--help'], {});
    expect(r.stdout).toContain('DEPLOY_STATE_DATABASE_URL');
    expect(r.stdout).toContain('DEPLOY_STATE_DATABASE_PASSWORD_FILE');
    expect(r.stdout).toMatch(/never come from the command line/);
  });

  it('serves from a real database with the password from a file, and never logs it', async () => {
    const db = await (await sharedPostgres()).createDatabase();
    const { dir, cleanup } = await tempDir();
    const pwFile = join(dir, 'db-password');
    await writeFile(pwFile, `${db.password}\n`, { mode: 0o600 });
    const cli = startCli(['state', 'serve', '--listen', '127.0.0.1:0', '--data', db.urlWithoutPassword], { DEPLOY_STATE_DATABASE_PASSWORD_FILE: pwFile });
    try {
      const base = await waitFor(() => /^(http:\/\/\S+)\n/.exec(cli.text.stdout)?.[1]);
      expect((await call(`${base}/k`, 'POST', secretState(1))).status).toBe(200);
      expect(JSON.parse((await call(`${base}/k`, 'GET')).text).serial).toBe(1);
    } finally {
      cli.stop();
    }
    expect(await cli.done).toBe(0);
    expect(cli.text.logs).toContain(`"data":"${db.urlWithoutPassword}"`);
    expect(cli.text.stdout + cli.text.stderr + cli.text.logs).not.toContain(db.password);
    await cleanup();
  });
});

describe('deploy state verbs with a base TF_HTTP_ADDRESS that has a path', () => {
  it('find the state <key> at <base>/<key>, as plan/apply/destroy do', async () => {
    const backend = await startTestBackend();
    try {
      const base = `${backend.url}/team`;
      expect((await call(`${base}/g1-all`, 'POST', secretState(1))).status).toBe(200);
      expect((await call(`${backend.url}/other`, 'POST', secretState(1))).status).toBe(200);
      const env = { TF_HTTP_ADDRESS: `${base}/` };
      const list = await runCli(['state', 'list', '--json'], env);
      expect(JSON.parse(list.stdout).map((s: { key: string }) => s.key)).toEqual(['g1-all']);
      const versions = await runCli(['state', 'versions', 'g1-all', '--json'], env);
      expect(JSON.parse(versions.stdout)).toHaveLength(1);
      const show = await runCli(['state', 'show', 'g1-all'], env);
      expect(JSON.parse(show.stdout).serial).toBe(1);
      const holder = lockInfo();
      await call(`${base}/g1-all`, 'LOCK', holder);
      const unlock = await runCli(['state', 'unlock', holder.ID], env);
      expect(unlock.code, unlock.stderr).toBe(0);
      expect(unlock.stdout).toContain('on "g1-all"');
      await call(`${base}/g1-all`, 'LOCK', holder);
      const byKey = await runCli(['state', 'unlock', holder.ID, '--key', 'g1-all'], env);
      expect(byKey.code, byKey.stderr).toBe(0);
      expect((await call(`${base}/g1-all`, 'LOCK', lockInfo())).status).toBe(200);
      // credentials never in the URL
      const inUrl = await runCli(['state', 'list'], { TF_HTTP_ADDRESS: backend.url.replace('http://', 'http://u:p@') });
      expect(inUrl.code).toBe(2);
    } finally {
      await backend.stop();
    }
  });
});

describe('deploy state verbs on a fresh machine', () => {
  it('list nothing and create nothing when there is no state data', async () => {
    const { dir, cleanup } = await tempDir();
    const env = { DEPLOY_STATE_DIR: dir };
    const list = await runCli(['state', 'list', '--json'], env);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual([]);
    const show = await runCli(['state', 'show', 'g1-all'], env);
    expect(show.code).toBe(2);
    expect(show.stderr).toContain('no state data');
    expect(await listTree(dir)).toEqual([]);
    await cleanup();
  });
});

describe('deploy state list|versions|show|unlock', () => {
  let backend: TestBackend;
  let url: string;
  beforeEach(async () => {
    backend = await startTestBackend();
    url = `${backend.url}/g1-all`;
    for (const s of [1, 2]) expect((await call(url, 'POST', secretState(s))).status).toBe(200);
  });
  afterEach(async () => {
    await backend.stop();
  });

  // the same verbs, reading the data directory and talking to the server
  const sources = {
    'the data directory': (b: TestBackend) => ({ args: ['--data', b.data], env: {} }),
    'TF_HTTP_ADDRESS': (b: TestBackend) => ({ args: [], env: { TF_HTTP_ADDRESS: b.url } }),
  };

  for (const [name, source] of Object.entries(sources)) {
    describe(`from ${name}`, () => {
      it('list shows keys with serial, versions and the lock holder', async () => {
        const holder = lockInfo({ Who: 'carol@ci' });
        await call(url, 'LOCK', holder);
        const { args, env } = source(backend);
        const r = await runCli(['state', 'list', '--json', ...args], env);
        expect(r.code).toBe(0);
        const list = JSON.parse(r.stdout);
        expect(list).toHaveLength(1);
        expect(list[0]).toMatchObject({ key: 'g1-all', versions: 2, latest: { serial: 2 }, lock: { ID: holder.ID, Who: 'carol@ci' } });
        const table = await runCli(['state', 'list', ...args], env);
        expect(table.stdout).toMatch(/g1-all\s+2\s+2\s+/);
        expect(table.stdout).toContain(holder.ID);
      });

      it('versions lists serial, time and size of every kept version', async () => {
        const { args, env } = source(backend);
        const r = await runCli(['state', 'versions', 'g1-all', '--json', ...args], env);
        expect(r.code).toBe(0);
        const versions = JSON.parse(r.stdout);
        expect(versions.map((v: { serial: number }) => v.serial)).toEqual([1, 2]);
        expect(versions[1].size).toBe(secretState(2).length);
        expect(Date.parse(versions[1].created)).toBeGreaterThan(Date.now() - 60_000);
      });

      it('list and versions show a deleted state as deleted, with its versions', async () => {
        expect((await call(url, 'DELETE')).status).toBe(200);
        const { args, env } = source(backend);
        const list = await runCli(['state', 'list', '--json', ...args], env);
        expect(JSON.parse(list.stdout)[0]).toMatchObject({ key: 'g1-all', deleted: true, versions: 3 });
        const table = await runCli(['state', 'list', ...args], env);
        expect(table.stdout).toMatch(/g1-all \(deleted\)\s+2\s+3\s+/);
        const versions = await runCli(['state', 'versions', 'g1-all', ...args], env);
        expect(versions.code).toBe(0);
        expect(versions.stdout.trim().split('\n').at(-1)).toMatch(/^2\s+\S+\s+deleted\s+/);
        const old = await runCli(['state', 'show', 'g1-all', '--serial', '2', ...args], env);
        expect(JSON.parse(old.stdout).serial).toBe(2);
      });

      it('show prints the state with secrets hidden, also of an older serial', async () => {
        const { args, env } = source(backend);
        for (const extra of [[], ['--serial', '1']]) {
          const r = await runCli(['state', 'show', 'g1-all', ...extra, ...args], env);
          expect(r.code).toBe(0);
          const doc = JSON.parse(r.stdout);
          expect(doc.serial).toBe(extra.length ? 1 : 2);
          expect(r.stdout).not.toContain('pw-secret-abc');
          expect(r.stdout).not.toContain('out-secret-xyz');
        }
      });

      it('unlock <ID> releases the lock; an unknown ID is an error that changes nothing', async () => {
        const holder = lockInfo({ Who: 'killed@ci' });
        const { args, env } = source(backend);
        const whileFree = await runCli(['state', 'unlock', 'no-such-id', ...args], env);
        expect(whileFree.code).toBe(2);
        expect(whileFree.stderr).toContain('no lock with ID no-such-id');
        await call(url, 'LOCK', holder);
        const wrong = await runCli(['state', 'unlock', 'no-such-id', ...args], env);
        expect(wrong.code).toBe(2);
        expect(wrong.stderr).toContain('no lock with ID no-such-id');
        expect((await call(url, 'LOCK', lockInfo())).status).toBe(423);
        const r = await runCli(['state', 'unlock', holder.ID, ...args], env);
        expect(r.code).toBe(0);
        expect(r.stdout).toContain(`released lock ${holder.ID}`);
        expect((await call(url, 'LOCK', lockInfo())).status).toBe(200);
      });

      it('unlock --held-by releases only the locks of that run; a named state held by another run is exit 2 naming it', async () => {
        const { args, env } = source(backend);
        const other = `${backend.url}/g1-web`;
        expect((await call(other, 'POST', secretState(1))).status).toBe(200);
        const mine = lockInfo({ Who: 'cd demo run 41.1' });
        const theirs = lockInfo({ Who: 'cd demo run 42.1' });
        await call(url, 'LOCK', mine);
        await call(other, 'LOCK', theirs);

        const refused = await runCli(['state', 'unlock', '--held-by', 'cd demo run 41.1', '--key', 'g1-web', ...args], env);
        expect(refused.code).toBe(2);
        expect(refused.stderr).toContain('locked by another run');
        expect(refused.stderr).toContain('held by cd demo run 42.1');
        expect((await call(other, 'LOCK', lockInfo())).status, 'the other run keeps its lock').toBe(423);

        const r = await runCli(['state', 'unlock', '--held-by', 'cd demo run 41.1', ...args], env);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toContain(`released lock ${mine.ID} on "g1-all"`);
        expect(r.stdout).not.toContain(theirs.ID);
        expect((await call(url, 'LOCK', lockInfo())).status).toBe(200);
        expect((await call(other, 'LOCK', lockInfo())).status).toBe(423);

        // nothing of that run left: exit 0, nothing released (the CD workflow's step after a clean job)
        const again = await runCli(['state', 'unlock', '--held-by', 'cd demo run 41.1', ...args], env);
        expect(again.code).toBe(0);
        expect(again.stdout).toContain('no lock held by cd demo run 41.1');
        const named = await runCli(['state', 'unlock', '--held-by', 'cd demo run 42.1', '--key', 'g1-web', ...args], env);
        expect(named.code).toBe(0);
        expect(named.stdout).toContain(`released lock ${theirs.ID} on "g1-web"`);
      });
    });
  }

  it('unlock --held-by --key reads the holder from a backend that cannot list (LOCK answers 423 with it)', async () => {
    // a plain OpenTofu http backend: the protocol only, no /_deploy/v1/ routes
    const plain = createServer((req, res) => {
      if (req.url?.startsWith('/_deploy/')) {
        res.writeHead(404).end();
        return;
      }
      const upstream = httpRequest(`${backend.url}${req.url}`, { method: req.method, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      req.pipe(upstream);
    });
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    const env = { TF_HTTP_ADDRESS: `http://127.0.0.1:${(plain.address() as AddressInfo).port}` };
    try {
      const free = await runCli(['state', 'unlock', '--held-by', 'run-a', '--key', 'g1-all'], env);
      expect(free.code, free.stderr).toBe(0);
      expect(free.stdout).toContain('no lock held by run-a');
      expect((await backend.store.lockOf('g1-all')), 'the probe released its own lock').toBeUndefined();

      const holder = lockInfo({ Who: 'run-b' });
      await call(url, 'LOCK', holder);
      const other = await runCli(['state', 'unlock', '--held-by', 'run-a', '--key', 'g1-all'], env);
      expect(other.code).toBe(2);
      expect(other.stderr).toContain('held by run-b');
      const r = await runCli(['state', 'unlock', '--held-by', 'run-b', '--key', 'g1-all'], env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(`released lock ${holder.ID}`);
      expect(await backend.store.lockOf('g1-all')).toBeUndefined();
      const unlisted = await runCli(['state', 'unlock', '--held-by', 'run-b'], env);
      expect(unlisted.code).toBe(3);
      expect(unlisted.stderr).toContain('does not list states');
    } finally {
      await new Promise((r) => plain.close(r));
    }
  });

  it('unlock without an ID or --held-by is a usage error', async () => {
    const r = await runCli(['state', 'unlock', '--data', backend.data], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--held-by');
  });
});
