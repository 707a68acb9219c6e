// `node bench/chart-parity.ts` (after `npm run build`): whether bench/helm-chart, with the values
// the bench gives a group (bench/lib/helm-values.ts), renders the same Deployment as deploy's
// graph writes for a node (stacks/pod-template.ts), at deploy's default probe period and at the
// 200-node group's. Offline: `helm template`, no cluster. Prints every field that differs and
// exits 1 when one does; the objects beside it (claim, service account, NetworkPolicy) are listed.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as yaml from 'js-yaml';
import { buildHelm, root } from './lib/bench-env.ts';
import { deploySettings } from './lib/helm-group.ts';
import { chartDir, helmEnv } from './lib/helm-release.ts';
import { groupValues } from './lib/helm-values.ts';
import { writeProbeValues } from './lib/probe-values.ts';

const { deploymentManifest } = (await import(join(root, 'dist/stacks/pod-template.js'))) as typeof import('../stacks/pod-template.ts');
const { parseDuration, DURATION_RULES } = (await import(join(root, 'dist/src/config/duration.js'))) as typeof import('../src/config/duration.ts');

/** Every leaf path where a and b differ. */
function differences(a: unknown, b: unknown, path = ''): string[] {
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) => differences((a as any)[k], (b as any)[k], `${path}.${k}`));
  }
  return a === b ? [] : [`${path}: deploy ${JSON.stringify(a)}, chart ${JSON.stringify(b)}`];
}

const helm = buildHelm();
const work = mkdtempSync(join(tmpdir(), 'chart-parity-'));
let failed = false;
try {
  for (const probePeriod of [DURATION_RULES.probePeriod.defaultText, '60s']) {
    const node = { name: 'n00', image: 'registry.invalid/ns/n00@sha256:0', machineId: '00000000-0000-4000-8000-000000000000' };
    const values = join(work, 'values.json');
    writeFileSync(values, JSON.stringify(groupValues([node], await deploySettings('bench', { DEPLOY_PROBE_PERIOD: probePeriod }))));
    const out = execFileSync(helm, ['template', 'parity', chartDir, '--namespace', 'ns', '-f', writeProbeValues(work), '-f', values], { encoding: 'utf8', env: helmEnv(work) });
    const objects = yaml.loadAll(out).filter((o): o is any => o !== null && typeof o === 'object');
    const target = { group: 'bench', runtimeClass: 'systemd', probePeriod: parseDuration(probePeriod)!, stopTimeout: parseDuration(DURATION_RULES.stopTimeout.defaultText)! } as Parameters<typeof deploymentManifest>[0];
    // the graph's scripts are escaped for tofu's templates (src/contract/shell.ts tfEscape); the pod gets them unescaped
    const graph = JSON.parse(JSON.stringify(deploymentManifest(target, { name: node.name } as Parameters<typeof deploymentManifest>[1], 'ns', node.image, node.machineId)).replaceAll('$${', '${').replaceAll('%%{', '%{'));
    delete graph.metadata.namespace;
    const diff = differences(graph, objects.find((o) => o.kind === 'Deployment'));
    console.log(`probe period ${probePeriod}: ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}; the Deployment ${diff.length ? 'differs' : 'is the same as deploy\'s'}`);
    for (const d of diff) console.log(`  ${d}`);
    failed ||= diff.length > 0;
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
