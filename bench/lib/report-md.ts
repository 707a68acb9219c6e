/** The results as one Markdown report: a table of every figure with its goal and verdict. */
import type { FleetResults } from '../fleet.ts';
import type { NoopPlanResults } from '../noop-plan.ts';
import type { RollbackResults } from '../rollback-vs-helm.ts';
import { secs, showSecs } from './stats.ts';

export interface SynthRow {
  name: string;
  medianMs: number;
  minMs: number;
  maxMs: number;
  rssMb: number;
  goal: string;
  met: boolean | null;
}

export interface Figure {
  id: string;
  what: string;
  result: string;
  goal: string;
  met: boolean | null;
}

export interface BenchResults {
  date: string;
  host: string;
  runs: number;
  nodes: number;
  fleet?: FleetResults;
  rollback?: RollbackResults;
  synth?: SynthRow[];
  errors: string[];
  /** when each part (fleet, rollback, synth) was measured */
  measuredAt: Record<string, string>;
}

const yes = (b: boolean | null) => (b === null ? '' : b ? 'yes' : '**NO**');

export function figures(r: BenchResults): Figure[] {
  const out: Figure[] = [];
  const f = r.fleet;
  if (f) {
    out.push({ id: 'P1', what: `no-op plan, ${r.nodes} nodes: \`deploy plan\` / bare \`tofu plan\`${f.noop ? ' (stock provider 2.38.0)' : ''}`, result: `${showSecs(f.plan.deploy)} / ${showSecs(f.plan.tofu)} = **${f.plan.ratio.toFixed(2)}**`, goal: 'ratio <= 0.4', met: f.plan.ratio <= 0.4 });
    const v = f.noop?.variants;
    if (v?.['deploy-full'] && f.noop?.fullP1 !== undefined) {
      out.push({ id: 'P1', what: `(the full plan, DEPLOY_FAST_PLAN=off) / bare \`tofu plan\``, result: `${showSecs(v['deploy-full'].ms)} / ${showSecs(f.plan.tofu)} = **${f.noop.fullP1.toFixed(2)}**`, goal: '(for comparison)', met: null });
    }
    if (v?.helm) out.push({ id: 'P6', what: `the same no-op plan / \`helm upgrade --dry-run=server\` of the same objects (Helm 4)`, result: `${showSecs(v.deploy!.ms)} / ${showSecs(v.helm.ms)} = **${f.noop!.p6.toFixed(2)}**`, goal: 'ratio <= 2', met: f.noop!.p6 <= 2 });
    const one = f.scale.find((s) => s.size === 1);
    const ten = f.scale.find((s) => s.size === 10);
    if (one) out.push({ id: 'P2', what: `apply changing 1 node of ${f.scaleFrom?.nodes ?? r.nodes}`, result: showSecs(one.ms), goal: '<= 15 s', met: one.ms.median <= 15_000 });
    if (one && ten) out.push({ id: 'P2', what: `scale-out: apply of 10 changed nodes / 1 changed node${f.scaleFrom ? ` (group of ${f.scaleFrom.nodes} nodes, ${f.scaleFrom.date.slice(0, 16)})` : ''}`, result: `${showSecs(ten.ms)} / ${showSecs(one.ms)} = **${f.scaleRatio.toFixed(2)}**`, goal: 'ratio <= 1.5', met: f.scaleRatio <= 1.5 });
    const f1 = f.clusterFloor?.find((s) => s.size === 1);
    const f10 = f.clusterFloor?.find((s) => s.size === 10);
    if (one && f1 && f10) {
      const own = one.ms.median - f1.ms.median;
      out.push({ id: 'P2', what: `(the cluster alone: \`kubectl rollout restart\` of 10 / 1 Deployments; the ratio with deploy's own ${secs(own)} s of a 1-node apply and no per-node cost)`, result: `${showSecs(f10.ms)} / ${showSecs(f1.ms)}; (${secs(own)} + ${secs(f10.ms.median)}) / ${secs(one.ms.median)} = **${((own + f10.ms.median) / one.ms.median).toFixed(2)}**`, goal: '(the floor on this host)', met: null });
    }
    const n = f.noopApply;
    const zero = n.pushes === 0 && n.rollouts === 0 && n.podRestarts === 0 && n.podsReplaced === 0;
    out.push({ id: 'P4', what: `no-op apply, ${r.nodes} nodes: pushes, rollout waits, pod restarts, pods replaced`, result: `${n.pushes}, ${n.rollouts}, ${n.podRestarts}, ${n.podsReplaced} (${secs(n.ms)} s)`, goal: 'all 0', met: zero });
  }
  const b = r.rollback;
  if (b) {
    out.push({ id: 'P3', what: `time to roll back (degraded -> previous image ready), timeout ${b.timeoutSeconds}s: deploy / Helm 4`, result: `${showSecs(b.deploy.evidenceToReadyMs)} / ${showSecs(b.helm.evidenceToReadyMs)} = **${b.ratio.toFixed(3)}**`, goal: 'ratio <= 0.2', met: b.ratio <= 0.2 });
  }
  for (const s of r.synth ?? []) {
    out.push({ id: 'P5', what: s.name, result: `${s.medianMs.toFixed(0)} ms (${s.minMs.toFixed(0)}-${s.maxMs.toFixed(0)}), ${s.rssMb.toFixed(0)} MB peak RSS`, goal: s.goal || '(none)', met: s.met });
  }
  return out;
}

