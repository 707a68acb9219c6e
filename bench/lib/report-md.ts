/** The results as one Markdown report: a table of every figure with its goal and verdict. */
import type { FleetResults } from '../fleet.ts';
import type { NoopPlanResults } from '../noop-plan.ts';
import type { RollbackResults } from '../rollback-vs-helm.ts';
import type { ScaleResults } from '../scale.ts';
import { GROWTH_GOAL, HELM_GOAL, verdict } from './side-by-side.ts';
import { secs, showSecs, type Spread } from './stats.ts';

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
  /** P10: the group at 4x the scale (bench/scale.ts) */
  scale?: ScaleResults;
  /** P11: the last `npm run bench:cold` (bench/cold-start.ts) */
  cold?: ColdStart;
  errors: string[];
  /** when each part (fleet, rollback, synth) was measured */
  measuredAt: Record<string, string>;
}

export interface ColdStart {
  date: string;
  commit: string;
  host: string;
  command: string;
  exitCode: number;
  seconds: number;
  goalSeconds: number;
  met: boolean;
  caches: string;
  steps: { at: number; line: string }[];
  /**
   * The host's cores in use, each minute of the run (/proc/stat: 2.0 is both cores busy), and
   * the idle core-seconds in all: what better packing of the builds could win at most.
   */
  cpu?: { busyCoresPerMinute: number[]; idleCoreSeconds: number };
}

const yes = (b: boolean | null) => (b === null ? '' : b ? 'yes' : '**NO**');

/**
 * A change by deploy against the same change by Helm (issue 48: goal HELM_GOAL), the cluster's
 * floor beside it with each tool's multiple of it; without Helm's side, deploy and the floor.
 */
