import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedBackend, type StateBackend } from '../../src/state/embedded.js';
import { SqliteStateStore } from '../../src/state/sqlite-store.js';
import type { StateStore } from '../../src/state/store.js';
import { runCli } from '../unit/helpers.js';
import { ensureBuilt, startServerProcess } from './state-helpers.js';

// The state backend with the real OpenTofu (built by the global setup) and the real null and
// random providers from the offline mirror.

const cacheDir = process.env.DEPLOY_CACHE_DIR || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'k8s-deployer');
const tofuBin = join(cacheDir, 'tofu', '1.12.6', 'tofu');
const tofuRc = join(cacheDir, 'tofu.rc');
const KEY = 'g1-all';

const MAIN_TF = `
terraform {
  backend "http" {}
  required_providers {
    null   = { source = "hashicorp/null", version = "3.2.4" }
    random = { source = "hashicorp/random", version = "3.7.2" }
  }
}
variable "sleep" {
  type    = number
  default = 0
}
variable "run" {
  type    = string
  default = "1"
}
resource "random_password" "pw" {
  length = 20
}
resource "null_resource" "step" {
  triggers = { run = var.run }
  provisioner "local-exec" {
    command = "sleep \${var.sleep}"
  }
}
output "pw" {
  value     = random_password.pw.result
  sensitive = true
}
`;

interface TofuRun {
  readonly child: ChildProcess;
  readonly done: Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }>;
}

function tofu(dir: string, args: string[], backendEnv: Record<string, string>, timeoutMs = 240_000): TofuRun {
  const child = spawn(tofuBin, args, {
    cwd: dir,
    // its own process group, so a kill reaches the provider plugins and provisioners too
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TF_CLI_CONFIG_FILE: tofuRc,
      TF_IN_AUTOMATION: '1',
      TF_INPUT: '0',
      ...backendEnv,
    },
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  child.stderr!.on('data', (d) => (out += String(d)));
  const timer = setTimeout(() => killGroup(child), timeoutMs);
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }>((resolve) =>
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, out });
    }),
  );
  return { child, done };
}

/** SIGKILL of tofu and everything it started (as a CI runner stopping the job does). */
function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // already gone
  }
}

async function tofuOk(dir: string, args: string[], env: Record<string, string>): Promise<string> {
  const r = await tofu(dir, args, env).done;
  if (r.code !== 0) throw new Error(`tofu ${args.join(' ')} exited ${r.code}:\n${r.out}`);
  return r.out;
}

const APPLY = ['apply', '-auto-approve', '-no-color', '-lock-timeout=0s'];

async function workDir(root: string, name: string, env: Record<string, string>): Promise<string> {
  const dir = join(root, name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'main.tf'), MAIN_TF);
  await tofuOk(dir, ['init', '-no-color', '-input=false'], env);
  return dir;
}

