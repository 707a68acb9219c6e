import { describe, expect, it } from 'vitest';
import type { FleetResults } from '../../../../bench/fleet.ts';
import { figures, renderReport, type BenchResults } from '../../../../bench/lib/report-md.ts';
import type { ScaleResults } from '../../../../bench/scale.ts';
import { spread } from '../../../../bench/lib/stats.ts';

const s = (...secs: number[]) => spread(secs.map((x) => x * 1000));
const helmRuns = (size: number, ...secs: number[]) => ({ size, ms: s(...secs), runs: secs.map((x) => x * 1000), pushMs: secs.map(() => 300) });
const settled = { seconds: 70, loadBefore: 30, loadAfter: 14, settled: true };

function fleet(withHelm: boolean): FleetResults {
  return {
    initialApplyMs: 1,
    noopApply: { pushes: 0, rollouts: 0, podRestarts: 0, podsReplaced: 0, ms: 700 },
    plan: { deploy: s(0.5), tofu: s(20), ratio: 0.025, deployRuns: [500], tofuRuns: [20_000] },
    scale: [
      { size: 1, ms: s(2.8, 2.9, 3.0), runs: [2800, 2900, 3000], scoped: 3 },
      { size: 10, ms: s(31, 32, 33), runs: [31_000, 32_000, 33_000], scoped: 3 },
    ],
    scaleRatio: 32 / 2.9,
    clusterFloor: [
      { size: 1, ms: s(2.5), runs: [2500] },
      { size: 10, ms: s(16), runs: [16_000] },
    ],
    ...(withHelm ? { clusterFloorOn: 'helm' as const, helm: { namespace: 'bench-p2-helm-x', upMs: 200_000, settled, sizes: [helmRuns(1, 3.0, 3.1, 2.9), helmRuns(10, 9, 10, 11)] } } : { clusterFloorOn: 'deploy' as const }),
  };
}

function scale(withHelm: boolean): ScaleResults {
  return {
    nodes: 200,
    probePeriod: '60s',
    firstApplyMs: 600_000,
    memory: { beforeMiB: 22_000, withGroupMiB: 19_000, load1: 40, ...(withHelm ? { withHelmMiB: 16_000 } : {}) },
    noopPlan: { ms: s(1), runs: [1000] },
    oneNode: { ms: s(5.5, 5.8, 6.0), runs: [5500, 5800, 6000], scoped: 3, timeline: 'wall 5.80 s', phases: {} },
    fullPlan: { deploy: s(70), tofu: s(100), deployRuns: [70_000], tofuRuns: [100_000] },
    ...(withHelm ? { helm: { namespace: 'bench-p10-helm-x', upMs: 900_000, settled, oneNode: helmRuns(1, 6.5, 7, 8) }, floor: { ms: s(3), runs: [3000] } } : {}),
  };
}

const results = (withHelm: boolean, errors: string[] = []): BenchResults => ({ date: '2026-12-06T00:00:00Z', host: 'test', runs: 3, nodes: 50, fleet: fleet(withHelm), scale: scale(withHelm), errors, measuredAt: {} });
const row = (r: BenchResults, id: string, what: RegExp) => figures(r).find((f) => f.id === id && what.test(f.what));

describe("the report's P2a, P2b and P10 against Helm (issue 48)", () => {
  it('GIVEN deploy, Helm and the floor measured WHEN the figures are made THEN each is deploy / Helm against <= 1.0x, the floor beside', () => {
    const r = results(true);
    const p2a = row(r, 'P2a', /1 node of 50/)!;
    expect(p2a.result).toBe('2.90 s (2.80-3.00) / 3.00 s (2.90-3.10) = **0.97**; the floor 2.50 s (2.50-2.50): deploy 1.16x, Helm 1.20x');
    expect([p2a.goal, p2a.met]).toEqual(['<= 1.0x Helm', true]);
    expect(p2a.what).toContain("`helm upgrade --wait`");
    expect(p2a.what).toContain("of the release's same Deployments");
    const p2b = row(r, 'P2b', /10 nodes of 50/)!;
    expect(p2b.result).toMatch(/^32\.0 s .* \/ 10\.0 s .* = \*\*3\.20\*\*/);
    expect(p2b.met).toBe(false);
  });

  it("GIVEN P10 at 200 nodes WHEN the figures are made THEN deploy / Helm at 200 (<= 1.0x) and deploy at 200 / deploy at 50 (<= 2)", () => {
    const r = results(true);
    const helm = row(r, 'P10', /1 node of 200 a new image \(3 of 3 planned alone\): `deploy apply` \/ Helm 4/)!;
    expect(helm.result).toMatch(/= \*\*0\.83\*\*; the floor 3\.00 s/);
    expect(helm.met).toBe(true);
    const growth = row(r, 'P10', /at 200 nodes \/ at 50/)!;
    expect(growth.result).toBe('5.80 s (5.50-6.00) / 2.90 s (2.80-3.00) = **2.00**');
    expect([growth.goal, growth.met]).toEqual(['<= 2', true]);
    const memory = row(r, 'P10', /MemAvailable/)!;
    expect(memory.result).toMatch(/^22000 \/ 19000 \/ 16000 MiB/);
    expect(memory.what).toContain("with Helm's release too;");
    // where the node cannot hold both groups, Helm's release stands in the group's place
    r.scale!.helm = { ...r.scale!.helm!, after: 'the node holds 250 pods' };
    expect(row(r, 'P10', /MemAvailable/)!.what).toContain("with Helm's release in its place;");
  });

  it('GIVEN no Helm side (results before issue 48, or a release that did not come up) THEN deploy and the floor are shown with no verdict', () => {
    const r = results(false);
    const p2a = row(r, 'P2a', /1 node of 50/)!;
    expect(p2a.result).toBe('2.90 s (2.80-3.00); the floor 2.50 s (2.50-2.50): deploy 1.16x');
    expect([p2a.goal, p2a.met]).toEqual(['<= 1.0x Helm (Helm not measured)', null]);
    const p10 = row(r, 'P10', /1 node of 200 a new image/)!;
    expect([p10.result, p10.met]).toEqual(['5.80 s (5.50-6.00)', null]);
    r.fleet!.helmError = "Helm's release of bench-p2-helm-x did not come up: timed out";
    expect(row(r, 'P2a', /1 node of 50/)!.goal).toBe('<= 1.0x Helm (Helm not measured: its release did not come up)');
  });

  it('GIVEN the Helm side WHEN the report is written THEN it lists every run of each tool and the floor, and how the releases came up', () => {
    const md = renderReport(results(true), 'bench.svg');
    expect(md).toContain('## P2a, P2b, P10: deploy against Helm, run by run');
    expect(md).toContain('| P2a | 1 of 50 | 2.80, 2.90, 3.00 | 3.00, 3.10, 2.90 | 0.30, 0.30, 0.30 | 2.50 |');
    expect(md).toContain('| P10 | 1 of 200 | 5.50, 5.80, 6.00 | 6.50, 7.00, 8.00 | 0.30, 0.30, 0.30 | 3.00 |');
    expect(md).toContain("Helm's release of 50 nodes came up in 200.0 s (in batches, its upgrades summed); then the host settled: load 30.0 -> 14.0 in 70 s. Helm ran at its client's defaults.");
    expect(renderReport(results(false), 'bench.svg')).not.toContain('deploy against Helm, run by run');
  });
});