function againstHelm(id: string, change: string, deploy: Spread, helm: Spread | undefined, floor: Spread | undefined, helmError: string | undefined): Figure {
  const floorWhat = floor ? `; the floor: \`kubectl rollout restart\` + \`rollout status\` of the ${helm ? "release's " : ''}same Deployments` : '';
  const v = verdict(deploy, helm, HELM_GOAL);
  const of = (x: Spread, base: Spread) => (x.median / base.median).toFixed(2);
  const beside = floor ? `; the floor ${showSecs(floor)}: deploy ${of(deploy, floor)}x${helm ? `, Helm ${of(helm, floor)}x` : ''}` : '';
  const goal = `<= ${HELM_GOAL.toFixed(1)}x Helm`;
  if (!helm) return { id, what: `${change}: \`deploy apply\`${floorWhat}`, result: `${showSecs(deploy)}${beside}`, goal: `${goal} (Helm not measured${helmError ? ': its release did not come up' : ''})`, met: null };
  return { id, what: `${change}: \`deploy apply\` / Helm 4 \`helm upgrade --wait\` of a release of the same nodes${floorWhat}`, result: `${showSecs(deploy)} / ${showSecs(helm)} = **${v.ratio.toFixed(2)}**${beside}`, goal, met: v.met };
}

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
    const group = f.scaleFrom?.nodes ?? r.nodes;
    // issue 48: against Helm's `helm upgrade --wait` of the same change, the cluster's floor beside
    for (const [id, k] of [['P2a', 1], ['P2b', 10]] as const) {
      const applied = f.scale.find((s) => s.size === k);
      const floor = f.clusterFloor?.find((s) => s.size === k)?.ms;
      if (applied) out.push(againstHelm(id, `apply giving ${k} node${k > 1 ? 's' : ''} of ${group} a new image`, applied.ms, f.helm?.sizes.find((s) => s.size === k)?.ms, floor, f.helmError));
    }
    if (one && ten) out.push({ id: 'P2', what: `(scale-out: 10 changed nodes / 1${f.scaleFrom ? `, group of ${f.scaleFrom.nodes} nodes, ${f.scaleFrom.date.slice(0, 16)}` : ''}; issue 11's ratio, replaced by P2a/P2b)`, result: `${showSecs(ten.ms)} / ${showSecs(one.ms)} = ${f.scaleRatio.toFixed(2)}`, goal: '(for comparison)', met: null });
    const n = f.noopApply;
    const zero = n.pushes === 0 && n.rollouts === 0 && n.podRestarts === 0 && n.podsReplaced === 0;
    out.push({ id: 'P4', what: `no-op apply, ${r.nodes} nodes: pushes, rollout waits, pod restarts, pods replaced`, result: `${n.pushes}, ${n.rollouts}, ${n.podRestarts}, ${n.podsReplaced} (${secs(n.ms)} s)`, goal: 'all 0', met: zero });
  }
  const b = r.rollback;
  if (b) {
    out.push({ id: 'P3', what: `time to roll back (degraded -> previous image ready), timeout ${b.timeoutSeconds}s: deploy / Helm 4`, result: `${showSecs(b.deploy.evidenceToReadyMs)} / ${showSecs(b.helm.evidenceToReadyMs)} = **${b.ratio.toFixed(3)}**`, goal: 'ratio <= 0.2', met: b.ratio <= 0.2 });
  }
  const sc = r.scale;
  if (sc) {
    out.push({ id: 'P10', what: `verified no-op \`deploy plan\`, ${sc.nodes} nodes`, result: showSecs(sc.noopPlan.ms), goal: '<= 1.5 s', met: sc.noopPlan.ms.median <= 1_500 });
    out.push(againstHelm('P10', `apply giving 1 node of ${sc.nodes} a new image (${sc.oneNode.scoped} of ${sc.oneNode.runs.length} planned alone)`, sc.oneNode.ms, sc.helm?.oneNode.ms, sc.floor?.ms, sc.helmError));
    const one50 = r.fleet?.scale.find((s) => s.size === 1);
    if (one50) {
      const v = verdict(sc.oneNode.ms, one50.ms, GROWTH_GOAL);
      out.push({ id: 'P10', what: `deploy's apply giving 1 node a new image at ${sc.nodes} nodes / at ${r.fleet?.scaleFrom?.nodes ?? r.nodes}`, result: `${showSecs(sc.oneNode.ms)} / ${showSecs(one50.ms)} = **${v.ratio.toFixed(2)}**`, goal: `<= ${GROWTH_GOAL}`, met: v.met });
    } else out.push({ id: 'P10', what: `deploy's apply giving 1 node a new image at ${sc.nodes} nodes / at 50`, result: showSecs(sc.oneNode.ms), goal: `<= ${GROWTH_GOAL} (P2a at 50 not measured in this run)`, met: null });
    out.push({ id: 'P10', what: `full plan (DEPLOY_FAST_PLAN=off) / bare \`tofu plan\` (stock provider) of the same ${sc.nodes}-node graph and state`, result: `${showSecs(sc.fullPlan.deploy)} / ${showSecs(sc.fullPlan.tofu)} = ${(sc.fullPlan.deploy.median / sc.fullPlan.tofu.median).toFixed(2)}`, goal: '(reported)', met: null });
    const withHelm = sc.memory.withHelmMiB === undefined ? '' : sc.helm?.after === undefined ? ` / with Helm's release too` : ` / with Helm's release in its place`;
    out.push({ id: 'P10', what: `the host with the ${sc.nodes}-node group (probe period ${sc.probePeriod}): MemAvailable before / with it${withHelm}; load (1 min); first apply in waves`, result: `${sc.memory.beforeMiB} / ${sc.memory.withGroupMiB}${withHelm ? ` / ${sc.memory.withHelmMiB}` : ''} MiB; ${sc.memory.load1.toFixed(1)}; ${secs(sc.firstApplyMs)} s`, goal: '(reported)', met: null });
  }
  const c = r.cold;
  if (c) out.push({ id: 'P11', what: `cold start: \`${c.command}\`, empty caches (\`npm run bench:cold\`, ${c.date.slice(0, 16)}, ${c.commit.slice(0, 7)})`, result: `${(c.seconds / 60).toFixed(1)} min, exit ${c.exitCode}`, goal: `<= ${c.goalSeconds / 60} min`, met: c.met });
  for (const s of r.synth ?? []) {
    out.push({ id: 'P5', what: s.name, result: `${s.medianMs.toFixed(0)} ms (${s.minMs.toFixed(0)}-${s.maxMs.toFixed(0)}), ${s.rssMb.toFixed(0)} MB peak RSS`, goal: s.goal || '(none)', met: s.met });
  }
  return out;
}

