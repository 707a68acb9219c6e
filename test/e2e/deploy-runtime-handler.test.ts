/**
 * Edge case 1, its second form (docs/running-on-your-cluster.md): the cluster has the
 * RuntimeClass, but the node's container runtime has no handler of that name. Every pod
 * sandbox fails; the rollout step calls that terminal after three failures, says what the
 * runtime said, and on a first deploy exits 5 (nothing to set back).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeployHarness, images } from './harness.js';

describe('edge: a RuntimeClass whose handler the node does not have', () => {
  let h: DeployHarness;
  const rc = `no-handler-${process.pid}`;
  beforeAll(async () => {
    h = await DeployHarness.create('no-handler');
    await h.kubectlOk(['apply', '-f', '-'], { namespace: null, input: JSON.stringify({ apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: rc }, handler: 'no-such-handler' }) });
  });
  afterAll(async () => {
    await h?.kubectl(['delete', 'runtimeclass', rc, '--ignore-not-found'], { namespace: null });
    await h?.cleanup();
  });

  it('the rollout fails fast naming the sandbox error, exit 5 on a first deploy', async () => {
    const plan = await h.writePlan('group', { lone: { image: await images.good() } });
    const started = Date.now();
    const r = await h.deploy('apply', plan, ['--target', 'all', '--runtime-class', rc]);
    const seconds = (Date.now() - started) / 1000;
    const [rep] = r.json?.targets?.[0]?.rollouts ?? [];
    console.log(`no-handler e2e: apply ${seconds.toFixed(1)}s, wait ${rep?.durations?.waitMs} ms: ${rep?.message}`);
    expect(r.exitCode, `${r.stderr}\n${r.stdout}`).toBe(5);
    expect(rep).toMatchObject({ node: 'lone', outcome: 'failed-no-previous', reason: 'pod-sandbox' });
    expect(rep.message).toMatch(/the pod sandbox failed \d+ times: .*no-such-handler/);
    // terminal, not the 120 s rollout timeout of the harness
    expect(rep.durations.waitMs).toBeLessThan(90_000);
  });
});
