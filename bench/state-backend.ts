// Benchmark of the state backend (`deploy state serve`), not a test:
//   npm run bench:state            (builds first; or: node bench/state-backend.ts after a build)
// 1. p50/p99 latency of N lock/write/unlock cycles with a ~1 MB state (default N = 1000);
// 2. a storm of 100 concurrent LOCKs on one key, of which exactly one must win.
// The server runs as its own process over a fresh data directory (durable writes: SQLite WAL,
// synchronous=FULL), the client speaks the OpenTofu http protocol with keep-alive.
// Env: BENCH_CYCLES (default 1000), BENCH_STATE_BYTES (default 1048576).
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cycles = Number(process.env.BENCH_CYCLES ?? 1000);
const stateBytes = Number(process.env.BENCH_STATE_BYTES ?? 1024 * 1024);
const stormSize = 100;

function stateDoc(serial: number, lineage: string): string {
  // resources shaped like tofu's, padded to the target size
  const instance = (i: number) => ({ schema_version: 0, attributes: { id: `id-${i}`, triggers: { image: `reg/ns/n${i}:tag` } }, sensitive_attributes: [] });
  const resources = [{ mode: 'managed', type: 'null_resource', name: 'n', provider: 'provider["registry.opentofu.org/hashicorp/null"]', instances: [instance(0)] }];
  const base = JSON.stringify({ version: 4, terraform_version: '1.12.6', serial, lineage, outputs: {}, resources, check_results: null });
  const pad = Math.max(0, stateBytes - base.length - 20);
  return JSON.stringify({ version: 4, terraform_version: '1.12.6', serial, lineage, outputs: {}, resources, check_results: null, pad: 'x'.repeat(pad) });
}

/** CPU time (user + system, ms) a process used so far, from /proc (Linux); undefined elsewhere. */
function cpuMs(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in USER_HZ (100)
  } catch {
    return undefined;
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function summary(name: string, samples: number[]): string {
  const s = [...samples].sort((a, b) => a - b);
  const f = (n: number) => n.toFixed(2).padStart(7);
  return `${name.padEnd(10)} p50 ${f(percentile(s, 50))} ms  p99 ${f(percentile(s, 99))} ms  max ${f(s[s.length - 1]!)} ms`;
}

// node:http with keep-alive rather than fetch: a lean client, like tofu's Go net/http, so the
// figures are the backend's and not the client library's
const agent = new Agent({ keepAlive: true, maxSockets: 128 });

function request(url: string, method: string, body?: string): Promise<number> {
  const data = body === undefined ? undefined : Buffer.from(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, {
      method,
      agent,
      timeout: 30_000,
      headers: data ? { 'Content-Type': 'application/json', 'Content-Length': data.length } : {},
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${url}: no answer within 30 s`)));
    req.on('error', reject);
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.end(data);
  });
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'deploy-state-bench-'));
  const server = spawn(process.execPath, [join(root, 'bin', 'deploy.js'), 'state', 'serve', '--listen', '127.0.0.1:0', '--data', dataDir], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, DEPLOY_LOG_LEVEL: 'warn' },
  });
  try {
    const base = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the server did not print its URL within 10 s')), 10_000);
      let out = '';
      server.stdout!.on('data', (d) => {
        out += String(d);
        const m = /^(http:\/\/\S+)\n/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      server.once('exit', (code) => reject(new Error(`the server exited (${code})`)));
    });
    const url = `${base}/bench-cycles`;
    const lineage = randomUUID();
    // the figures depend on the machine's load: print it with them
    console.log(`host: ${cpus().length} CPUs, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    console.log(`state backend benchmark: ${cycles} cycles, state ${(stateDoc(1, lineage).length / 1024 / 1024).toFixed(2)} MB, server ${base}, data ${dataDir}`);

    const lockMs: number[] = [];
    const writeMs: number[] = [];
    const unlockMs: number[] = [];
    const cycleMs: number[] = [];
    // warm-up: connection, SQLite pages
    for (let i = 0; i < 5; i += 1) await request(`${base}/bench-warmup`, 'GET');
    const cpuBefore = cpuMs(server.pid!);
    for (let serial = 1; serial <= cycles; serial += 1) {
      const body = stateDoc(serial, lineage); // built outside the timed part
      const info = JSON.stringify({ ID: randomUUID(), Operation: 'OperationTypeApply', Who: 'bench@host', Version: '1.12.6', Created: new Date().toISOString() });
      const t0 = performance.now();
      const l = await request(url, 'LOCK', info);
      const t1 = performance.now();
      const w = await request(`${url}?ID=${JSON.parse(info).ID}`, 'POST', body);
      const t2 = performance.now();
      const u = await request(url, 'UNLOCK', info);
      const t3 = performance.now();
      if (l !== 200 || w !== 200 || u !== 200) throw new Error(`cycle ${serial}: LOCK ${l}, POST ${w}, UNLOCK ${u}`);
      lockMs.push(t1 - t0);
      writeMs.push(t2 - t1);
      unlockMs.push(t3 - t2);
      cycleMs.push(t3 - t0);
    }
    const cpuAfter = cpuMs(server.pid!);
    console.log(summary('cycle', cycleMs));
    console.log(summary('  LOCK', lockMs));
    console.log(summary('  POST 1MB', writeMs));
    console.log(summary('  UNLOCK', unlockMs));
    if (cpuBefore !== undefined && cpuAfter !== undefined) {
      // what a cycle costs the server in CPU, whatever else the host is running
      console.log(`server CPU per cycle: ${((cpuAfter - cpuBefore) / cycles).toFixed(2)} ms`);
    }

    const stormUrl = `${base}/bench-storm`;
    const ids = Array.from({ length: stormSize }, () => randomUUID());
    const t0 = performance.now();
    const statuses = await Promise.all(ids.map((ID) => request(stormUrl, 'LOCK', JSON.stringify({ ID, Who: `storm-${ID.slice(0, 8)}` }))));
    const stormMs = performance.now() - t0;
    const won = statuses.filter((s) => s === 200).length;
    const locked = statuses.filter((s) => s === 423).length;
    console.log(`storm: ${stormSize} concurrent LOCKs in ${stormMs.toFixed(1)} ms: ${won} won (200), ${locked} refused (423), ${stormSize - won - locked} other`);
    const p99 = percentile([...cycleMs].sort((a, b) => a - b), 99);
    const ok = won === 1 && locked === stormSize - 1;
    console.log(`host load average after: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    console.log(`${ok ? 'OK' : 'FAIL'}: exactly one LOCK won: ${won === 1}; cycle p99 ${p99.toFixed(2)} ms (goal < 20 ms: ${p99 < 20 ? 'met' : 'NOT met'})`);
    if (!ok) process.exitCode = 1;
  } finally {
    agent.destroy();
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
