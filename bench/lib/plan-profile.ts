/**
 * Where a no-op `tofu plan` spends its time (issue 22's profile), from three looks at it:
 *
 * - tofu's own JSON timings (`-json`): each resource's refresh_start -> refresh_complete, per
 *   resource type (count, sum, median, max), and the time before the first refresh (start,
 *   providers, schemas, state) and after the last one (the diff and the plan's end);
 * - CPU per program: the process tree under tofu sampled from /proc every 100 ms (utime and
 *   stime of each process at its last sample: a process shorter than a sample is missed, so
 *   the short-lived ones are counted by the third look);
 * - processes started: `strace -f -e trace=execve` in a second plan, when strace is there.
 */
import { execa } from 'execa';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { spread, type Spread } from './stats.ts';
import { CLK_TCK, processesUnder, type ProcSample } from './proc-tree.ts';

export interface PlanProfile {
  wallMs: number;
  /** start -> first refresh_start, last refresh_complete -> exit */
  beforeRefreshMs: number;
  afterRefreshMs: number;
  refresh: Record<string, { count: number; sumMs: number; ms: Spread }>;
  /** CPU seconds per program (sampled), and how many processes of it were seen */
  cpu: Record<string, { seconds: number; processes: number }>;
  /** execve calls per program (strace), or undefined without strace */
  execs?: Record<string, number>;
}

/** Samples the process tree under `rootPid` until stopped: the last sample of each process. */
function sampleTree(rootPid: number): { stop: () => Map<number, ProcSample> } {
  const last = new Map<number, ProcSample>();
  const tick = () => {
    for (const [pid, sample] of processesUnder(rootPid)) last.set(pid, sample);
  };
  const timer = setInterval(tick, 100);
  return {
    stop: () => {
      clearInterval(timer);
      return last;
    },
  };
}

const program = (comm: string) => (comm.startsWith('terraform-provi') ? 'providers' : comm);

export async function profilePlan(tofu: string, dir: string, env: NodeJS.ProcessEnv): Promise<PlanProfile> {
  const args = ['plan', '-input=false', '-no-color', '-json', '-lock-timeout=60s', '-detailed-exitcode', '-refresh=true'];
  const t0 = performance.now();
  const child = execa(tofu, args, { cwd: dir, env, extendEnv: false, reject: false, timeout: 600_000 });
  const sampler = sampleTree(child.pid!);
  const r = await child;
  const wallMs = performance.now() - t0;
  const samples = sampler.stop();
  if (r.exitCode !== 0) throw new Error(`tofu plan -json exited ${r.exitCode} (2 = changes): ${r.stderr.split('\n').slice(-10).join('\n')}`);

  const starts = new Map<string, { at: number; type: string }>();
  const byType = new Map<string, number[]>();
  let first = Number.POSITIVE_INFINITY;
  let lastDone = 0;
  let begin = Number.POSITIVE_INFINITY;
  let end = 0;
  for (const line of r.stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    const ev = JSON.parse(line);
    const at = Date.parse(ev['@timestamp']);
    begin = Math.min(begin, at);
    end = Math.max(end, at);
    const res = ev.hook?.resource;
    // a managed resource's refresh is refresh_*; a data source's read is apply_* with action "read"
    const read = ev.hook?.action === 'read';
    if ((ev.type === 'refresh_start' || (ev.type === 'apply_start' && read)) && res) {
      starts.set(res.addr, { at, type: read ? `data ${res.resource_type}` : res.resource_type });
      first = Math.min(first, at);
    } else if ((ev.type === 'refresh_complete' || (ev.type === 'apply_complete' && read)) && res) {
      const s = starts.get(res.addr);
      if (!s) continue;
      const list = byType.get(s.type) ?? [];
      list.push(at - s.at);
      byType.set(s.type, list);
      lastDone = Math.max(lastDone, at);
    }
  }
  const refresh: PlanProfile['refresh'] = {};
  for (const [type, list] of byType) refresh[type] = { count: list.length, sumMs: list.reduce((a, b) => a + b, 0), ms: spread(list) };
  const cpu: PlanProfile['cpu'] = {};
  for (const s of samples.values()) {
    const p = program(s.comm);
    cpu[p] ??= { seconds: 0, processes: 0 };
    cpu[p].seconds += s.ticks / CLK_TCK;
    cpu[p].processes++;
  }
  // -json timestamps are whole seconds on some builds: the before/after split is then coarse
  const profile: PlanProfile = { wallMs, beforeRefreshMs: first - begin, afterRefreshMs: end - lastDone, refresh, cpu };
  profile.execs = await countExecs(tofu, args, dir, env);
  return profile;
}

async function countExecs(tofu: string, args: string[], dir: string, env: NodeJS.ProcessEnv): Promise<Record<string, number> | undefined> {
  const strace = ['/usr/bin/strace', '/bin/strace'].find((p) => existsSync(p));
  if (!strace) return undefined;
  // -ff: one file per process, so that concurrent execve calls are never split into
  // "unfinished" and "resumed" lines; a process's successful execve is its last (a shell may
  // try several PATH entries first, which fail)
  const traces = mkdtempSync(join(dir, 'execve-'));
  const r = await execa(strace, ['-ff', '-qq', '-e', 'trace=execve', '-e', 'signal=none', '-o', join(traces, 't'), tofu, ...args], { cwd: dir, env, extendEnv: false, reject: false, timeout: 900_000 });
  if (r.exitCode !== 0 && r.exitCode !== 2) throw new Error(`strace of tofu plan exited ${r.exitCode}: ${r.stderr.split('\n').slice(-5).join('\n')}`);
  const counts: Record<string, number> = {};
  for (const f of readdirSync(traces)) {
    for (const line of readFileSync(join(traces, f), 'utf8').split('\n')) {
      const m = /^execve\("([^"]+)".*= 0$/.exec(line);
      if (!m) continue;
      const name = program(basename(m[1]!));
      counts[name] = (counts[name] ?? 0) + 1;
    }
  }
  rmSync(traces, { recursive: true, force: true });
  return counts;
}
