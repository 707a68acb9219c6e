/**
 * Seed 002 B3, the stop timeout (DEPLOY_STOP_TIMEOUT / --stop-timeout = the pod's
 * terminationGracePeriodSeconds): a node pod stops cleanly on SIGRTMIN+3 within it. The
 * `slow-stop` image has a unit whose ExecStop takes 15 s and a unit that runs once systemd
 * reached shutdown.target; both log to /var/lib/stop-log on the node's claim, read after the
 * next boot. With 45 s the unit gets its 15 s and systemd reaches shutdown.target; with 5 s
 * the kubelet kills systemd in the middle of the stop (the setting is what decides).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeployHarness, images } from './harness.js';
import type { BuiltImage } from '../integration/images-scripts.js';

interface StopRun {
  /** From the scale-down to the pod object being gone, ms. */
  stopMs: number;
  /** The node container's exit code, when the watch saw it terminated (the kubelet reports it shortly before the pod goes). */
  exitCode: number | undefined;
  /** /var/lib/stop-log of the stopped pod: `<event> <unix time>` lines, read after the next boot. */
  log: Map<string, number>;
}

/** Scales the node to 0 (the pod stops with its grace period), measures the stop, brings it back and reads what the stop logged. */
async function stopOnce(h: DeployHarness, node: string): Promise<StopRun> {
  await h.exec(node, ': > /var/lib/stop-log');
  const pod = (await h.podOf(node)).metadata.name;
  const started = Date.now();
  await h.kubectlOk(['scale', `deployment/${node}`, '--replicas=0']);
  let exitCode: number | undefined;
  for (;;) {
    const r = await h.kubectl(['get', 'pod', pod, '-o', 'json']);
    if (r.exitCode !== 0) break; // gone
    const cs = (JSON.parse(r.stdout).status?.containerStatuses ?? []).find((c: any) => c.name === 'node');
    exitCode = cs?.state?.terminated?.exitCode ?? exitCode;
    if (Date.now() - started > 120_000) throw new Error(`pod ${pod} still there after 120 s`);
    await new Promise((res) => setTimeout(res, 250));
  }
  const stopMs = Date.now() - started;
  await h.kubectlOk(['scale', `deployment/${node}`, '--replicas=1']);
  await h.kubectlOk(['rollout', 'status', `deployment/${node}`, '--timeout=180s']);
  const text = await h.exec(node, 'cat /var/lib/stop-log');
  const log = new Map<string, number>();
  for (const line of text.split('\n')) {
    const [event, time] = line.trim().split(' ');
    if (event && time && !log.has(event)) log.set(event, Number(time));
  }
  return { stopMs, exitCode, log };
}

describe('the stop timeout (seed 002 B3): systemd stops cleanly within it', () => {
  let h: DeployHarness;
  let slowStop: BuiltImage;
  let plan: string;
  beforeAll(async () => {
    h = await DeployHarness.create('stop');
    slowStop = await images.slowStop();
    plan = await h.writePlan('group', { n1: { image: slowStop } });
  });
  afterAll(() => h?.cleanup());

  it('GIVEN --stop-timeout 45s WHEN the pod stops THEN the slow ExecStop gets its 15 s, systemd reaches shutdown.target, and the pod is gone well within 45 s', async () => {
    const r = await h.deploy('apply', plan, ['--target', 'all', '--stop-timeout', '45s']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect((await h.getJson(['get', 'deployment', 'n1'])).spec.template.spec.terminationGracePeriodSeconds).toBe(45);

    const run = await stopOnce(h, 'n1');
    console.log(`stop e2e (45 s): pod gone after ${run.stopMs} ms, exit ${run.exitCode}, log ${JSON.stringify([...run.log])}`);
    const begin = run.log.get('stop-begin');
    const end = run.log.get('stop-end');
    const shutdown = run.log.get('shutdown-target');
    expect(begin, 'slow-stop.service was stopped').toBeDefined();
    expect(end, 'its ExecStop ran to the end').toBeDefined();
    expect(shutdown, 'systemd reached shutdown.target').toBeDefined();
    expect(end! - begin!).toBeGreaterThanOrEqual(15);
    expect(shutdown!).toBeGreaterThanOrEqual(end!);
    // SIGKILL would be 137; systemd halted by itself
    if (run.exitCode !== undefined) expect(run.exitCode).not.toBe(137);
    expect(run.stopMs).toBeGreaterThanOrEqual(15_000);
    expect(run.stopMs).toBeLessThan(45_000);
  });

  it('GIVEN --stop-timeout 5s WHEN the pod stops THEN the kubelet kills systemd in the middle of the 15 s ExecStop: no shutdown.target', async () => {
    const r = await h.deploy('apply', plan, ['--target', 'all', '--stop-timeout', '5s']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect((await h.getJson(['get', 'deployment', 'n1'])).spec.template.spec.terminationGracePeriodSeconds).toBe(5);

    const run = await stopOnce(h, 'n1');
    console.log(`stop e2e (5 s): pod gone after ${run.stopMs} ms, exit ${run.exitCode}, log ${JSON.stringify([...run.log])}`);
    expect(run.log.has('stop-begin')).toBe(true);
    expect(run.log.has('stop-end')).toBe(false);
    expect(run.log.has('shutdown-target')).toBe(false);
    expect(run.stopMs).toBeLessThan(15_000);
  });
});
