/**
 * Ctrl-C during `deploy apply` (law 7): one SIGINT to the deploy process while the rollout
 * step waits; tofu gets exactly one interrupt (counted in tofu's own log lines, which deploy
 * prints at DEPLOY_LOG_LEVEL=debug), the run ends with a clear message and exit 130, the
 * state lock is released, and the next run converges.
 *
 * The signal goes once the step says it is inside its wait for Ready (issue 49: a condition
 * the run shows, not a fixed time after the step started).
 */
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeployHarness, images } from './harness.js';
import { repoRoot } from '../integration/images-scripts.js';
import { parseStepProgressLine } from '../../src/rollout/progress.js';
import { until } from '../support/until.js';

/**
 * Whether the rollout step of `node` said that it waits for its pod: a progress line of its
 * wait (src/rollout/progress.ts, createStepProgress) with the verdict `waiting`. The step
 * writes one from inside its wait for Ready (run-rollout.ts: waitForVerdict's first
 * classification), tofu hands it over as the step's output, and deploy prints tofu's events at
 * DEPLOY_LOG_LEVEL=debug: `[all] <address> (local-exec): {"deployRolloutStep":1,...}`.
 */
function stepWaitsForReady(stderr: string, node: string): boolean {
  return stderr.split('\n').some((line) => {
    const at = line.indexOf('{"deployRolloutStep"');
    const p = at < 0 ? undefined : parseStepProgressLine(line.slice(at));
    return p?.event === 'progress' && p.node === node && p.stage === 'rollout' && p.verdict === 'waiting';
  });
}

describe('an interrupted apply', () => {
  let h: DeployHarness;
  const bogus = `bogus-${process.pid}`;
  beforeAll(async () => {
    h = await DeployHarness.create('sigint');
    // a RuntimeClass whose handler the node does not have: the pod's sandbox keeps failing,
    // which the rollout step treats as slow, so the apply is still waiting when we interrupt
    await h.kubectlOk(['apply', '-f', '-'], { namespace: null, input: JSON.stringify({ apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: bogus }, handler: 'no-such-handler' }) });
  });
  afterAll(async () => {
    await h.kubectl(['delete', 'runtimeclass', bogus, '--ignore-not-found'], { namespace: null });
    await h?.cleanup();
  });

  it('GIVEN an apply waiting for its rollout WHEN it gets one SIGINT THEN it stops cleanly, releases the lock, and the next run converges', async () => {
    const plan = await h.writePlan('group', { slow: { image: await images.good() } });
    // DEPLOY_LOG_LEVEL=debug: deploy shows tofu's own log lines (at the harness's `warn` it
    // does not), so what tofu says about the interrupts it got can be counted below
    const child = execa(join(repoRoot, 'bin', 'deploy'), ['apply', '--plan', plan, '--target', 'all', '--runtime-class', bogus, '--rollout-timeout', '300s'], {
      env: { ...h.env, DEPLOY_LOG_LEVEL: 'debug' },
      reject: false,
      timeout: 600_000,
    });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += String(d)));
    let exited = false;
    void child.then(() => (exited = true));
    // the step inside its wait for the pod (which the bogus RuntimeClass never lets be Ready),
    // then one interrupt, like a Ctrl-C
    try {
      await until('the rollout step of slow waiting for its pod to be Ready (a progress line of slow, stage rollout, verdict waiting)', () => stepWaitsForReady(stderr, 'slow'), {
        timeoutMs: 300_000,
        intervalMs: 50,
        seen: () => stderr.slice(-3000),
        failIf: () => (exited ? 'deploy ended before it' : undefined),
      });
    } catch (err) {
      // no wait to interrupt: the run stops (cleanly, on SIGTERM) before the test fails
      child.kill('SIGTERM');
      await child;
      throw err;
    }
    child.kill('SIGINT');
    const r = await child;
    expect(r.exitCode, stderr).toBe(130);
    expect(stderr).toContain('SIGINT received: stopping cleanly');
    // tofu got exactly one interrupt: it said so once, and never that it got two (which makes
    // it exit at once without waiting for the step in flight)
    expect(stderr.match(/\] Interrupt received/g) ?? [], stderr).toHaveLength(1);
    expect(stderr).not.toContain('Two interrupts');
    // the step got the interrupt too, and said what it left: nothing rolled back
    // (in the summary on stdout: tofu stops reading the step at the interrupt, deploy waits for
    // the step's report and prints it)
    expect(r.stdout, stderr).toMatch(/\/slow: interrupted: interrupted while waiting for the rollout; nothing was rolled back/);

    // the lock is free: a plan takes it without waiting, and the embedded state has no holder
    const list = await execa(join(repoRoot, 'bin', 'deploy'), ['state', 'list', '--json'], { env: h.env, reject: false });
    expect(list.exitCode, list.stderr).toBe(0);
    const states = JSON.parse(list.stdout);
    expect(JSON.stringify(states)).toContain('e2e-all');
    expect(JSON.stringify(states)).not.toMatch(/"lock(ed)?":\s*\{/);

    // the next run, with the method's RuntimeClass, converges
    const next = await h.deploy('apply', plan, ['--target', 'all']);
    expect(next.exitCode, next.stderr).toBe(0);
    expect((await h.podOf('slow')).status.conditions.find((c: any) => c.type === 'Ready').status).toBe('True');
    const again = await h.deploy('plan', plan, ['--target', 'all']);
    expect(again.json.targets[0].changes).toBe(false);
  });
});