/** Issue 48's runs: for each change, deploy's, Helm's and the floor's times in the order measured. */
function helmSection(r: BenchResults): string[] {
  const f = r.fleet;
  const sc = r.scale;
  const runs = (xs: readonly number[] | undefined) => xs?.map((x) => secs(x)).join(', ') ?? '';
  const rows: string[] = [];
  for (const [id, k] of [['P2a', 1], ['P2b', 10]] as const) {
    const h = f?.helm?.sizes.find((s) => s.size === k);
    if (h) rows.push(`| ${id} | ${k} of ${r.nodes} | ${runs(f!.scale.find((s) => s.size === k)?.runs)} | ${runs(h.runs)} | ${runs(h.pushMs)} | ${runs(f!.clusterFloor?.find((s) => s.size === k)?.runs)} |`);
  }
  if (sc?.helm) rows.push(`| P10 | 1 of ${sc.nodes} | ${runs(sc.oneNode.runs)} | ${runs(sc.helm.oneNode.runs)} | ${runs(sc.helm.oneNode.pushMs)} | ${runs(sc.floor?.runs)} |`);
  if (!rows.length) return [];
  const md = [
    '## P2a, P2b, P10: deploy against Helm, run by run',
    '',
    "Each change made three ways in one round per run, the order rotating by run: `deploy apply` of deploy's group; `helm upgrade --wait` of a Helm 4 release of bench/helm-chart holding the same nodes (claims, service accounts, NetworkPolicy, the same pod, probes and timings; its pods running beside the group's), giving the same nodes an image of its own; and the cluster's floor on the release's same Deployments. Helm's image is pushed before helm runs and not counted in its time (as a pipeline pushes before it deploys); deploy's apply pushes inside its own.",
    '',
    "| figure | changed nodes | `deploy apply` (s) | `helm upgrade --wait` (s) | Helm's push before it, not counted (s) | the floor (s) |",
    '|---|---|---|---|---|---|',
    ...rows,
    '',
  ];
  for (const [nodes, h] of [[r.nodes, f?.helm], [sc?.nodes, sc?.helm]] as const) {
    if (!h) continue;
    const s = h.settled;
    const rest = s ? `; then the host ${s.settled ? 'settled' : 'was still settling'}: load ${s.loadBefore.toFixed(1)} -> ${s.loadAfter.toFixed(1)} in ${s.seconds.toFixed(0)} s` : '';
    const flags = h.flags?.length ? `with \`${h.flags.join(' ')}\`` : "at its client's defaults";
    const when = 'after' in h && h.after ? ` after deploy's runs, in place of deploy's group (${h.after}): each tool measured under its own group's pods, one after the other, and the floor on the release` : '';
    md.push(`Helm's release of ${nodes} nodes came up in ${secs(h.upMs)} s (in batches, its upgrades summed)${when}${rest}. Helm ran ${flags}.`, '');
  }
  return md;
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
  md.push(...helmSection(r));
  if (r.fleet?.noop) md.push(...noopSection(r.fleet.noop, r.nodes));
  if (r.scale) {
    md.push(`## P10: ${r.scale.nodes} nodes`, '', `No-op plan runs (s): ${r.scale.noopPlan.runs.map((x) => secs(x)).join(', ')}; 1-node applies (s): ${r.scale.oneNode.runs.map((x) => secs(x)).join(', ')}; full plan (s): ${r.scale.fullPlan.deployRuns.map((x) => secs(x)).join(', ')}; bare tofu plan (s): ${r.scale.fullPlan.tofuRuns.map((x) => secs(x)).join(', ')}.`, '', 'The median 1-node apply, every process under deploy and every progress line (bench/lib/apply-timeline.ts):', '', indent(r.scale.oneNode.timeline, 80), '');
  }
  if (r.cold) md.push('## P11: the cold start, step by step', '', `${r.cold.host}; ${r.cold.caches}`, '', ...r.cold.steps.map((x) => `    ${x.at.toFixed(0).padStart(5)} s  ${x.line}`), '', ...(r.cold.cpu ? [`Cores busy, minute by minute: ${r.cold.cpu.busyCoresPerMinute.map((b) => b.toFixed(1)).join(' ')}; ${r.cold.cpu.idleCoreSeconds.toFixed(0)} idle core-seconds in all.`, ''] : []));
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
