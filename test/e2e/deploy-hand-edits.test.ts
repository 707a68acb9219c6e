/**
 * Issue 34, law 13 "deploy owns what it deploys": hand edits made with kubectl while debugging a
 * node. For each edit (a table of them: list items and map entries added, fields removed, values
 * changed, edits by update, by patch, by replace and by another server-side apply manager):
 *   - `deploy plan` names the node, the field and its writer, and what the apply does;
 *   - `deploy apply` exits 0, the Deployment equals what the graph's apply made (spec, labels and
 *     annotations compared field by field with the Deployment right after the first apply), the
 *     pod is Ready with the same machine ID and /var/lib;
 *   - the next plan is a verified no-op.
 * Then the same edits with DEPLOY_FAST_PLAN=off (in two batches), and edits made while an apply
 * of another node runs: that apply's record is refused, the next plan is a full one naming the
 * edit, and the next apply repairs it.
 */
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, type BuiltImage } from '../integration/images-scripts.js';
import { DeployHarness, deploymentShape, images, type DeployRun } from './harness.js';

interface Edit {
  readonly name: string;
  /** Makes the edit with kubectl. */
  readonly make: (h: DeployHarness) => Promise<unknown>;
  /** The hand edits the plan names for node web: field (exact, or a pattern), writer (pattern), action. */
  readonly expect: readonly { field: string | RegExp; writer: RegExp; action: 'remove' | 'set-back' }[];
}

const json = (v: unknown) => JSON.stringify(v);
const patch = (type: 'merge' | 'json', body: unknown) => (h: DeployHarness) => h.kubectlOk(['patch', 'deployment', 'web', `--type=${type}`, '-p', json(body)]);

