/**
 * FR-006 at the deadline: a node whose boot never finishes and never fails (hang.service, a
 * start job that never returns: systemd stays `starting`), with a short rollout timeout. The
 * step rolls back when the deadline passes, not before and not long after, exits 4 (5 on a
 * first deploy), and its report says what systemd was still waiting for. The exit code is
 * checked against the cluster read back afterwards (law 9): with progressDeadlineSeconds equal
 * to the rollout timeout, the Deployment controller may report ProgressDeadlineExceeded while
 * the rollback already brings the previous image back; that must not turn a good rollback
 * into exit 6.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeployHarness, images } from './harness.js';
import type { BuiltImage } from '../integration/images-scripts.js';

const TIMEOUT_S = 40;
/** The step re-classifies every 0.5 s; the evidence read adds at most 3 s to the total, not to the verdict. */
const LATE_MS = 5_000;
/**
 * The deadline is the step's own (its start + the timeout) or the Deployment controller's
 * progress deadline (the same timeout, counted from the Deployment's last progress: on a
 * first deploy the pod's creation, which comes before tofu starts the step; 1.7 s before it
 * here), whichever comes first: neither may come earlier than that.
 */
const EARLY_MS = 3_000;

/** Samples the Deployment's Progressing condition once a second until stopped (what the controller said, and when). */
function watchProgressing(h: DeployHarness, node: string) {
  const seen: { at: number; reason: string; updated: string }[] = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const r = await h.kubectl(['get', 'deployment', node, '-o', 'json']);
      if (r.exitCode === 0) {
        const cond = (JSON.parse(r.stdout).status?.conditions ?? []).find((c: any) => c.type === 'Progressing');
        if (cond && seen.at(-1)?.reason !== cond.reason) seen.push({ at: Date.now(), reason: cond.reason, updated: cond.lastUpdateTime });
      }
      await new Promise((res) => setTimeout(res, 1000));
    }
  })();
  return {
    seen,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

function expectNamesWhatSystemdWaitsFor(rep: any) {
  expect(['timeout', 'progress-deadline']).toContain(rep.reason);
  expect(rep.message).toMatch(/systemd: starting|systemd is booting/);
  // the job that never ends is queued from the start (multi-user.target wants it) ...
  expect(rep.systemdJobs).toContainEqual(expect.objectContaining({ unit: 'hang.service', type: 'start' }));
  expect(rep.systemdJobs).toContainEqual({ unit: 'multi-user.target', type: 'start', state: 'waiting' });
  // ... and the report names the jobs systemd was running at the deadline (at most three):
  // hang.service once the boot got that far; on a loaded machine the boot may still be
  // earlier at the deadline (seen in CI at load 10: systemd-journal-flush), and then those
  const running = (rep.systemdJobs as { unit: string; type: string; state: string }[]).filter((j) => j.state === 'running');
  expect(running.length, JSON.stringify(rep.systemdJobs)).toBeGreaterThan(0);
  for (const j of running.slice(0, 3)) expect(rep.message).toContain(`${j.unit} (${j.type}, running)`);
  expect(rep.message).toContain('systemd was still waiting for ');
  if (running.some((j) => j.unit === 'hang.service')) expect(rep.message).toContain('hang.service (start, running)');
}

describe('FR-006 at the deadline: a boot that never ends', () => {
  let h: DeployHarness;
  let good: BuiltImage;
  let hang: BuiltImage;
  let goodImage = '';

  beforeAll(async () => {
    h = await DeployHarness.create('deadline');
    [good, hang] = [await images.good(), await images.hang()];
  });
  afterAll(() => h?.cleanup());

  it('GIVEN a node running a good image', async () => {
    const r = await h.deploy('apply', await h.writePlan('good', { n1: { image: good } }), ['--target', 'all']);
    expect(r.exitCode, r.stderr).toBe(0);
    goodImage = (await h.getJson(['get', 'deployment', 'n1'])).spec.template.spec.containers[0].image;
    expect(goodImage).toMatch(/@sha256:/);
  });

  it(`WHEN its new image never finishes booting THEN the step rolls back at the ${TIMEOUT_S}s deadline, exits 4, names the job systemd waits for, and the previous image is back and ready`, async () => {
    const plan = await h.writePlan('hang', { n1: { image: hang } });
    const progressing = watchProgressing(h, 'n1');
    const started = Date.now();
    const r = await h.deploy('apply', plan, ['--target', 'all', '--rollout-timeout', `${TIMEOUT_S}s`]);
    const seconds = (Date.now() - started) / 1000;
    await progressing.stop();
    const [rep] = r.json?.targets?.[0]?.rollouts ?? [];
    // what the controller said during the run, for the record (the race)
    console.log(`deadline e2e: apply ${seconds.toFixed(1)}s, wait ${rep?.durations?.waitMs} ms, rollback ${rep?.durations?.rollbackMs} ms, reason ${rep?.reason}; Progressing: ${JSON.stringify(progressing.seen.map((s) => ({ ...s, at: new Date(s.at).toISOString() })))}`);

    expect(r.exitCode, `${r.stderr}\n${r.stdout}`).toBe(4);
    expect(rep).toMatchObject({ node: 'n1', outcome: 'rolled-back', previousImage: goodImage, timeoutSeconds: TIMEOUT_S });
    expectNamesWhatSystemdWaitsFor(rep);
    // at the deadline: not before it, not long after it
    expect(rep.durations.waitMs).toBeGreaterThanOrEqual(TIMEOUT_S * 1000 - EARLY_MS);
    expect(rep.durations.waitMs).toBeLessThan(TIMEOUT_S * 1000 + LATE_MS);
    // the whole apply: tofu, the wait, the rollback (the hung pod stops, the previous boots)
    expect(seconds).toBeLessThan(TIMEOUT_S + 120);

    // read back from the cluster: the exit code told the truth
    const d = await h.getJson(['get', 'deployment', 'n1']);
    expect(d.spec.template.spec.containers[0].image).toBe(goodImage);
    const pod = await h.podOf('n1');
    expect(pod.spec.containers[0].image).toBe(goodImage);
    expect(pod.status.conditions.find((c: any) => c.type === 'Ready').status).toBe('True');
  });
});

describe('FR-006 at the deadline, first deploy: nothing to set back', () => {
  let h: DeployHarness;
  beforeAll(async () => (h = await DeployHarness.create('deadline-first')));
  afterAll(() => h?.cleanup());

  it('exits 5 at the deadline, says there is no previous revision, and names the job systemd waits for', async () => {
    const plan = await h.writePlan('hang', { first: { image: await images.hang() } });
    const r = await h.deploy('apply', plan, ['--target', 'all', '--rollout-timeout', `${TIMEOUT_S}s`]);
    const [rep] = r.json?.targets?.[0]?.rollouts ?? [];
    console.log(`deadline e2e (first deploy): wait ${rep?.durations?.waitMs} ms, reason ${rep?.reason}: ${rep?.message}`);
    expect(r.exitCode, `${r.stderr}\n${r.stdout}`).toBe(5);
    expect(rep).toMatchObject({ node: 'first', outcome: 'failed-no-previous', previousImage: null });
    expect(rep.message).toContain('there is no previous revision to set back (this apply made the Deployment: a first deploy of the node, or its Deployment made again, as with a claim made again)');
    expectNamesWhatSystemdWaitsFor(rep);
    expect(rep.durations.waitMs).toBeGreaterThanOrEqual(TIMEOUT_S * 1000 - EARLY_MS);
    expect(rep.durations.waitMs).toBeLessThan(TIMEOUT_S * 1000 + LATE_MS);
    // the cluster: the node's one pod is there and not ready
    const pod = await h.podOf('first');
    expect(pod.status.conditions.find((c: any) => c.type === 'Ready').status).toBe('False');
  });
});