function indent(text: string, max = 25): string {
  const lines = text.split('\n');
  const kept = lines.length > max ? [...lines.slice(0, max), `... (${lines.length - max} more lines)`] : lines;
  return kept.map((l) => `    ${l}`).join('\n');
}

/** Every variant of the no-op plan, and where a bare plan spends its time (bench/noop-plan.ts). */
function noopSection(n: NoopPlanResults, nodes: number): string[] {
  const md = ['## P1, P6: the no-op plan every way', '', `Group of ${nodes} nodes, no changes; the variants interleaved round by round.`, '', '| variant | time (median, min-max) | runs (s) |', '|---|---|---|'];
  for (const [name, x] of Object.entries(n.variants)) md.push(`| ${name} | ${showSecs(x.ms)} | ${x.runs.map((ms) => secs(ms)).join(', ')} |`);
  md.push('', `The full plan (DEPLOY_FAST_PLAN=off) with the stock provider / with the patched one: ${n.patchGain.toFixed(2)}.`);
  if (n.fastPathGain !== undefined) md.push(`The full plan / the verified no-op check: ${n.fastPathGain.toFixed(2)}; the full plan against Helm (P6's ratio without the check): ${n.fullP6.toFixed(2)}.`);
  md.push('');
  md.push('Profile of one bare `tofu plan -json` per provider build (refresh or read per resource type; CPU per program sampled every 100 ms; processes started, by strace):', '');
  md.push('| build | wall | before the first refresh | after the last | refresh (data: read) per type: count, sum, median (max) | CPU s (processes) | execve |', '|---|---|---|---|---|---|---|');
  for (const [build, p] of Object.entries(n.profiles)) {
    const refresh = Object.entries(p.refresh).map(([t, x]) => `${t}: ${x.count}, ${secs(x.sumMs)} s, ${secs(x.ms.median)} s (${secs(x.ms.max)})`).join('; ');
    const cpu = Object.entries(p.cpu).map(([prog, x]) => `${prog} ${x.seconds.toFixed(1)} (${x.processes})`).join(', ');
    const execs = p.execs ? Object.entries(p.execs).map(([prog, k]) => `${prog} ${k}`).join(', ') : 'no strace';
    md.push(`| ${build} | ${secs(p.wallMs)} s | ${secs(p.beforeRefreshMs)} s | ${secs(p.afterRefreshMs)} s | ${refresh} | ${cpu} | ${execs} |`);
  }
  md.push('');
  return md;
}

export function renderReport(r: BenchResults, svgName: string): string {
  const md: string[] = [];
  md.push('# Benchmarks: deploy against bare OpenTofu and Helm 4', '');
  md.push(`${r.date} on ${r.host}; ${r.runs} measured runs per variant (median, min-max), all variants of a figure interleaved in the same run. Written by \`npm run bench\`.`, '');
  const when = Object.entries(r.measuredAt ?? {});
  if (when.length) md.push(`Parts measured at: ${when.map(([p, d]) => `${p} ${d}`).join(', ')}.`, '');
  md.push('| figure | what | result (median, min-max) | goal | met |', '|---|---|---|---|---|');
  for (const f of figures(r)) md.push(`| ${f.id} | ${f.what} | ${f.result} | ${f.goal} | ${yes(f.met)} |`);
  md.push('');
  if (r.errors.length) {
    md.push('## Not measured in this run', '');
    for (const e of r.errors) md.push(`- ${e.split('\n')[0]}`);
    md.push('');
  }
  if (r.fleet) {
    if (r.fleet.scale.length) md.push('## P2: scale-out curve', '', `Group of ${r.fleet.scaleFrom?.nodes ?? r.nodes} nodes; each apply changes its own nodes to an image the registry has not seen (one upload, mounted into the other nodes' repositories, and a pod replaced per node).`, '', '| changed nodes | apply (median, min-max) | runs (s) | planned alone |', '|---:|---|---|---:|');
    for (const s of r.fleet.scale) md.push(`| ${s.size} | ${showSecs(s.ms)} | ${s.runs.map((x) => secs(x)).join(', ')} | ${s.scoped === undefined ? '' : `${s.scoped} of ${s.runs.length}`} |`);
    md.push('', `First apply of all ${r.nodes} nodes (pushes, pods from nothing; in batches of 10 nodes, the times summed): ${secs(r.fleet.initialApplyMs)} s.`, '');
  }
  if (r.fleet?.noop) md.push(...noopSection(r.fleet.noop, r.nodes));
  md.push(`![scale-out curve and rollback times](${svgName})`, '');
  if (r.rollback) {
    const b = r.rollback;
    md.push('## P3: rollback', '', '| tool | degraded -> previous image ready | whole command | exit codes |', '|---|---|---|---|');
    md.push(`| deploy apply | ${showSecs(b.deploy.evidenceToReadyMs)} | ${showSecs(b.deploy.commandMs)} | ${b.deploy.runs.map((x) => x.exitCode).join(', ')} |`);
    md.push(`| helm upgrade --rollback-on-failure | ${showSecs(b.helm.evidenceToReadyMs)} | ${showSecs(b.helm.commandMs)} | ${b.helm.runs.map((x) => x.exitCode).join(', ')} |`);
    md.push('', 'What each printed about the cause (last run):', '', '`deploy apply` (stdout):', '', indent(b.deploy.printed || '(nothing)'), '', '`helm upgrade --rollback-on-failure` (stdout and stderr):', '', indent(b.helm.printed || '(nothing)'), '');
  }
  return `${md.join('\n')}\n`;
}