const EDITS: readonly Edit[] = [
  {
    name: 'kubectl set env adds FOO',
    make: (h) => h.kubectlOk(['set', 'env', 'deployment/web', 'FOO=bar']),
    expect: [{ field: 'spec.template.spec.containers[node].env[FOO]', writer: /^kubectl-set$/, action: 'remove' }],
  },
  {
    name: 'a label added to the pod template (merge patch)',
    make: patch('merge', { spec: { template: { metadata: { labels: { ceo: 'x' } } } } }),
    expect: [{ field: 'spec.template.metadata.labels[ceo]', writer: /^kubectl-patch$/, action: 'remove' }],
  },
  {
    name: 'an emptyDir volume added (JSON patch)',
    make: patch('json', [{ op: 'add', path: '/spec/template/spec/volumes/-', value: { name: 'scratch', emptyDir: {} } }]),
    expect: [{ field: 'spec.template.spec.volumes[scratch]', writer: /^kubectl-patch$/, action: 'remove' }],
  },
  {
    name: 'kubectl set resources adds a memory limit',
    make: (h) => h.kubectlOk(['set', 'resources', 'deployment/web', '--limits=memory=700Mi']),
    expect: [{ field: /^spec\.template\.spec\.containers\[node\]\.resources(\.limits)?(\[memory\])?$/, writer: /^kubectl-set$/, action: 'remove' }],
  },
  {
    name: 'kubectl annotate adds an annotation to the Deployment',
    make: (h) => h.kubectlOk(['annotate', 'deployment', 'web', 'x=1']),
    expect: [{ field: 'metadata.annotations[x]', writer: /^kubectl-annotate$/, action: 'remove' }],
  },
  {
    name: 'kubectl label adds a label to the Deployment',
    make: (h) => h.kubectlOk(['label', 'deployment', 'web', 'team=ops']),
    expect: [{ field: 'metadata.labels[team]', writer: /^kubectl-label$/, action: 'remove' }],
  },
  {
    name: 'kubectl scale to 2 replicas (the scale subresource)',
    make: (h) => h.kubectlOk(['scale', 'deployment/web', '--replicas=2']),
    expect: [{ field: 'spec.replicas', writer: /^kubectl.* \(scale\)$|^changed by a write that left no field manager$/, action: 'set-back' }],
  },
  {
    name: "an env value of the graph's changed",
    make: (h) => h.kubectlOk(['set', 'env', 'deployment/web', 'container=other']),
    expect: [{ field: 'spec.template.spec.containers[node].env[container].value', writer: /^kubectl-set$/, action: 'set-back' }],
  },
  {
    name: 'a container added (JSON patch)',
    make: async (h) => {
      const d = await h.getJson(['get', 'deployment', 'web']);
      const image = d.spec.template.spec.containers[0].image;
      return patch('json', [{ op: 'add', path: '/spec/template/spec/containers/-', value: { name: 'sidecar', image, command: ['/bin/sleep', 'infinity'] } }])(h);
    },
    expect: [{ field: 'spec.template.spec.containers[sidecar]', writer: /^kubectl-patch$/, action: 'remove' }],
  },
  {
    name: 'a toleration added (merge patch)',
    make: patch('merge', { spec: { template: { spec: { tolerations: [{ key: 'example.com/debug', operator: 'Exists', effect: 'NoSchedule' }] } } } }),
    expect: [{ field: 'spec.template.spec.tolerations', writer: /^kubectl-patch$/, action: 'remove' }],
  },
  {
    name: 'hostUsers removed (JSON patch: a write that leaves no field manager)',
    make: patch('json', [{ op: 'remove', path: '/spec/template/spec/hostUsers' }]),
    expect: [{ field: 'spec.template.spec.hostUsers', writer: /^removed by a write that left no field manager$/, action: 'set-back' }],
  },
  {
    name: "a label of the graph's removed from the pod template (JSON patch)",
    make: patch('json', [{ op: 'remove', path: '/spec/template/metadata/labels/app.kubernetes.io~1managed-by' }]),
    expect: [{ field: 'spec.template.metadata.labels[app.kubernetes.io/managed-by]', writer: /^removed by a write/, action: 'set-back' }],
  },
  {
    name: 'kubectl apply --server-side under another field manager (minReadySeconds, a template annotation)',
    make: (h) =>
      h.kubectlOk(['apply', '--server-side', '--field-manager=ops-team', '-f', '-'], {
        input: json({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: h.namespace }, spec: { minReadySeconds: 5, template: { metadata: { annotations: { 'ops/note': 'debugging' } } } } }),
      }),
    expect: [
      { field: 'spec.minReadySeconds', writer: /^ops-team$/, action: 'remove' },
      { field: /^spec\.template\.metadata\.annotations(\[ops\/note\])?$/, writer: /^ops-team$/, action: 'remove' },
    ],
  },
  {
    name: 'an edit-style update (get, change, kubectl replace): the image set to a tag, an env item added',
    make: async (h) => {
      // As an operator does when kubectl says "the object has been modified": get it again and
      // redo the change. The controller writes the status while a rollout of the edits made
      // before this one runs (batch 2 of the CI at 5541f75 met that conflict).
      for (let attempt = 1; ; attempt++) {
        const d = await h.getJson(['get', 'deployment', 'web']);
        const c = d.spec.template.spec.containers[0];
        c.image = `${h.env.K8S_REGISTRY}/${h.namespace}/web:${good.tag}`;
        c.env.push({ name: 'DEBUG', value: '1' });
        const r = await h.kubectl(['replace', '-f', '-'], { input: json(d) });
        if (r.exitCode === 0) return r.stdout;
        if (attempt >= 5 || !r.stderr.includes('the object has been modified')) throw new Error(`kubectl replace -f - failed (${r.exitCode}): ${r.stderr}`);
      }
    },
    expect: [
      { field: 'spec.template.spec.containers[node].env[DEBUG]', writer: /^kubectl-replace$/, action: 'remove' },
      { field: 'spec.template.spec.containers[node].image', writer: /^kubectl-replace$/, action: 'set-back' },
    ],
  },
  // Issue 45: three classes a field-by-field undo missed (each stopped every apply of the target)
  {
    name: 'fields valid only together: strategy RollingUpdate with rollingUpdate (merge patch)',
    make: patch('merge', { spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } } }),
    expect: [
      { field: 'spec.strategy.type', writer: /^kubectl-patch$/, action: 'set-back' },
      { field: /^spec\.strategy\.rollingUpdate/, writer: /^kubectl-patch$/, action: 'remove' },
    ],
  },
  {
    name: 'a removed field the API server defaults: the liveness probe removed (JSON patch)',
    make: patch('json', [{ op: 'remove', path: '/spec/template/spec/containers/0/livenessProbe' }]),
    expect: [{ field: /^spec\.template\.spec\.containers\[node\]\.livenessProbe/, writer: /^removed by a write that left no field manager$/, action: 'set-back' }],
  },
  {
    name: 'a field the API server mirrors into another: serviceAccountName default (merge patch)',
    make: patch('merge', { spec: { template: { spec: { serviceAccountName: 'default' } } } }),
    expect: [{ field: 'spec.template.spec.serviceAccountName', writer: /^kubectl-patch$/, action: 'set-back' }],
  },
];

