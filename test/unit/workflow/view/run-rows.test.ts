import { describe, expect, it } from 'vitest';
import { createRunRows, type SetBackStep, type ViewEvent } from '../../../../src/workflow/view/run-rows.js';
import type { TofuEvent } from '../../../../src/tools/tofu/tofu-events.js';
import { stepOutcomeLine } from '../../../../src/rollout/progress.js';
import { formatStepLine } from '../../../../src/contract/step-lines.js';

const tofu = (at: number, event: TofuEvent): ViewEvent => ({ kind: 'tofu', at, target: 'all', event });
const start = (address: string, action = 'create'): TofuEvent => ({ kind: 'apply-start', address, action });
const complete = (address: string, action = 'create', elapsedSeconds = 1): TofuEvent => ({ kind: 'apply-complete', address, action, elapsedSeconds });
const output = (address: string, line: string): TofuEvent => ({ kind: 'provision', phase: 'output', address, provisioner: 'local-exec', output: line });
const progress = (node: string, extra: Record<string, unknown>) =>
  JSON.stringify({ deployRolloutStep: 1, event: 'progress', node, stage: 'rollout', verdict: 'waiting', phase: 'booting', detail: 'systemd is booting', elapsedMs: 1000, limitMs: 300_000, ...extra });

const PUSH = 'null_resource.image-mail_push_0A1B2C3D';
const DEPLOYMENT = 'kubernetes_manifest.node-mail_deployment_A2CE01B5';
const ROLLOUT = 'null_resource.node-mail_rollout_11223344';
const planned: ViewEvent = {
  kind: 'planned',
  at: 0,
  plan: { target: 'all', namespace: 'shop', changes: true, nodes: [{ node: 'mail', words: 'push r/mail:1; create its Deployment', changes: true }, { node: 'web', words: 'no change', changes: false }] },
};

function run(events: ViewEvent[]) {
  const rows = createRunRows();
  const lines = events.flatMap((e) => rows.apply(e).map((s) => s.line));
  return { rows: rows.rows(), lines };
}

