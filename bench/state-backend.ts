// Benchmark of the state backend (`deploy state serve`), not a test:
//   npm run bench:state            (builds first; or: node bench/state-backend.ts after a build)
// 1. p50/p99 latency of GET, LOCK, POST and UNLOCK (and of LOCK+POST+UNLOCK) in N cycles with a ~1 MB state (default
//    N = 1000), on each store: SQLite (a fresh data directory: WAL, synchronous=FULL) and
//    PostgreSQL (a real server of Debian's package, fsync on, started for the run in a
//    temporary directory, as the tests do). The stores take turns cycle by cycle, so a change
//    of the machine's load during the run weighs on both alike;
// 2. a storm of 100 concurrent LOCKs on one key per store, of which exactly one must win.
// Each server is its own process; the client speaks the OpenTofu http protocol with keep-alive.
// Env: BENCH_CYCLES (default 1000), BENCH_STATE_BYTES (default 1048576),
//      BENCH_STORES (default "sqlite,postgres"). Writes bench/results/state-backend.json.
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type PostgresServer, startPostgres } from '../test/support/postgres-server.ts';
import { startServerProcess } from '../test/support/state-server.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cycles = Number(process.env.BENCH_CYCLES ?? 1000);
const stateBytes = Number(process.env.BENCH_STATE_BYTES ?? 1024 * 1024);
const stormSize = 100;
const stores = (process.env.BENCH_STORES ?? 'sqlite,postgres').split(',').map((x) => x.trim()) as Kind[];
type Kind = 'sqlite' | 'postgres';
const OPS = ['GET', 'LOCK', 'POST', 'UNLOCK'] as const;
type Op = (typeof OPS)[number];

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

interface Figures {
  p50: number;
  p99: number;
  max: number;
}

function figuresOf(samples: number[]): Figures {
  const s = [...samples].sort((a, b) => a - b);
  const r = (n: number) => Math.round(n * 100) / 100;
  return { p50: r(percentile(s, 50)), p99: r(percentile(s, 99)), max: r(s[s.length - 1]!) };
}