let good: BuiltImage;

const shapeOf = deploymentShape;

function matches(field: string | RegExp, actual: string): boolean {
  return typeof field === 'string' ? field === actual : field.test(actual);
}

describe('hand edits (issues 34, 45): the plan names them, the apply undoes them', () => {
  let h: DeployHarness;
  let plan = '';
  let changedPlan = '';
  let machineId = '';
  let graphShape: ReturnType<typeof shapeOf>;

  beforeAll(async () => {
    h = await DeployHarness.create('hand');
    good = await images.good();
    const changed = await images.goodWith(`e2e=hand-edits`);
    plan = await h.writePlan('group', { web: { image: good }, mail: { image: good } });
    changedPlan = await h.writePlan('group-mail-changed', { web: { image: good }, mail: { image: changed } });
    const first = await h.deploy('apply', plan, ['--target', 'all']);
    expect(first.exitCode, first.stderr).toBe(0);
    graphShape = shapeOf(await h.getJson(['get', 'deployment', 'web']));
    machineId = await h.exec('web', 'cat /etc/machine-id');
    await h.exec('web', 'echo kept > /var/lib/hand-edit-marker');
  });
  afterAll(() => h?.cleanup());

  /** Plan: the node web names each expected edit; returns the plan's run. */
  async function planNames(edit: Pick<Edit, 'expect' | 'name'>, env: NodeJS.ProcessEnv = {}): Promise<DeployRun> {
    const p = await h.deploy('plan', plan, ['--target', 'all'], env);
    expect(p.exitCode, p.stderr).toBe(0);
    const t = p.json.targets[0];
    expect(t.changes, `${edit.name}: ${p.stdout}`).toBe(true);
    expect(t.verifiedNoop, edit.name).toBeUndefined();
    const web = t.nodes.find((n: any) => n.node === 'web');
    const named: any[] = web.handEdits ?? [];
    for (const want of edit.expect) {
      const found = named.find((e) => e.kind === 'Deployment' && matches(want.field, e.field) && want.writer.test(e.writer) && e.action === want.action);
      expect(found, `${edit.name}: ${json(want)} among ${json(named)}`).toBeDefined();
    }
    // the text summary says each on a line of its own, under the node
    const text = await h.deploy('plan', plan, ['--target', 'all'], env, { json: false });
    for (const want of edit.expect) {
      const verb = want.action === 'remove' ? 'apply removes it' : want.writer.test('removed by a write that left no field manager') ? 'apply sets it again' : 'apply sets it back';
      expect(text.stdout.split('\n').some((l) => l.startsWith('    hand edit: ') && l.endsWith(verb) && (typeof want.field === 'string' ? l.includes(want.field) : true)), `${edit.name}: ${text.stdout}`).toBe(true);
    }
    return p;
  }

  /** Apply: exit 0, the Deployment as the graph made it, the pod ready with its machine ID and /var/lib. */
  async function applyRepairs(name: string, env: NodeJS.ProcessEnv = {}): Promise<void> {
    const a = await h.deploy('apply', plan, ['--target', 'all'], env);
    expect(a.exitCode, `${name}: ${a.stderr}`).toBe(0);
    const d = await h.getJson(['get', 'deployment', 'web']);
    expect(shapeOf(d), name).toEqual(graphShape);
    const pod = await h.podOf('web');
    expect(pod.status.conditions.find((c: any) => c.type === 'Ready')?.status, name).toBe('True');
    expect(await h.exec('web', 'cat /etc/machine-id'), name).toBe(machineId);
    expect(await h.exec('web', 'cat /var/lib/hand-edit-marker'), name).toBe('kept');
  }

  for (const edit of EDITS) {
    it(`${edit.name}: named by the plan, undone by the apply, and the next plan is verified`, async () => {
      await edit.make(h);
      await planNames(edit);
      await applyRepairs(edit.name);
      const next = await h.deploy('plan', plan, ['--target', 'all']);
      expect(next.exitCode, next.stderr).toBe(0);
      expect(next.stderr, edit.name).toContain('no changes, verified without a refresh');
      expect(next.json.targets[0].verifiedNoop, edit.name).toBe(true);
      expect(next.json.targets[0].nodes.find((n: any) => n.node === 'web').handEdits, edit.name).toBeUndefined();
    });
  }

  it('kubectl rollout restart: its annotation is kept and said so; nothing is undone', async () => {
    await h.kubectlOk(['rollout', 'restart', 'deployment/web']);
    await h.kubectlOk(['rollout', 'status', 'deployment/web', '--timeout=180s']);
    const p = await h.deploy('plan', plan, ['--target', 'all']);
    expect(p.exitCode, p.stderr).toBe(0);
    const web = p.json.targets[0].nodes.find((n: any) => n.node === 'web');
    expect(web.handEdits).toEqual([expect.objectContaining({ field: 'spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]', action: 'keep', writer: expect.stringMatching(/^kubectl-rollout$/) })]);
    expect(p.json.targets[0].changes, p.stdout).toBe(false);
    const podBefore = (await h.podOf('web')).metadata.uid;
    const a = await h.deploy('apply', plan, ['--target', 'all']);
    expect(a.exitCode, a.stderr).toBe(0);
    expect((await h.podOf('web')).metadata.uid).toBe(podBefore);
    // the restart's pod is the node's: same machine ID and /var/lib
    expect(await h.exec('web', 'cat /etc/machine-id')).toBe(machineId);
    const d = await h.getJson(['get', 'deployment', 'web']);
    expect(d.spec.template.metadata.annotations['kubectl.kubernetes.io/restartedAt']).toBeTruthy();
    // from here on the graph's shape includes the kept annotation
    graphShape = shapeOf(d);
    const next = await h.deploy('plan', plan, ['--target', 'all']);
    expect(next.json.targets[0].verifiedNoop, next.stderr).toBe(true);
  });

  // The same edits with the check off, in two batches of edits that do not touch each other's fields
  const batches = [EDITS.filter((_, i) => [0, 1, 2, 3, 4, 5, 9, 10].includes(i)), EDITS.filter((_, i) => [6, 7, 8, 11, 12, 13, 14, 15, 16].includes(i))];
  batches.forEach((batch, i) => {
    it(`DEPLOY_FAST_PLAN=off, batch ${i + 1} (${batch.length} edits at once): each named by the full plan, all undone by one apply`, async () => {
      const off = { DEPLOY_FAST_PLAN: 'off' };
      for (const edit of batch) await edit.make(h);
      await planNames({ name: `batch ${i + 1}`, expect: batch.flatMap((e) => e.expect) }, off);
      await applyRepairs(`batch ${i + 1}`, off);
      const next = await h.deploy('plan', plan, ['--target', 'all'], off);
      expect(next.exitCode, next.stderr).toBe(0);
      expect(next.json.targets[0].changes, next.stdout).toBe(false);
      // nothing left to undo (the restart annotation of the test before is kept, and said so)
      expect((next.json.targets[0].nodes.find((n: any) => n.node === 'web').handEdits ?? []).filter((e: any) => e.action !== 'keep')).toEqual([]);
    });
  });

  // Edits made while an apply of the other node (mail, given a new image and back) runs
  const during: readonly Edit[] = [
    { name: 'web scaled to 0', make: (h) => h.kubectlOk(['scale', 'deployment/web', '--replicas=0']), expect: [{ field: 'spec.replicas', writer: /^kubectl.* \(scale\)$|^changed by a write that left no field manager$/, action: 'set-back' }] },
    EDITS[11]!,
    // (removed, the API server defaults it again: 600 s, not the graph's rollout timeout)
    {
      name: 'a field of the graph removed (JSON patch)',
      make: patch('json', [{ op: 'remove', path: '/spec/progressDeadlineSeconds' }]),
      expect: [{ field: 'spec.progressDeadlineSeconds', writer: /^(removed|changed) by a write that left no field manager$|^kubectl-patch$/, action: 'set-back' }],
    },
  ];
  during.forEach((edit, i) => {
    it(`while an apply of mail runs, ${edit.name}: that apply does not record it as verified; the next plan is a full one naming it, the next apply repairs it`, async () => {
      const target = i % 2 === 0 ? changedPlan : plan;
      const child = execa(join(repoRoot, 'bin', 'deploy'), ['apply', '--plan', target, '--json', '--target', 'all'], { env: h.env, reject: false, timeout: 900_000 });
      let edited: Promise<unknown> | undefined;
      child.stderr!.on('data', (b: Buffer) => {
        if (edited === undefined && String(b).includes('] tofu apply')) edited = edit.make(h);
      });
      const r = await child;
      expect(edited, `the apply never reached tofu apply: ${r.stderr}`).toBeDefined();
      await edited;
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stderr).toContain('not recorded as verified (the next plan is a full one)');
      // the next plan: a full one, naming the edit on web
      const p = await h.deploy('plan', target, ['--target', 'all']);
      expect(p.exitCode, p.stderr).toBe(0);
      expect(p.stderr).toContain('full plan: ');
      const web = p.json.targets[0].nodes.find((n: any) => n.node === 'web');
      for (const want of edit.expect) expect((web.handEdits ?? []).some((e: any) => matches(want.field, e.field) && want.writer.test(e.writer) && e.action === want.action), `${json(want)} in ${json(web.handEdits)}`).toBe(true);
      const a = await h.deploy('apply', target, ['--target', 'all']);
      expect(a.exitCode, a.stderr).toBe(0);
      expect(shapeOf(await h.getJson(['get', 'deployment', 'web']))).toEqual(graphShape);
      expect((await h.podOf('web')).status.conditions.find((c: any) => c.type === 'Ready')?.status).toBe('True');
      expect(await h.exec('web', 'cat /etc/machine-id')).toBe(machineId);
      const next = await h.deploy('plan', target, ['--target', 'all']);
      expect(next.json.targets[0].verifiedNoop, next.stderr).toBe(true);
    });
  });

  // The other objects deploy owns (issue 45): each edit named with its object, field and writer
  // (never a claim "grown" for a metadata edit, never a bare "namespace: update" for a security
  // downgrade), set back by one apply, and the next plan verified
  const others: readonly { name: string; kind: string; get: (h: DeployHarness) => string[]; make: (h: DeployHarness) => Promise<unknown>; field: string; writer: RegExp; scope?: null }[] = [
    {
      name: "the namespace's pod-security enforce level lowered to privileged (kubectl label --overwrite)",
      kind: 'Namespace',
      get: (h) => ['get', 'namespace', h.namespace],
      make: (h) => h.kubectlOk(['label', '--overwrite', 'namespace', h.namespace, 'pod-security.kubernetes.io/enforce=privileged'], { namespace: null }),
      field: 'metadata.labels[pod-security.kubernetes.io/enforce]',
      writer: /^kubectl-label$/,
      scope: null,
    },
    { name: 'an annotation added to the claim (kubectl annotate)', kind: 'PersistentVolumeClaim', get: () => ['get', 'pvc', 'web-state'], make: (h) => h.kubectlOk(['annotate', 'pvc', 'web-state', 'team=ops']), field: 'metadata.annotations[team]', writer: /^kubectl-annotate$/ },
    { name: 'a label added to the NetworkPolicy (kubectl label)', kind: 'NetworkPolicy', get: () => ['get', 'networkpolicy', 'same-namespace-only'], make: (h) => h.kubectlOk(['label', 'networkpolicy', 'same-namespace-only', 'debug=1']), field: 'metadata.labels[debug]', writer: /^kubectl-label$/ },
  ];
  for (const edit of others) {
    it(`${edit.name}: the plan names the ${edit.kind}, its field and its writer; one apply sets it back; the next plan is verified`, async () => {
      const shapeOfOther = (o: any) => ({ labels: o.metadata.labels, annotations: Object.fromEntries(Object.entries<string>(o.metadata.annotations ?? {}).filter(([k]) => !k.includes('kubernetes.io/'))), spec: o.spec });
      const opts = edit.scope === null ? { namespace: null } : {};
      const before = shapeOfOther(await h.getJson(edit.get(h), opts));
      await edit.make(h);
      const p = await h.deploy('plan', plan, ['--target', 'all']);
      expect(p.exitCode, p.stderr).toBe(0);
      const t = p.json.targets[0];
      const named = [...(t.handEdits ?? []), ...t.nodes.flatMap((n: any) => n.handEdits ?? [])];
      expect(named.some((e: any) => e.kind === edit.kind && e.field === edit.field && edit.writer.test(e.writer) && e.action === 'set-back'), `${edit.name}: ${json(named)}`).toBe(true);
      const text = await h.deploy('plan', plan, ['--target', 'all'], {}, { json: false });
      expect(text.stdout, edit.name).toContain(edit.field);
      expect(text.stdout, edit.name).not.toMatch(/grow its \/var\/lib claim/);
      const a = await h.deploy('apply', plan, ['--target', 'all']);
      expect(a.exitCode, a.stderr).toBe(0);
      expect(shapeOfOther(await h.getJson(edit.get(h), opts)), edit.name).toEqual(before);
      expect((await h.podOf('web')).status.conditions.find((c: any) => c.type === 'Ready')?.status).toBe('True');
      const next = await h.deploy('plan', plan, ['--target', 'all']);
      expect(next.json.targets[0].verifiedNoop, next.stderr).toBe(true);
    });
  }
});
