/**
 * Acceptance of the rollout step (issue 7) against the local cluster the e2e global setup
 * brought up, with the real node images (good, broken) pushed to the loopback registry:
 * good after good is ready; broken after good is rolled back and names broken.service, with
 * /var/lib and the machine ID kept; broken first has nothing to set back; a digest that is
 * not in the registry and a claim that cannot bind fail fast and are rolled back.
 * Each scenario is its own node (Deployment) in one namespace; `deploy rollout` runs
 * in-process through the CLI entry (src/cli/main.ts), exit code and report as a user sees them.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import type { RolloutReport } from '../../src/rollout/report.js';
import { buildImage } from '../integration/images-scripts.js';
import { cacheDir } from '../../src/paths.js';
import { VERSIONS } from '../../src/tools/versions.js';
import { runCli } from '../support/cli.js';
import { graphNodeObjects } from '../support/graph-node.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const env = inject('clusterEnv');
const registry = env.K8S_REGISTRY ?? '';
const ns = `e2e-rollout-${randomUUID().slice(0, 8)}`;
const TIMEOUT = '120s';

let kubectlBin: string;
let work: string;
const refs: { good: string; good2: string; broken: string } = { good: '', good2: '', broken: '' };

async function kubectlPath(): Promise<string> {
  return join(cacheDir(), 'kubernetes', VERSIONS.KUBERNETES_VERSION ?? '', 'kubectl');
}

async function kubectl(args: string[], input?: string) {
  return execa(kubectlBin, ['--kubeconfig', env.KUBE_CONFIG_PATH ?? '', ...args], { input, reject: false, timeout: 120_000 });
}
async function kubectlOk(args: string[], input?: string): Promise<string> {
  const r = await kubectl(args, input);
  if (r.exitCode !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.exitCode}): ${r.stderr}`);
  return r.stdout;
}

/** skopeo copy docker-archive -> the loopback registry; returns `<repo>@<digest>`. */
async function push(archive: string, repo: string, tag: string): Promise<string> {
  const digestFile = join(work, `digest-${tag}`);
  await execa('skopeo', ['copy', '--dest-tls-verify=false', '--digestfile', digestFile, `docker-archive:${archive}`, `docker://${registry}/${repo}:${tag}`], { timeout: 300_000 });
  return `${registry}/${repo}@${(await readFile(digestFile, 'utf8')).trim()}`;
}

/** The node's objects as the graph makes them (test/support/graph-node.ts), server-side applied as `deploy`. */
async function applyNode(name: string, image: string, uuid: string, claim?: { name: string; storageClassName?: string }) {
  await kubectlOk(['apply', '--server-side', '--field-manager=deploy', '--force-conflicts', '-f', '-'], graphNodeObjects({ namespace: ns, node: name, image, machineId: uuid, ...(claim !== undefined ? { claim } : {}) }));
}

interface RolloutRun {
  code: number;
  report: RolloutReport;
  stdout: string;
  stderr: string;
  ms: number;
}

/** `deploy rollout --namespace ns --node <name> --timeout 120s --report-dir <work> --json`. */
async function rollout(name: string): Promise<RolloutRun> {
  const t0 = performance.now();
  const { code, stdout, stderr } = await runCli(['rollout', '--namespace', ns, '--node', name, '--timeout', TIMEOUT, '--report-dir', work, '--json'], {
    ...process.env, ...env, DEPLOY_LOG_LEVEL: 'warn',
  });
  const ms = performance.now() - t0;
  const report = JSON.parse(await readFile(join(work, `rollout-${ns}-${name}.json`), 'utf8')) as RolloutReport;
  expect(JSON.parse(stdout)).toEqual(report);
  return { code, report, stdout, stderr, ms };
}

async function deploymentImage(name: string): Promise<string> {
  return kubectlOk(['-n', ns, 'get', 'deployment', name, '-o', 'jsonpath={.spec.template.spec.containers[0].image}']);
}