function line(name: string, f: Figures): string {
  const n = (x: number) => x.toFixed(2).padStart(7);
  return `${name.padEnd(18)} p50 ${n(f.p50)} ms  p99 ${n(f.p99)} ms  max ${n(f.max)} ms`;
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

interface Server {
  readonly kind: Kind;
  readonly base: string;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/** `deploy state serve` over a fresh data directory or a fresh database. */
async function startServer(kind: Kind, postgres: PostgresServer | undefined, scratch: string): Promise<Server> {
  let data: string;
  const env: NodeJS.ProcessEnv = { DEPLOY_LOG_LEVEL: 'warn' };
  if (kind === 'sqlite') {
    data = join(scratch, 'sqlite-data');
  } else {
    const db = await postgres!.createDatabase('bench_state');
    data = db.urlWithoutPassword;
    const pwFile = join(scratch, 'db-password');
    writeFileSync(pwFile, `${db.password}\n`, { mode: 0o600 });
    env.DEPLOY_STATE_DATABASE_PASSWORD_FILE = pwFile;
  }
  // the same start as the tests' (test/support/state-server.ts): wait for the URL it prints
  const server = await startServerProcess(data, env);
  return {
    kind,
    base: server.url,
    child: server.child,
    stop: async () => {
      await server.stop();
    },
  };
}

interface StoreRun {
  readonly server: Server;
  readonly lineage: string;
  readonly samples: Record<Op, number[]>;
  readonly cycle: number[];
  cpuBefore?: number | undefined;
}

/** One GET/LOCK/POST/UNLOCK cycle writing `serial`; the body is built outside the timed part. */
async function cycle(run: StoreRun, serial: number): Promise<void> {
  const url = `${run.server.base}/bench-cycles`;
  const body = stateDoc(serial, run.lineage);
  const info = JSON.stringify({ ID: randomUUID(), Operation: 'OperationTypeApply', Who: 'bench@host', Version: '1.12.6', Created: new Date().toISOString() });
  const id = JSON.parse(info).ID as string;
  const t0 = performance.now();
  const g = await request(url, 'GET');
  const t1 = performance.now();
  const l = await request(url, 'LOCK', info);
  const t2 = performance.now();
  const w = await request(`${url}?ID=${id}`, 'POST', body);
  const t3 = performance.now();
  const u = await request(url, 'UNLOCK', info);
  const t4 = performance.now();
  if ((g !== 200 && !(serial === 1 && g === 404)) || l !== 200 || w !== 200 || u !== 200) {
    throw new Error(`${run.server.kind} cycle ${serial}: GET ${g}, LOCK ${l}, POST ${w}, UNLOCK ${u}`);
  }
  run.samples.GET.push(t1 - t0);
  run.samples.LOCK.push(t2 - t1);
  run.samples.POST.push(t3 - t2);
  run.samples.UNLOCK.push(t4 - t3);
  run.cycle.push(t4 - t1); // LOCK+POST+UNLOCK: a tofu run's write, as the earlier figures
}

async function storm(server: Server): Promise<{ ms: number; won: number; refused: number }> {
  const url = `${server.base}/bench-storm`;
  const ids = Array.from({ length: stormSize }, () => randomUUID());
  const t0 = performance.now();
  const statuses = await Promise.all(ids.map((ID) => request(url, 'LOCK', JSON.stringify({ ID, Who: `storm-${ID.slice(0, 8)}` }))));
  return { ms: Math.round((performance.now() - t0) * 10) / 10, won: statuses.filter((s) => s === 200).length, refused: statuses.filter((s) => s === 423).length };
}

async function main(): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'deploy-state-bench-'));
  let postgres: PostgresServer | undefined;
  const servers: Server[] = [];
  try {
    if (stores.includes('postgres')) postgres = await startPostgres();
    for (const kind of stores) servers.push(await startServer(kind, postgres, scratch));
    const loadBefore = loadavg();
    // the figures depend on the machine's load: print it with them
    console.log(`host: ${cpus().length} CPUs, load average ${loadBefore.map((l) => l.toFixed(1)).join(' ')}`);
    console.log(`state backend benchmark: ${cycles} cycles per store, state ${(stateDoc(1, 'x').length / 1024 / 1024).toFixed(2)} MB, stores ${stores.join(', ')} (taking turns)`);
    const runs: StoreRun[] = servers.map((server) => ({ server, lineage: randomUUID(), samples: { GET: [], LOCK: [], POST: [], UNLOCK: [] }, cycle: [] }));
    // warm-up: connections, pages, the database's caches
    for (const run of runs) for (let i = 0; i < 5; i += 1) await request(`${run.server.base}/bench-warmup`, 'GET');
    for (const run of runs) run.cpuBefore = cpuMs(run.server.child.pid!);
    for (let serial = 1; serial <= cycles; serial += 1) {
      for (const run of runs) await cycle(run, serial);
    }
    const results: Record<string, unknown> = {};
    let ok = true;
    for (const run of runs) {
      const cpuAfter = cpuMs(run.server.child.pid!);
      const ops = Object.fromEntries(OPS.map((op) => [op, figuresOf(run.samples[op])])) as Record<Op, Figures>;
      const cyc = figuresOf(run.cycle);
      const cpuPerCycle = run.cpuBefore !== undefined && cpuAfter !== undefined ? Math.round(((cpuAfter - run.cpuBefore) / cycles) * 100) / 100 : undefined;
      const s = await storm(run.server);
      ok &&= s.won === 1 && s.refused === stormSize - 1;
      console.log(`\n${run.server.kind}:`);
      console.log(line('  LOCK+POST+UNLOCK', cyc));
      for (const op of OPS) console.log(line(`  ${op}${op === 'GET' || op === 'POST' ? ' 1MB' : ''}`, ops[op]));
      // what a cycle costs the deploy server process in CPU (not the database's own processes)
      if (cpuPerCycle !== undefined) console.log(`  server process CPU per cycle: ${cpuPerCycle.toFixed(2)} ms`);
      console.log(`  LOCK+POST+UNLOCK p99 ${cyc.p99.toFixed(2)} ms (goal < 20 ms: ${cyc.p99 < 20 ? 'met' : 'NOT met'})`);
      console.log(`  storm: ${stormSize} concurrent LOCKs in ${s.ms} ms: ${s.won} won (200), ${s.refused} refused (423), ${stormSize - s.won - s.refused} other`);
      results[run.server.kind] = { ...ops, cycle: cyc, serverCpuPerCycleMs: cpuPerCycle, storm: s };
    }
    const loadAfter = loadavg();
    console.log(`\nhost load average after: ${loadAfter.map((l) => l.toFixed(1)).join(' ')}`);
    console.log(`${ok ? 'OK' : 'FAIL'}: exactly one LOCK of each storm won`);
    const out = {
      date: new Date().toISOString(),
      cycles,
      stateBytes: stateDoc(1, 'x').length,
      cpus: cpus().length,
      loadBefore: loadBefore.map((l) => Math.round(l * 10) / 10),
      loadAfter: loadAfter.map((l) => Math.round(l * 10) / 10),
      note: 'ms per request, client side, keep-alive; the stores took turns cycle by cycle; PostgreSQL 15 (Debian) on loopback TCP with fsync on, SQLite WAL synchronous=FULL',
      ...results,
    };
    mkdirSync(join(root, 'bench', 'results'), { recursive: true });
    writeFileSync(join(root, 'bench', 'results', 'state-backend.json'), `${JSON.stringify(out, null, 2)}\n`);
    if (!ok) process.exitCode = 1;
  } finally {
    agent.destroy();
    for (const server of servers) await server.stop();
    await postgres?.remove();
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
