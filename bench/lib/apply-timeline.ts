/**
 * Where one `deploy` run spends its time (issue 32's profile): the run as a timeline of
 *
 * - every process under it (sampled from /proc every 50 ms): when it was first and last seen,
 *   its program and first arguments, and its CPU seconds at its last sample (a process shorter
 *   than a sample can be missed; the tofu, provider and rollout processes here live seconds);
 * - every line deploy wrote to stderr (its progress lines), with the time it arrived.
 *
 * renderTimeline writes both as text; phases sums the processes per program.
 */
import { join } from 'node:path';
import { execa } from 'execa';
import { root } from './bench-env.ts';
import { CLK_TCK, processesUnder } from './proc-tree.ts';


export interface ProcessSpan {
  pid: number;
  ppid: number;
  /** the program and its first arguments, e.g. "tofu apply", "terraform-provider-kubernetes" */
  what: string;
  startMs: number;
  endMs: number;
  cpuSeconds: number;
}

export interface Timeline {
  ms: number;
  exitCode: number;
  stdout: string;
  lines: { atMs: number; text: string }[];
  processes: ProcessSpan[];
}

/** "tofu apply", "deploy rollout", "skopeo copy", "terraform-provider-kubernetes_v2.38.0" */
function describe(comm: string, args: string[]): string {
  const base = (p: string) => p.split('/').at(-1) ?? p;
  const words = args.map(base);
  if (words[0] === 'node' || /^node/.test(words[0] ?? '')) {
    const script = words.find((w, i) => i > 0 && !w.startsWith('-'));
    const verb = words[words.indexOf(script ?? '') + 1];
    return `${script === 'deploy.js' || script === 'deploy' ? 'deploy' : script ?? 'node'}${verb && !verb.startsWith('-') ? ` ${verb}` : ''}`;
  }
  if (words[0] === 'tofu') return `tofu ${words.find((w, i) => i > 0 && !w.startsWith('-')) ?? ''}`.trim();
  if (/^terraform-provider-/.test(words[0] ?? comm)) return (words[0] ?? comm).replace(/_v.*$/, '');
  if (words[0] === 'skopeo') return `skopeo ${words[1] ?? ''}`.trim();
  if (words[0] === 'sh' || words[0] === 'bash') return `${words[0]} (${(args.slice(1).join(' ').match(/[a-z-]+ (rollout|push|copy)/) ?? ['script'])[0]})`;
  return words[0] ?? comm;
}

/** Runs bin/deploy with these arguments and records its timeline. */
export async function timeDeploy(args: string[], env: NodeJS.ProcessEnv): Promise<Timeline> {
  const t0 = performance.now();
  const child = execa(join(root, 'bin', 'deploy'), args, { env, extendEnv: false, reject: false, timeout: 1_800_000, all: false });
  const rootPid = child.pid!;
  const lines: Timeline['lines'] = [];
  let partial = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    const at = performance.now() - t0;
    const parts = (partial + chunk.toString('utf8')).split('\n');
    partial = parts.pop() ?? '';
    for (const text of parts) lines.push({ atMs: at, text });
  });
  const spans = new Map<number, ProcessSpan>();
  const tick = () => {
    const now = performance.now() - t0;
    // a process whose parent is gone still counts, by the parent seen before
    for (const [pid, p] of processesUnder(rootPid, { withArgs: true, parentOf: (pid) => spans.get(pid)?.ppid })) {
      const args = p.args ?? [];
      const span = spans.get(pid);
      if (span) {
        span.endMs = now;
        span.cpuSeconds = p.ticks / CLK_TCK;
        // a process that exec'd (sh -> skopeo) is named by its latest program
        if (args.length > 0) span.what = describe(p.comm, args);
      } else {
        spans.set(pid, { pid, ppid: p.ppid, what: describe(p.comm, args), startMs: now, endMs: now, cpuSeconds: p.ticks / CLK_TCK });
      }
    }
  };
  const timer = setInterval(tick, 50);
  tick();
  const r = await child;
  clearInterval(timer);
  const ms = performance.now() - t0;
  if (partial !== '') lines.push({ atMs: ms, text: partial });
  return { ms, exitCode: r.exitCode ?? -1, stdout: r.stdout as string, lines, processes: [...spans.values()].sort((a, b) => a.startMs - b.startMs) };
}

/** The timeline as text: the processes (those of at least 100 ms, or any tofu/rollout/skopeo), then the progress lines. */
export function renderTimeline(t: Timeline): string {
  const s = (ms: number) => (ms / 1000).toFixed(2).padStart(6);
  const out = [`wall ${s(t.ms)} s, exit ${t.exitCode}`, '  processes (first seen - last seen, CPU s):'];
  for (const p of t.processes) {
    if (p.endMs - p.startMs < 100 && !/tofu|rollout|skopeo|provider/.test(p.what)) continue;
    out.push(`  ${s(p.startMs)} - ${s(p.endMs)}  ${p.what.padEnd(40)} cpu ${p.cpuSeconds.toFixed(2)}`);
  }
  out.push('  deploy progress:');
  for (const l of t.lines) out.push(`  ${s(l.atMs)}  ${l.text.slice(0, 150)}`);
  return out.join('\n');
}

/** Seconds summed per program (the same program's processes added), for the profile table. */
export function phases(t: Timeline): Record<string, { processes: number; wallSeconds: number; cpuSeconds: number }> {
  const out: Record<string, { processes: number; wallSeconds: number; cpuSeconds: number }> = {};
  for (const p of t.processes) {
    const row = (out[p.what] ??= { processes: 0, wallSeconds: 0, cpuSeconds: 0 });
    row.processes++;
    row.wallSeconds += (p.endMs - p.startMs) / 1000;
    row.cpuSeconds += p.cpuSeconds;
  }
  return out;
}