/** The one Ready, not deleting pod of a node (the rollout said it is there: no waiting here). */
async function readyPod(name: string): Promise<{ name: string; imageID: string }> {
  const pods = JSON.parse(await kubectlOk(['-n', ns, 'get', 'pods', '-l', `app.kubernetes.io/name=${name}`, '-o', 'json'])) as {
    items: { metadata: { name: string; deletionTimestamp?: string }; status: { conditions?: { type: string; status: string }[]; containerStatuses?: { imageID: string }[] } }[];
  };
  const ready = pods.items.filter((p) => !p.metadata.deletionTimestamp && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
  expect(ready, `one ready pod of ${name}`).toHaveLength(1);
  return { name: ready[0]!.metadata.name, imageID: ready[0]!.status.containerStatuses?.[0]?.imageID ?? '' };
}

async function podExec(pod: string, command: string[]): Promise<string> {
  return (await kubectlOk(['-n', ns, 'exec', pod, '--', ...command])).trim();
}

beforeAll(async () => {
  kubectlBin = await kubectlPath();
  expect(registry, 'K8S_REGISTRY from cluster.env').toMatch(/^127\.0\.0\.1:\d+$/);
  work = await mkdtemp(join(tmpdir(), 'e2e-rollout-'));
  const [good, good2, broken] = [await buildImage('good'), await buildImage('good', ['E2E_ROLLOUT=2']), await buildImage('broken')];
  await kubectlOk(['create', 'namespace', ns]);
  refs.good = await push(good.archive, `${ns}/node`, good.tag);
  refs.good2 = await push(good2.archive, `${ns}/node`, good2.tag);
  refs.broken = await push(broken.archive, `${ns}/node`, broken.tag);
}, 1_800_000);

afterAll(async () => {
  if (kubectlBin !== undefined) await kubectl(['delete', 'namespace', ns, '--wait=false', '--ignore-not-found']);
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

describe('deploy rollout against the local cluster', () => {
  it('good after good: exit 0 within the timeout, the new digest runs', async () => {
    const uuid = randomUUID();
    await applyNode('gg', refs.good, uuid);
    const first = await rollout('gg');
    expect(first.code, first.stderr).toBe(ExitCode.ok);
    expect(first.report).toMatchObject({ outcome: 'ready', image: refs.good, previousImage: null });

    await applyNode('gg', refs.good2, uuid);
    const second = await rollout('gg');
    expect(second.code, second.stderr).toBe(ExitCode.ok);
    expect(second.report).toMatchObject({ outcome: 'ready', reason: 'ready', image: refs.good2, previousImage: refs.good });
    expect(second.ms).toBeLessThan(120_000);
    expect((await readyPod('gg')).imageID).toContain(refs.good2.split('@')[1]);
  });

  it('broken after good: rolled back (exit 4) naming broken.service; /var/lib and the machine ID are kept', async () => {
    const uuid = randomUUID();
    await applyNode('bg', refs.good, uuid);
    expect((await rollout('bg')).code).toBe(ExitCode.ok);
    const before = await readyPod('bg');
    const marker = `kept-${randomUUID()}`;
    await podExec(before.name, ['/bin/sh', '-c', `echo ${marker} > /var/lib/e2e-rollout-marker && sync`]);
    const machineId = await podExec(before.name, ['cat', '/etc/machine-id']);

    await applyNode('bg', refs.broken, uuid);
    const r = await rollout('bg');
    expect(r.code, r.stderr).toBe(ExitCode.rolledBack);
    expect(r.report).toMatchObject({ outcome: 'rolled-back', reason: 'systemd-degraded', image: refs.broken, previousImage: refs.good });
    expect(r.report.failedUnits).toContain('broken.service');
    expect(r.report.message).toContain('broken.service');
    expect(r.report.events.some((e) => e.reason === 'Unhealthy' && e.message.includes('systemd: degraded'))).toBe(true);
    // the last log lines: the journal of the failed unit (PID 1 has no console in a pod)
    expect(r.report.logTail.join('\n')).toContain('Failed to start broken.service');
    // fail fast: far from the 120 s timeout
    expect(r.report.durations.waitMs).toBeLessThan(60_000);
    expect(r.report.durations.evidenceToRollbackDoneMs).not.toBeNull();

    // THEN the Deployment runs the previous digest again, with the same /var/lib and machine ID
    expect(await deploymentImage('bg')).toBe(refs.good);
    const after = await readyPod('bg');
    expect(after.name).not.toBe(before.name);
    expect(after.imageID).toContain(refs.good.split('@')[1]);
    expect(await podExec(after.name, ['cat', '/var/lib/e2e-rollout-marker'])).toBe(marker);
    expect(await podExec(after.name, ['cat', '/etc/machine-id'])).toBe(machineId);
    expect(machineId).toBe(uuid.replaceAll('-', ''));
  });

  it('broken as the first deploy: fails with nothing to set back (exit 5)', async () => {
    await applyNode('bf', refs.broken, randomUUID());
    const r = await rollout('bf');
    expect(r.code, r.stderr).toBe(ExitCode.failedNoPrevious);
    expect(r.report).toMatchObject({ outcome: 'failed-no-previous', reason: 'systemd-degraded', previousImage: null });
    expect(r.report.failedUnits).toContain('broken.service');
    expect(r.report.message).toContain('no previous revision');
    expect(await deploymentImage('bf')).toBe(refs.broken);
  });

  it('a digest that is not in the registry: fails fast on the pull error and rolls back (exit 4)', async () => {
    const uuid = randomUUID();
    await applyNode('pe', refs.good, uuid);
    expect((await rollout('pe')).code).toBe(ExitCode.ok);
    const missing = `${registry}/${ns}/node@sha256:${'0'.repeat(63)}1`;
    await applyNode('pe', missing, uuid);
    const r = await rollout('pe');
    expect(r.code, r.stderr).toBe(ExitCode.rolledBack);
    expect(r.report).toMatchObject({ outcome: 'rolled-back', reason: 'image-pull', image: missing, previousImage: refs.good });
    expect(r.report.durations.waitMs).toBeLessThan(60_000);
    expect(await deploymentImage('pe')).toBe(refs.good);
    expect((await readyPod('pe')).imageID).toContain(refs.good.split('@')[1]);
  });

  it('a claim that cannot be bound: fails as unschedulable and rolls back (exit 4)', async () => {
    const uuid = randomUUID();
    await applyNode('uc', refs.good, uuid);
    expect((await rollout('uc')).code).toBe(ExitCode.ok);
    await applyNode('uc', refs.good, uuid, { name: 'uc-nowhere', storageClassName: 'does-not-exist' });
    const r = await rollout('uc');
    expect(r.code, r.stderr).toBe(ExitCode.rolledBack);
    expect(r.report).toMatchObject({ outcome: 'rolled-back', reason: 'unschedulable' });
    expect(r.report.message).toContain('does-not-exist');
    expect(r.report.durations.waitMs).toBeLessThan(60_000);
    const claim = await kubectlOk(['-n', ns, 'get', 'deployment', 'uc', '-o', 'jsonpath={.spec.template.spec.volumes[0].persistentVolumeClaim.claimName}']);
    expect(claim).toBe('uc-state');
    await readyPod('uc');
  });
});