describe('the rows of a run (events in, a row per node and per target out)', () => {
  it('GIVEN a plan THEN the target has a row (its namespace) and each node one: planned, or no change', () => {
    const { rows, lines } = run([planned]);
    expect(rows.map((r) => [r.label, r.status, r.words])).toEqual([
      ['namespace shop', 'planned', 'planned'],
      ['mail', 'planned', 'planned'],
      ['web', 'unchanged', 'no change'],
    ]);
    expect(lines).toEqual([]);
  });

  it('GIVEN a node that waits (after, a wave) THEN its row says what for, before and after its push', () => {
    const waiting: ViewEvent = { kind: 'planned', at: 0, plan: { target: 'all', namespace: 'shop', changes: true, nodes: [{ node: 'mail', words: 'push', changes: true, waits: 'db (after)' }] } };
    const { rows, lines } = run([waiting, tofu(1000, start(PUSH)), tofu(3000, complete(PUSH, 'create', 2))]);
    expect(rows.find((r) => r.label === 'mail')!.words).toBe('image pushed; waits for db (after)');
    expect(lines).toEqual(['mail: pushing the image', 'mail: image pushed in 2s']);
    expect(run([waiting]).rows.find((r) => r.label === 'mail')!.words).toBe('planned: waits for db (after)');
  });

  it("GIVEN tofu's events of a node's parts THEN the row says them with the node's name and the part's, never the construct ID", () => {
    const { rows, lines } = run([
      planned,
      tofu(1000, start(PUSH)),
      tofu(4000, complete(PUSH, 'create', 3)),
      tofu(4100, start('kubernetes_namespace_v1.namespace')),
      tofu(4200, complete('kubernetes_namespace_v1.namespace')),
      tofu(4300, start(DEPLOYMENT)),
      tofu(4400, complete(DEPLOYMENT)),
      tofu(4500, start(ROLLOUT)),
      tofu(6000, output(ROLLOUT, progress('mail', { systemd: 'starting' }))),
      // the same state again (a heartbeat) says nothing new
      tofu(7000, output(ROLLOUT, progress('mail', { systemd: 'starting', elapsedMs: 2000 }))),
      tofu(9000, output(ROLLOUT, stepOutcomeLine({ node: 'mail', outcome: 'ready', reason: 'ready', failedUnits: [], message: 'pod mail-1 is ready', durations: { totalMs: 4500 } as never }))),
      tofu(9100, complete(ROLLOUT)),
    ]);
    expect(lines).toEqual([
      'mail: pushing the image',
      'mail: image pushed in 3s',
      'namespace shop: creating namespace',
      'namespace shop: namespace created',
      'mail: creating Deployment',
      'mail: Deployment created',
      'mail: waiting for the pod',
      'mail: waiting for the pod: booting (systemd starting)',
      'mail: ready in 4s',
    ]);
    const mail = rows.find((r) => r.node === 'mail')!;
    expect(mail).toMatchObject({ status: 'ok', words: 'ready', startedAt: 1000, endedAt: 9000 });
    expect(lines.join('\n')).not.toMatch(/_[0-9A-F]{8}/);
  });

  it("GIVEN the step's outcome `rolled-back` THEN the row says it with the reason and the failed units, and tofu's error after it changes nothing", () => {
    const outcome = stepOutcomeLine({ node: 'mail', outcome: 'rolled-back', reason: 'systemd-degraded', failedUnits: ['broken.service'], message: 'systemd is degraded: broken.service failed', durations: { totalMs: 20_000 } as never });
    const { rows, lines } = run([planned, tofu(1, start(ROLLOUT)), tofu(2, output(ROLLOUT, outcome)), tofu(3, { kind: 'apply-errored', address: ROLLOUT, action: 'create', elapsedSeconds: 20 })]);
    expect(lines.at(-1)).toBe('mail: rolled back: systemd degraded (broken.service)');
    expect(rows.find((r) => r.node === 'mail')).toMatchObject({ status: 'bad', words: 'rolled back: systemd degraded (broken.service)' });
  });

  it('GIVEN what a push moves (the archive size, and whether its upload is shared) THEN the pushing row shows it', () => {
    const plan: ViewEvent = { kind: 'planned', at: 0, plan: { target: 'all', namespace: 'shop', changes: true, nodes: [{ node: 'mail', words: 'push', changes: true, push: '57.3 MB archive, one upload for 2 nodes' }] } };
    const { rows } = run([plan, tofu(1, start(PUSH))]);
    expect(rows.find((r) => r.node === 'mail')).toMatchObject({ words: 'pushing the image', detail: '57.3 MB archive, one upload for 2 nodes' });
  });

  it("GIVEN a step's own output (a build, a push) THEN the line stays on the node's row and is said with the step's name", () => {
    const { rows, lines } = run([planned, tofu(1, start(PUSH)), tofu(2, output(PUSH, 'Copying blob 1/3\n'))]);
    expect(lines).toEqual(['mail: pushing the image', 'mail: image push: Copying blob 1/3']);
    expect(rows.find((r) => r.node === 'mail')).toMatchObject({ words: 'pushing the image', output: 'Copying blob 1/3' });
  });

  it("GIVEN the apply ended THEN a row still on its way is done (ok) or stopped (failed), and one that never began is `not applied`", () => {
    const claim = 'kubernetes_persistent_volume_claim_v1.node-mail_state_0A1B2C3D';
    expect(run([planned, tofu(1, start(claim, 'update')), tofu(2, complete(claim, 'update')), { kind: 'ended', at: 3, target: 'all', ok: true }]).lines.slice(-1)).toEqual(['mail: done']);
    expect(run([planned, tofu(1, start(claim, 'update')), { kind: 'ended', at: 3, target: 'all', ok: false }]).lines.slice(-1)).toEqual(['mail: stopped while updating /var/lib claim']);
    expect(run([planned, { kind: 'ended', at: 3, target: 'all', ok: false }]).lines).toEqual(['namespace shop: not applied', 'mail: not applied']);
  });

  it("GIVEN the push step's typed lines about its node (a build's output) THEN they are said in their words, the row shows them without the name", () => {
    const said = formatStepLine({ deployStep: 'push', event: 'said', node: 'mail', message: 'building its image: make image' });
    const built = formatStepLine({ deployStep: 'push', event: 'build', node: 'mail', message: 'compiling "a\\b"' });
    const { rows, lines } = run([planned, tofu(1, start(PUSH)), tofu(2, output(PUSH, said)), tofu(3, output(PUSH, built))]);
    expect(lines.slice(1)).toEqual(['deploy: node mail: building its image: make image', 'mail: build: compiling "a\\b"']);
    expect(rows.find((r) => r.node === 'mail')!.output).toBe('build: compiling "a\\b"');
    const failed = formatStepLine({ deployStep: 'push', event: 'failed', node: 'mail', message: 'image archive /x is missing' });
    expect(run([planned, tofu(1, start(PUSH)), tofu(2, output(PUSH, failed))]).rows.find((r) => r.node === 'mail')!.output).toBe('image archive /x is missing');
  });

  it("GIVEN human words that look like the push's own (`deploy: node mail: ...`) THEN they are the step's output, not read as naming the node", () => {
    const { rows, lines } = run([planned, tofu(1, start(PUSH)), tofu(2, output(PUSH, 'deploy: node mail: said by someone else'))]);
    expect(lines.at(-1)).toBe('mail: image push: deploy: node mail: said by someone else');
    expect(rows.find((r) => r.node === 'mail')!.output).toBe('deploy: node mail: said by someone else');
  });

  it("GIVEN a log line of the rollout step (pino JSON) THEN its sentence is said, not the JSON; the step's next progress replaces it on the row", () => {
    const logged = '{"level":40,"time":1,"kind":"rollout-watch-reconnecting","msg":"watch reconnecting"}';
    const { rows, lines } = run([planned, tofu(1, start(ROLLOUT)), tofu(2, output(ROLLOUT, logged))]);
    expect(lines.at(-1)).toBe('mail: rollout step: warning: watch reconnecting');
    expect(rows.find((r) => r.node === 'mail')!.output).toBe('warning: watch reconnecting');
    const after = run([planned, tofu(1, start(ROLLOUT)), tofu(2, output(ROLLOUT, logged)), tofu(3, output(ROLLOUT, progress('mail', {})))]);
    expect(after.rows.find((r) => r.node === 'mail')!.output).toBe('');
  });

  it("GIVEN tofu's own echo of a local-exec command THEN it is not the step's output", () => {
    const { rows, lines } = run([planned, tofu(1, start(ROLLOUT)), tofu(2, output(ROLLOUT, 'Executing: ["/bin/sh" "-c" "deploy rollout --node mail"]'))]);
    expect(lines).toEqual(['mail: waiting for the pod']);
    expect(rows.find((r) => r.node === 'mail')!.output).toBe('');
  });

  it('GIVEN events before the plan (init, the digests read at plan time) THEN no row; the rows follow the plan, by name', () => {
    const rows = createRunRows();
    expect(rows.apply(tofu(0, start('data.external.image-web_digest_0A1B2C3D', 'read')))).toEqual([]);
    expect(rows.apply(tofu(0, start(PUSH)))).toEqual([]);
    expect(rows.rows()).toEqual([]);
    rows.apply(planned);
    expect(rows.rows().map((r) => r.label)).toEqual(['namespace shop', 'mail', 'web']);
  });

  it('GIVEN events of no node and no target part (a provider, a data read) THEN no row changes', () => {
    const { lines } = run([planned, tofu(1, start('data.external.image-mail_digest_0A1B2C3D', 'read')), tofu(2, start('data.kubernetes_resources.runtime-class', 'read'))]);
    expect(lines).toEqual([]);
  });

  it('GIVEN the step soaking a Ready pod THEN the row counts the soak down', () => {
    const soak = (elapsedMs: number) => progress('mail', { stage: 'soak', verdict: 'ready', phase: 'ready', detail: 'pod mail-1 is ready; soaking', elapsedMs, limitMs: 40_000, remainingMs: 40_000 - elapsedMs });
    const { rows } = run([planned, tofu(1, start(ROLLOUT)), tofu(2, output(ROLLOUT, soak(5000))), tofu(3, output(ROLLOUT, soak(12_000)))]);
    expect(rows.find((r) => r.node === 'mail')).toMatchObject({ status: 'active', words: 'soaking: 28s left' });
  });

  describe('the group\'s rollback (--on-failure group), after tofu ended', () => {
    const ready = stepOutcomeLine({ node: 'mail', outcome: 'ready', reason: 'ready', failedUnits: [], message: 'pod mail-1 is ready', durations: { totalMs: 4000 } as never });
    const forward: ViewEvent[] = [planned, tofu(1000, start(ROLLOUT)), tofu(5000, output(ROLLOUT, ready)), { kind: 'ended', at: 6000, target: 'all', ok: false }];
    const back = (at: number, step: SetBackStep): ViewEvent => ({ kind: 'set-back', at, target: 'all', node: 'mail', step });

    it('GIVEN a ready node set back THEN its row is on its way again (its time counted from the way back), says the wait for its pod, then `set back`', () => {
      const { rows, lines } = run([
        ...forward,
        back(10_000, { kind: 'setting-back', to: 'sha256:0123456789ab' }),
        back(11_000, { kind: 'setting-back', to: 'sha256:0123456789ab', verdict: { kind: 'waiting', phase: 'booting', detail: 'systemd is booting', systemdState: 'starting' } }),
        // the same state again says nothing new
        back(12_000, { kind: 'setting-back', to: 'sha256:0123456789ab', verdict: { kind: 'waiting', phase: 'booting', detail: 'systemd is booting', systemdState: 'starting' } }),
        back(14_000, { kind: 'setting-back', to: 'sha256:0123456789ab', verdict: { kind: 'ready', pod: 'mail-0', image: null } }),
        back(15_000, { kind: 'set-back', to: 'sha256:0123456789ab' }),
      ]);
      expect(lines.slice(run(forward).lines.length)).toEqual([
        'mail: setting back to sha256:0123456789ab: waiting for Ready',
        'mail: setting back to sha256:0123456789ab: waiting for Ready: booting (systemd starting)',
        'mail: setting back to sha256:0123456789ab: pod ready',
        'mail: set back to sha256:0123456789ab in 5s',
      ]);
      expect(rows.find((r) => r.node === 'mail')).toMatchObject({ status: 'ok', words: 'set back to sha256:0123456789ab', startedAt: 10_000, endedAt: 15_000 });
    });

    it('GIVEN the row on its way back THEN it is active, with the wait\'s detail', () => {
      const { rows } = run([...forward, back(10_000, { kind: 'setting-back', to: 'sha256:0123456789ab' }), back(10_000, { kind: 'setting-back', to: 'sha256:0123456789ab', verdict: { kind: 'waiting', phase: 'booting', detail: 'systemd is booting' } })]);
      expect(rows.find((r) => r.node === 'mail')).toMatchObject({ status: 'active', words: 'setting back to sha256:0123456789ab: waiting for Ready: booting', detail: 'systemd is booting', since: 10_000, startedAt: 10_000, endedAt: undefined });
    });

    it('GIVEN a node that could not be set back, or an interrupt THEN the row is bad and says why (the plain line whole, the row with the why as its detail)', () => {
      const failed = run([...forward, back(10_000, { kind: 'setting-back', to: 'sha256:0123456789ab' }), back(70_000, { kind: 'not-set-back', why: 'not ready within 60s (it runs sha256:0123456789ab)' })]);
      expect(failed.lines.at(-1)).toBe('mail: could not be set back: not ready within 60s (it runs sha256:0123456789ab)');
      expect(failed.rows.find((r) => r.node === 'mail')).toMatchObject({ status: 'bad', words: 'could not be set back', detail: 'not ready within 60s (it runs sha256:0123456789ab)', endedAt: 70_000 });
      const stopped = run([...forward, back(10_000, { kind: 'interrupted', why: 'not set back (the interrupt came before its wave): it runs sha256:fedcba987654' })]);
      expect(stopped.lines.at(-1)).toBe('mail: interrupted: not set back (the interrupt came before its wave): it runs sha256:fedcba987654');
      expect(stopped.rows.find((r) => r.node === 'mail')).toMatchObject({ status: 'bad', words: 'interrupted' });
    });
  });
});