/** Polls the data directory until `key` is locked; returns the holder. */
async function waitForLock(dataDir: string, key: string, timeoutMs = 60_000) {
  const store = SqliteStateStore.open(dataDir);
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const lock = await store.lockOf(key);
      if (lock) return lock;
      if (Date.now() > deadline) throw new Error(`${key} was not locked within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await store.close();
  }
}

async function readStore<T>(dataDir: string, fn: (s: StateStore) => Promise<T>): Promise<T> {
  const store = SqliteStateStore.open(dataDir);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

let root: string;
beforeAll(async () => {
  if (!existsSync(tofuBin) || !existsSync(tofuRc)) throw new Error(`${tofuBin} or ${tofuRc} is missing: run npm run tools`);
  ensureBuilt();
  root = await mkdtemp(join(tmpdir(), 'deploy-state-tofu-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('the state backend with the real tofu', () => {
  it('two concurrent applies on one key: the second fails with the holder\'s ID, Who and Created', async () => {
    const dataDir = join(root, 'concurrent-data');
    // run A: the embedded backend of one deploy process; run B: another process serving the
    // same data directory (as two `deploy apply` runs on one machine would)
    const a = await startEmbeddedBackend({ dataDir, key: KEY });
    const creds = { DEPLOY_STATE_USERNAME: 'ops', DEPLOY_STATE_PASSWORD: 'b-side-password' };
    const b = await startServerProcess(dataDir, creds);
    const bEnv = {
      TF_HTTP_ADDRESS: `${b.url}/${KEY}`,
      TF_HTTP_LOCK_ADDRESS: `${b.url}/${KEY}`,
      TF_HTTP_UNLOCK_ADDRESS: `${b.url}/${KEY}`,
      TF_HTTP_LOCK_METHOD: 'LOCK',
      TF_HTTP_UNLOCK_METHOD: 'UNLOCK',
      TF_HTTP_USERNAME: 'ops',
      TF_HTTP_PASSWORD: 'b-side-password',
    };
    try {
      const dirA = await workDir(root, 'concurrent-a', a.env);
      const dirB = await workDir(root, 'concurrent-b', bEnv);
      const runA = tofu(dirA, [...APPLY, '-var', 'sleep=8'], a.env);
      const holder = await waitForLock(dataDir, KEY);
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
      expect(await readStore(dataDir, (s) => s.lockOf(KEY))).toBeUndefined();
      const again = await tofuOk(dirB, [...APPLY], bEnv);
      expect(again).toMatch(/Resources: 0 added, 0 changed, 0 destroyed|No changes/);
    } finally {
      await b.stop();
      await a.close();
    }
  });

  it('an apply killed with SIGKILL leaves a lock that `deploy state unlock <ID>` releases', async () => {
    const dataDir = join(root, 'killed-data');
    const backend = await startEmbeddedBackend({ dataDir, key: KEY });
    try {
      const dir = await workDir(root, 'killed', backend.env);
      const run = tofu(dir, [...APPLY, '-var', 'sleep=15'], backend.env);
      const holder = await waitForLock(dataDir, KEY);
      // let it get into the provisioner, then kill it: no chance to unlock
      await new Promise((r) => setTimeout(r, 1500));
      killGroup(run.child);
      expect((await run.done).signal).toBe('SIGKILL');
      expect((await readStore(dataDir, (s) => s.lockOf(KEY)))?.ID).toBe(holder.ID);

      const blocked = await tofu(dir, APPLY, backend.env).done;
      expect(blocked.code).not.toBe(0);
      expect(blocked.out).toContain(holder.ID);

      const unlock = await runCli(['state', 'unlock', holder.ID, '--data', dataDir], {});
      expect(unlock.code, unlock.stderr).toBe(0);
      expect(unlock.stdout).toContain(`released lock ${holder.ID} on "${KEY}"`);
      const out = await tofuOk(dir, APPLY, backend.env);
      expect(out).toContain('Apply complete!');
      expect(await readStore(dataDir, (s) => s.lockOf(KEY))).toBeUndefined();

      // tofu's own force-unlock (it sends {"ID": ...}) releases such a lock too
      const run2 = tofu(dir, [...APPLY, '-var', 'sleep=15', '-var', 'run=2'], backend.env);
      const holder2 = await waitForLock(dataDir, KEY);
      killGroup(run2.child);
      await run2.done;
      const wrongForce = await tofu(dir, ['force-unlock', '-force', '-no-color', 'not-the-holder'], backend.env).done;
      expect(wrongForce.code).not.toBe(0);
      expect((await readStore(dataDir, (s) => s.lockOf(KEY)))?.ID).toBe(holder2.ID);
      await tofuOk(dir, ['force-unlock', '-force', '-no-color', holder2.ID], backend.env);
      expect(await readStore(dataDir, (s) => s.lockOf(KEY))).toBeUndefined();
    } finally {
      await backend.close();
    }
  });

  it('the state survives a server restart: the next plan has no changes', async () => {
    const dataDir = join(root, 'restart-data');
    let backend: StateBackend = await startEmbeddedBackend({ dataDir, key: KEY });
    let dir: string;
    try {
      dir = await workDir(root, 'restart', backend.env);
      await tofuOk(dir, APPLY, backend.env);
    } finally {
      await backend.close();
    }
    const before = (await readStore(dataDir, (s) => s.latest(KEY)))!;
    backend = await startEmbeddedBackend({ dataDir, key: KEY }); // a new port, a new password
    try {
      const plan = await tofu(dir, ['plan', '-no-color', '-detailed-exitcode', '-lock-timeout=0s'], backend.env).done;
      expect(plan.code, plan.out).toBe(0);
      expect(plan.out).toContain('No changes');
      // the password made in the first apply is the one still in state
      const after = (await readStore(dataDir, (s) => s.read(KEY)))!;
      expect(after.sha256).toBe(before.sha256);
      // `deploy state show` of this real state never prints the password
      const password = (JSON.parse(after.body.toString()) as { outputs: { pw: { value: string } } }).outputs.pw.value;
      expect(password).toHaveLength(20);
      const show = await runCli(['state', 'show', KEY, '--data', dataDir], {});
      expect(show.code, show.stderr).toBe(0);
      expect(JSON.parse(show.stdout).resources.map((r: { type: string }) => r.type)).toContain('random_password');
      expect(show.stdout).not.toContain(password);
    } finally {
      await backend.close();
    }
  });

  it('a POST retried after its response was dropped is idempotent', async () => {
    const dataDir = join(root, 'retry-data');
    const backend = await startEmbeddedBackend({ dataDir, key: KEY });
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
      const dir = await workDir(root, 'retry', env);
      dropNext = true;
      const out = await tofuOk(dir, APPLY, env);
      expect(out).toContain('Apply complete!');
      const dropped = posts.findIndex((p) => p.dropped);
      expect(dropped).toBeGreaterThanOrEqual(0);
      // tofu sent the same bytes again, and the backend answered success without a new version
      const resend = posts[dropped + 1]!;
      expect(resend.sha).toBe(posts[dropped]!.sha);
      expect(resend.status).toBe(200);
      const versions = await readStore(dataDir, (s) => s.versions(KEY));
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
