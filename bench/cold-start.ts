// `npm run bench:cold`: P11 (issue 32), the README's first command on a new machine of this
// kind: `npm ci && npm run demo` in a fresh clone of this commit with every cache empty (npm's,
// Go's module and build caches, DEPLOY_CACHE_DIR) and a state directory of its own, timed to a
// deployed group; then that cluster is taken down and every directory removed. Goal: <= 18 min
// on an idle host. Writes bench/results/cold-start.json (read by `npm run bench`, which prints
// it with its date: a cold start cannot share the host with the bench's own groups).
// Needs: the local cluster down (its ports; `npm run cluster:down -- --keep-data` keeps its
// data), and the provider sources (DEPLOY_PROVIDER_SOURCES, default ../shared/upstream).
// Env: BENCH_COLD_KEEP=1 keeps the directories (for a look; remove them by hand).
import { execFileSync, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { log, root } from './lib/bench-env.ts';
import { readHostCpu } from './lib/proc-tree.ts';
import type { ColdStart } from './lib/report-md.ts';
import { resultsDir } from './lib/write-results.ts';

const GOAL_SECONDS = 18 * 60;

function clusterPortsBusy(): boolean {
  // the kubelet's port (test/cluster/cluster.sh require_ports_free) and the registry's (registry.sh)
  try {
    execFileSync('bash', ['-c', 'ss -Hltn "( sport = :10250 or sport = :5000 )" | grep -q .'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

async function main(): Promise<number> {
  if (clusterPortsBusy()) {
    console.error("bench:cold: a local cluster is listening (the kubelet's port 10250 or the registry's 5000). A cold start brings up a cluster of its own: take that one down first (npm run cluster:down -- --keep-data keeps its data), then run this again.");
    return 2;
  }
  const sources = resolve(process.env.DEPLOY_PROVIDER_SOURCES ?? join(root, '..', 'shared', 'upstream'));
  if (!existsSync(sources)) {
    console.error(`bench:cold: no provider sources at ${sources}: set DEPLOY_PROVIDER_SOURCES (docs/build-cache.md)`);
    return 2;
  }
  const commit = execFileSync('git', ['-C', root, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  const top = mkdtempSync(join(tmpdir(), 'cold-start-'));
  const dirs = { repo: join(top, 'repo'), cache: join(top, 'cache'), state: join(top, 'state'), gocache: join(top, 'go-build'), gomodcache: join(top, 'go-mod'), npm: join(top, 'npm') };
  for (const d of [dirs.cache, dirs.state, dirs.gocache, dirs.gomodcache, dirs.npm]) mkdirSync(d, { recursive: true });
  execFileSync('git', ['clone', '-q', '--no-local', root, dirs.repo]);
  execFileSync('git', ['-C', dirs.repo, 'checkout', '-q', commit]);
  // the operator's environment (its CA settings, Go's proxy), without what npm run added (its
  // npm_* variables, this clone's node_modules/.bin on PATH: the Node 24 of this clone) and
  // without any cache or state directory of this machine
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(npm_|DEPLOY_|GOCACHE$|GOMODCACHE$|GOPATH$|XDG_CACHE_HOME$|XDG_STATE_HOME$|INIT_CWD$|NODE$)/i.test(k)),
  );
  const path = (process.env.PATH ?? '').split(':').filter((p) => p !== '' && !p.includes('node_modules')).join(':');
  const env: NodeJS.ProcessEnv = {
    ...inherited,
    PATH: path,
    DEPLOY_CACHE_DIR: dirs.cache,
    DEPLOY_STATE_DIR: dirs.state,
    DEPLOY_PROVIDER_SOURCES: sources,
    GOCACHE: dirs.gocache,
    GOMODCACHE: dirs.gomodcache,
    npm_config_cache: dirs.npm,
  };
  const logFile = join(tmpdir(), `cold-start-${commit.slice(0, 7)}-${Date.now()}.log`);
  const out = createWriteStream(logFile);
  const loadBefore = loadavg();
  log(`cold start of ${commit.slice(0, 7)} in ${top} (load ${loadBefore.map((l) => l.toFixed(1)).join(' ')}); log: ${logFile}`);
  const t0 = performance.now();
  const steps: { at: number; line: string }[] = [];
  const child = spawn('bash', ['-c', 'npm ci && npm run demo'], { cwd: dirs.repo, env, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const stream of [child.stdout!, child.stderr!]) {
    createInterface({ input: stream }).on('line', (line) => {
      const at = (performance.now() - t0) / 1000;
      out.write(`${at.toFixed(1).padStart(7)} ${line}\n`);
      // the builds' own lines ("built X in N s") and the demo's last lines
      if (/\bbuilt\b.* in \d+|npm ci|cluster up in|deployed|added \d+ packages/i.test(line)) steps.push({ at, line: line.slice(0, 200) });
    });
  }
  // the host's cores in use, minute by minute: whether the builds leave a core idle
  const cpuMinutes: number[] = [];
  let last = readHostCpu();
  const cores = cpus().length;
  const sampler = setInterval(() => {
    const now = readHostCpu();
    const total = now.busy + now.idle - last.busy - last.idle;
    cpuMinutes.push(total > 0 ? ((now.busy - last.busy) / total) * cores : 0);
    last = now;
  }, 60_000);
  const exitCode: number = await new Promise((res) => child.on('exit', (code, signal) => res(code ?? (signal ? 128 : 1))));
  clearInterval(sampler);
  const seconds = (performance.now() - t0) / 1000;
  out.end();
  const loadAfter = loadavg();
  log(`cold start: exit ${exitCode} after ${(seconds / 60).toFixed(1)} min`);

  // the cold run's cluster down, every directory removed (Go's module cache is read-only)
  try {
    execFileSync('bash', [join(dirs.repo, 'test/cluster/cluster.sh'), 'down'], { env, stdio: ['ignore', 'ignore', 'inherit'], timeout: 600_000 });
  } catch (err) {
    log(`the cold run's cluster could not be taken down: ${String(err)}; its state directory is ${dirs.state}`);
  }
  const result: ColdStart = {
    date: new Date().toISOString(),
    commit,
    host: `${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB; load average (1, 5, 15 min) ${loadBefore.map((l) => l.toFixed(1)).join(', ')} at the start, ${loadAfter.map((l) => l.toFixed(1)).join(', ')} at the end`,
    command: 'npm ci && npm run demo',
    caches: 'empty: npm cache, GOCACHE, GOMODCACHE, DEPLOY_CACHE_DIR, DEPLOY_STATE_DIR (fresh directories); Debian packages as the host had them',
    exitCode,
    seconds,
    goalSeconds: GOAL_SECONDS,
    met: exitCode === 0 && seconds <= GOAL_SECONDS,
    steps,
    cpu: { busyCoresPerMinute: cpuMinutes, idleCoreSeconds: cpuMinutes.reduce((sum, b) => sum + (cores - b) * 60, 0) },
  };
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, 'cold-start.json'), `${JSON.stringify(result, null, 2)}\n`);
  if (process.env.BENCH_COLD_KEEP === '1') log(`kept: ${top}`);
  else {
    execFileSync('chmod', ['-R', 'u+w', dirs.gomodcache]);
    rmSync(top, { recursive: true, force: true });
  }
  console.log(`P11 cold start (${result.command}, empty caches): ${(seconds / 60).toFixed(1)} min, exit ${exitCode}; goal <= ${GOAL_SECONDS / 60} min: ${result.met ? 'met' : 'NOT met'}`);
  return result.met ? 0 : 1;
}

process.exitCode = await main();
