import { describe, expect, it } from 'vitest';
import { ownedPaths, readablePath, type FieldsTrie } from '../../../../src/workflow/drift/field-paths.js';
import { attributeAt, describeHandEdit, findHandEdits, holdsAppliedAttribute, type ManagedFieldsEntry, type ManagedObject } from '../../../../src/workflow/drift/hand-edits.js';
import { removalPatch } from '../../../../src/workflow/drift/undo-hand-edits.js';

// A node's Deployment as the graph writes it (reduced to what the rules read), with the
// managedFields the API server records for the graph's server-side apply and the controller.
const graph = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'mail', namespace: 'demo', labels: { 'app.kubernetes.io/name': 'mail' } },
  spec: {
    replicas: 1,
    template: {
      metadata: { labels: { 'app.kubernetes.io/name': 'mail' } },
      spec: {
        hostUsers: false,
        containers: [{ name: 'node', image: '${data.x}', env: [{ name: 'container', value: 'docker' }], volumeMounts: [{ name: 'state', mountPath: '/var/lib' }] }],
        volumes: [{ name: 'state', persistentVolumeClaim: { claimName: 'mail-state' } }],
      },
    },
  },
};

const deployFields: FieldsTrie = {
  'f:metadata': { 'f:labels': { 'f:app.kubernetes.io/name': {} } },
  'f:spec': {
    'f:replicas': {},
    'f:template': {
      'f:metadata': { 'f:labels': { 'f:app.kubernetes.io/name': {} } },
      'f:spec': {
        'f:hostUsers': {},
        'f:containers': {
          'k:{"name":"node"}': {
            '.': {},
            'f:name': {},
            'f:image': {},
            'f:env': { 'k:{"name":"container"}': { '.': {}, 'f:name': {}, 'f:value': {} } },
            'f:volumeMounts': { 'k:{"mountPath":"/var/lib"}': { '.': {}, 'f:mountPath': {}, 'f:name': {} } },
          },
        },
        'f:volumes': { 'k:{"name":"state"}': { '.': {}, 'f:name': {}, 'f:persistentVolumeClaim': { 'f:claimName': {} } } },
      },
    },
  },
};

const controller: ManagedFieldsEntry = {
  manager: 'kube-controller-manager',
  operation: 'Update',
  subresource: 'status',
  fieldsV1: { 'f:status': { 'f:replicas': {} } },
};
const revision: ManagedFieldsEntry = { manager: 'kube-controller-manager', operation: 'Update', fieldsV1: { 'f:metadata': { 'f:annotations': { '.': {}, 'f:deployment.kubernetes.io/revision': {} } } } };

function live(extra: { spec?: any; metadata?: any; managedFields: ManagedFieldsEntry[] }) {
  const object = structuredClone(graph) as any;
  object.metadata.resourceVersion = '41';
  object.metadata.annotations = { 'deployment.kubernetes.io/revision': '3', ...(extra.metadata?.annotations ?? {}) };
  if (extra.spec) extra.spec(object.spec);
  object.metadata.managedFields = [{ manager: 'deploy', operation: 'Apply', fieldsV1: deployFields }, controller, revision, ...extra.managedFields];
  return object;
}

const underGraph = (object: unknown) => [{ kind: 'Deployment', node: 'mail', object: object as any, graph, applied: graph }];

describe('findHandEdits', () => {
  it('GIVEN only the graph\'s apply and the controllers wrote the Deployment THEN there is no hand edit', () => {
    expect(findHandEdits(underGraph(live({ managedFields: [] })))).toEqual([]);
  });

  it('GIVEN kubectl set env added FOO THEN it is named with its writer, to be removed at its index', () => {
    const object = live({
      spec: (s: any) => s.template.spec.containers[0].env.push({ name: 'FOO', value: 'bar' }),
      managedFields: [{ manager: 'kubectl-set', operation: 'Update', fieldsV1: { 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"node"}': { 'f:env': { 'k:{"name":"FOO"}': { '.': {}, 'f:name': {}, 'f:value': {} } } } } } } } } }],
    });
    const edits = findHandEdits(underGraph(object));
    expect(edits).toEqual([
      { kind: 'Deployment', name: 'mail', node: 'mail', field: 'spec.template.spec.containers[node].env[FOO]', writer: 'kubectl-set', action: 'remove', pointer: '/spec/template/spec/containers/0/env/1', inTemplate: true },
    ]);
    expect(describeHandEdit(edits[0]!, { objectName: false })).toBe('spec.template.spec.containers[node].env[FOO] set by kubectl-set: apply removes it');
  });

  it('GIVEN a limit, an annotation and tolerations added THEN each is removed, the annotation outside the template', () => {
    const object = live({
      metadata: { annotations: { x: '1' } },
      spec: (s: any) => {
        s.template.spec.containers[0].resources = { limits: { memory: '700Mi' } };
        s.template.spec.tolerations = [{ key: 'k', operator: 'Exists' }];
      },
      managedFields: [
        { manager: 'kubectl-set', operation: 'Update', fieldsV1: { 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"node"}': { 'f:resources': { 'f:limits': { '.': {}, 'f:memory': {} } } } } } } } } },
        { manager: 'kubectl-annotate', operation: 'Update', fieldsV1: { 'f:metadata': { 'f:annotations': { 'f:x': {} } } } },
        { manager: 'kubectl-patch', operation: 'Update', fieldsV1: { 'f:spec': { 'f:template': { 'f:spec': { 'f:tolerations': {} } } } } },
      ],
    });
    const edits = findHandEdits(underGraph(object));
    expect(edits.map((e) => [e.field, e.writer, e.action, e.pointer, e.inTemplate])).toEqual([
      ['metadata.annotations[x]', 'kubectl-annotate', 'remove', '/metadata/annotations/x', false],
      ['spec.template.spec.containers[node].resources.limits', 'kubectl-set', 'remove', '/spec/template/spec/containers/0/resources/limits', true],
      ['spec.template.spec.tolerations', 'kubectl-patch', 'remove', '/spec/template/spec/tolerations', true],
    ]);
  });

  it('GIVEN the replicas scaled to 0 and back to 1 by hand THEN the value is the graph\'s again: no hand edit', () => {
    const object = live({ managedFields: [{ manager: 'kubectl', operation: 'Update', subresource: 'scale', fieldsV1: { 'f:spec': { 'f:replicas': {} } } }] });
    delete object.metadata.managedFields[0].fieldsV1['f:spec']['f:replicas'];
    expect(findHandEdits(underGraph(object))).toEqual([]);
  });

  it('GIVEN a field the graph sets written by another (scale, set image) THEN it is set back, not removed', () => {
    const object = live({
      spec: (s: any) => {
        s.replicas = 0;
        s.template.spec.containers[0].image = 'other:tag';
      },
      managedFields: [
        { manager: 'kubectl', operation: 'Update', subresource: 'scale', fieldsV1: { 'f:spec': { 'f:replicas': {} } } },
        { manager: 'kubectl-set', operation: 'Update', fieldsV1: { 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"node"}': { 'f:image': {} } } } } } } },
      ],
    });
    // the graph's apply no longer holds them (an Update takes a changed field over)
    object.metadata.managedFields[0].fieldsV1 = structuredClone(deployFields);
    delete object.metadata.managedFields[0].fieldsV1['f:spec']['f:replicas'];
    delete object.metadata.managedFields[0].fieldsV1['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"node"}']['f:image'];
    expect(findHandEdits(underGraph(object)).map((e) => [e.field, e.writer, e.action])).toEqual([
      ['spec.replicas', 'kubectl (scale)', 'set-back'],
      ['spec.template.spec.containers[node].image', 'kubectl-set', 'set-back'],
    ]);
  });

  it('GIVEN a field of the graph removed by a JSON patch (no field manager) THEN it is named as removed, set again by the apply', () => {
    const object = live({ spec: (s: any) => delete s.template.spec.hostUsers, managedFields: [] });
    const edits = findHandEdits(underGraph(object));
    expect(edits.map((e) => [e.field, e.writer, e.action])).toEqual([['spec.template.spec.hostUsers', 'removed by a write that left no field manager', 'set-back']]);
    expect(describeHandEdit(edits[0]!, { objectName: false })).toBe('spec.template.spec.hostUsers removed by a write that left no field manager: apply sets it again');
  });

  it('GIVEN the replicas changed by a write that left no field manager (kubectl scale) THEN it is named as changed, set back', () => {
    const object = live({ spec: (s: any) => (s.replicas = 0), managedFields: [] });
    delete object.metadata.managedFields[0].fieldsV1['f:spec']['f:replicas'];
    const edits = findHandEdits(underGraph(object));
    expect(edits.map((e) => [e.field, e.writer, e.action])).toEqual([['spec.replicas', 'changed by a write that left no field manager', 'set-back']]);
    expect(describeHandEdit(edits[0]!, { objectName: false })).toBe('spec.replicas changed by a write that left no field manager: apply sets it back');
  });

  it('GIVEN a field the new graph sets that the state never applied THEN its absence is no hand edit (the plan adds it)', () => {
    const object = live({ spec: (s: any) => delete s.template.spec.hostUsers, managedFields: [] });
    const applied = structuredClone(graph) as any;
    delete applied.spec.template.spec.hostUsers;
    expect(findHandEdits([{ kind: 'Deployment', node: 'mail', object, graph, applied }])).toEqual([]);
  });

  it('GIVEN kubectl rollout restart THEN its annotation is kept, and said so', () => {
    const object = live({
      spec: (s: any) => (s.template.metadata.annotations = { 'kubectl.kubernetes.io/restartedAt': '2026-12-02T10:00:00Z' }),
      managedFields: [{ manager: 'kubectl-rollout', operation: 'Update', fieldsV1: { 'f:spec': { 'f:template': { 'f:metadata': { 'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/restartedAt': {} } } } } } }],
    });
    const edits = findHandEdits(underGraph(object));
    // the annotations map itself ('.') is no field of the graph, but it holds a kept one: it stays
    expect(edits.map((e) => [e.field, e.writer, e.action])).toEqual([['spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]', 'kubectl-rollout', 'keep']]);
    expect(describeHandEdit(edits[0]!, { objectName: false })).toBe(
      'spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt] set by kubectl-rollout: kept (a restart asked for with kubectl rollout restart; removing it would restart the pod again)',
    );
  });

  it('GIVEN a field that another server-side apply manager shares with the graph (same value) THEN it is no hand edit', () => {
    const object = live({ managedFields: [{ manager: 'other', operation: 'Apply', fieldsV1: { 'f:spec': { 'f:replicas': {} } } }] });
    expect(findHandEdits(underGraph(object))).toEqual([]);
  });

  it("GIVEN an env item the rollback left that the graph no longer sets THEN it is removed as the rollback's", () => {
    const object = live({
      spec: (s: any) => s.template.spec.containers[0].env.push({ name: 'OLD', value: '1' }),
      managedFields: [{ manager: 'deploy-rollout', operation: 'Update', fieldsV1: { 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"node"}': { 'f:env': { 'k:{"name":"OLD"}': { '.': {}, 'f:name': {}, 'f:value': {} } } } } } } } } }],
    });
    expect(findHandEdits(underGraph(object)).map((e) => [e.field, e.writer, e.action])).toEqual([['spec.template.spec.containers[node].env[OLD]', "deploy's rollback (a template from before)", 'remove']]);
  });

  it("GIVEN the rollback set the image (and a probe's threshold) back to the previous template THEN no hand edit: the rollback's writes are deploy's, said once as the retry (issue 45)", () => {
    const object = live({
      spec: (s: any) => {
        s.template.spec.containers[0].image = 'reg/mail@sha256:previous';
        s.template.spec.hostUsers = true;
      },
      managedFields: [{ manager: 'deploy-rollout', operation: 'Update', fieldsV1: { 'f:spec': { 'f:template': { 'f:spec': { 'f:hostUsers': {}, 'f:containers': { 'k:{"name":"node"}': { 'f:image': {} } } } } } } }],
    });
    // an update moves a field it changes away from the graph's manager (server-side apply's rule)
    const deploy = (object as any).metadata.managedFields[0].fieldsV1['f:spec']['f:template']['f:spec'];
    delete deploy['f:hostUsers'];
    delete deploy['f:containers']['k:{"name":"node"}']['f:image'];
    const applied = structuredClone(graph) as any;
    applied.spec.template.spec.containers[0].image = 'reg/mail@sha256:failed';
    expect(findHandEdits([{ kind: 'Deployment', node: 'mail', object, graph, applied }])).toEqual([]);
    // the same values written by someone else are hand edits
    const byHand = structuredClone(object);
    byHand.metadata.managedFields.at(-1).manager = 'kubectl-edit';
    expect(findHandEdits([{ kind: 'Deployment', node: 'mail', object: byHand, graph, applied }]).map((e) => [e.field, e.writer])).toEqual([
      ['spec.template.spec.containers[node].image', 'kubectl-edit'],
      ['spec.template.spec.hostUsers', 'kubectl-edit'],
    ]);
  });

  it('GIVEN a typed object (a service account) patched by hand THEN the edit is named and left to tofu; a kubernetes.io/ annotation is kept', () => {
    const sa = {
      metadata: {
        name: 'node-mail',
        managedFields: <ManagedFieldsEntry[]>[
          { manager: 'HashiCorp', operation: 'Update', fieldsV1: { 'f:automountServiceAccountToken': {} } },
          { manager: 'kubectl-patch', operation: 'Update', fieldsV1: { 'f:automountServiceAccountToken': {}, 'f:metadata': { 'f:annotations': { 'f:example.kubernetes.io/x': {}, 'f:team': {} } } } },
        ],
      },
    };
    expect(findHandEdits([{ kind: 'ServiceAccount', node: 'mail', object: sa }]).map((e) => [e.field, e.action])).toEqual([
      ['metadata.annotations[example.kubernetes.io/x]', 'keep'],
      ['metadata.annotations[team]', 'set-back'],
    ]);
  });
});

describe('a typed object\'s field held by another writer with the applied value (seed 551635021 round 137)', () => {
  // the account as the state holds it (the provider's schema), and as the cluster has it after
  // automountServiceAccountToken was set to true by a merge patch, then to false by a server-side apply
  const applied = { automount_service_account_token: false, metadata: [{ name: 'node-mail', labels: { team: 'a' }, annotations: {} }] };
  const sa = (automount: boolean, team = 'a') => ({
    automountServiceAccountToken: automount,
    metadata: {
      name: 'node-mail',
      labels: { team },
      managedFields: <ManagedFieldsEntry[]>[
        { manager: 'HashiCorp', operation: 'Update', fieldsV1: { 'f:metadata': { 'f:labels': { '.': {} } } } },
        { manager: 'drift-198', operation: 'Apply', fieldsV1: { 'f:automountServiceAccountToken': {}, 'f:metadata': { 'f:labels': { 'f:team': {} } } } },
      ],
    },
  });
  const edits = (object: unknown) => findHandEdits([{ kind: 'ServiceAccount', node: 'mail', object: object as ManagedObject, applied }]).map((e) => [e.field, e.writer, e.action]);

  it('GIVEN the applied values again THEN no hand edit: tofu has nothing to set back, and the next plan may be verified', () => {
    expect(edits(sa(false))).toEqual([]);
  });

  it('GIVEN another value THEN named and set back, as before', () => {
    expect(edits(sa(true, 'b'))).toEqual([
      ['automountServiceAccountToken', 'drift-198', 'set-back'],
      ['metadata.labels[team]', 'drift-198', 'set-back'],
    ]);
  });

  it('GIVEN no state for the object THEN named, as before', () => {
    expect(findHandEdits([{ kind: 'ServiceAccount', node: 'mail', object: sa(false) }]).map((e) => e.field)).toEqual(['automountServiceAccountToken', 'metadata.labels[team]']);
  });

  it('finds an attribute by the provider schema\'s rule: snake_case, a block as a list of one, map keys as they are; never a list item', () => {
    const claim = { spec: [{ resources: [{ requests: { storage: '1Gi' } }], storage_class_name: 'local' }], metadata: [{ annotations: { 'a.example/x_y': 'v' } }] };
    expect(attributeAt(claim, ['f:spec', 'f:resources', 'f:requests', 'f:storage'])).toBe('1Gi');
    expect(attributeAt(claim, ['f:spec', 'f:storageClassName'])).toBe('local');
    expect(attributeAt(claim, ['f:metadata', 'f:annotations', 'f:a.example/x_y'])).toBe('v');
    expect(attributeAt(claim, ['f:spec', 'f:accessModes', 'v:"ReadWriteOnce"'])).toBeUndefined();
    expect(attributeAt(claim, ['f:spec', 'f:volumeName'])).toBeUndefined();
    expect(holdsAppliedAttribute({ object: { spec: { resources: { requests: { storage: '1Gi' } } } }, applied: claim }, ['f:spec', 'f:resources', 'f:requests', 'f:storage'])).toBe(true);
    expect(holdsAppliedAttribute({ object: { spec: { resources: { requests: { storage: '2Gi' } } } }, applied: claim }, ['f:spec', 'f:resources', 'f:requests', 'f:storage'])).toBe(false);
  });
});

describe('FieldsV1 paths', () => {
  it('lists each leaf and each node that holds "." ', () => {
    expect(ownedPaths({ 'f:a': { '.': {}, 'f:b': {} }, 'f:c': {} })).toEqual([['f:a'], ['f:a', 'f:b'], ['f:c']]);
  });
  it('says map keys in brackets and list items by their keys', () => {
    expect(readablePath(['f:spec', 'f:template', 'f:metadata', 'f:labels', 'f:ceo'])).toBe('spec.template.metadata.labels[ceo]');
    expect(readablePath(['f:spec', 'f:ports', 'k:{"containerPort":80,"protocol":"TCP"}', 'f:name'])).toBe('spec.ports[containerPort=80,protocol=TCP].name');
    expect(readablePath(['f:metadata', 'f:finalizers', 'v:"x"'])).toBe('metadata.finalizers[x]');
  });
});

describe('removalPatch', () => {
  it('tests the resourceVersion first, then removes the later items of a list first', () => {
    expect(removalPatch('41', ['/spec/a/2', '/spec/a/10', '/metadata/annotations/x', '/spec/a/2'])).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '41' },
      { op: 'remove', path: '/spec/a/10' },
      { op: 'remove', path: '/spec/a/2' },
      { op: 'remove', path: '/metadata/annotations/x' },
    ]);
  });
});

describe('undoHandEdits', () => {
  const edit = (pointer: string, node = 'mail') => ({ kind: 'Deployment', name: node, node, field: pointer, writer: 'kubectl-set', action: 'remove' as const, pointer, inTemplate: pointer.startsWith('/spec/template') });

  it('removes each Deployment\'s edits in one patch, and says which nodes need their pod waited for', async () => {
    const { undoHandEdits } = await import('../../../../src/workflow/drift/undo-hand-edits.js');
    const patches: [string, unknown][] = [];
    const lines: string[] = [];
    const out = await undoHandEdits(
      [edit('/spec/template/spec/tolerations'), edit('/metadata/annotations/x'), edit('/metadata/labels/y', 'web')],
      { patch: async (name, ops) => patches.push([name, ops]), read: async () => undefined, editsOf: () => [], objectOf: () => ({ metadata: { resourceVersion: '7' } }), appliedOf: () => undefined, observed: async () => undefined },
      (l) => lines.push(l),
    );
    expect(patches).toEqual([
      ['mail', [{ op: 'test', path: '/metadata/resourceVersion', value: '7' }, { op: 'remove', path: '/spec/template/spec/tolerations' }, { op: 'remove', path: '/metadata/annotations/x' }]],
      ['web', [{ op: 'test', path: '/metadata/resourceVersion', value: '7' }, { op: 'remove', path: '/metadata/labels/y' }]],
    ]);
    expect(out.specWritten).toEqual(['mail']);
    expect(lines[0]).toBe('mail: undid 2 hand edits of its Deployment (/spec/template/spec/tolerations by kubectl-set; /metadata/annotations/x by kubectl-set)');
  });

  it('GIVEN edits under spec (one set back, one added) and the state\'s applied manifest THEN the spec is written whole as applied, in the same patch as the removals outside it, the kept restart annotation carried over (issue 45)', async () => {
    const { undoHandEdits } = await import('../../../../src/workflow/drift/undo-hand-edits.js');
    const patches: [string, unknown][] = [];
    const applied = { spec: { replicas: 1, strategy: { type: 'Recreate' }, template: { metadata: { labels: { a: 'b' } }, spec: { serviceAccountName: 'node-mail' } } } };
    const live = { metadata: { name: 'mail', resourceVersion: '8' }, spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } }, template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': 't1', other: 'x' } } } } };
    const setBack = { kind: 'Deployment', name: 'mail', node: 'mail', field: 'spec.strategy.type', writer: 'kubectl-patch', action: 'set-back' as const, inTemplate: false };
    const account = { ...setBack, field: 'spec.template.spec.serviceAccountName', inTemplate: true };
    const out = await undoHandEdits(
      [setBack, account, edit('/spec/strategy/rollingUpdate'), edit('/metadata/annotations/x')],
      { patch: async (name, ops) => patches.push([name, ops]), read: async () => undefined, editsOf: () => [], objectOf: () => live, appliedOf: (name) => (name === 'mail' ? applied : undefined), observed: async () => undefined },
      () => {},
    );
    const written = { ...applied.spec, template: { ...applied.spec.template, metadata: { labels: { a: 'b' }, annotations: { 'kubectl.kubernetes.io/restartedAt': 't1' } } } };
    expect(patches).toEqual([
      ['mail', [{ op: 'test', path: '/metadata/resourceVersion', value: '8' }, { op: 'remove', path: '/metadata/annotations/x' }, { op: 'replace', path: '/spec', value: written }]],
    ]);
    // the applied manifest itself is not changed
    expect((applied.spec.template.metadata as any).annotations).toBeUndefined();
    // a spec written replaces or starts pods: its rollout step follows
    expect(out.specWritten).toEqual(['mail']);
    expect(out.removed).toHaveLength(4);
  });

  it('GIVEN a spec written whole that changes the replicas (kubectl scale, and a RollingUpdate strategy) THEN the replicas are written first, alone, and the spec once the controller observed them', async () => {
    const { undoHandEdits } = await import('../../../../src/workflow/drift/undo-hand-edits.js');
    const calls: string[] = [];
    const applied = { spec: { replicas: 1, strategy: { type: 'Recreate' } } };
    const live = { metadata: { name: 'mail', resourceVersion: '8' }, spec: { replicas: 2, strategy: { type: 'RollingUpdate' } } };
    const scaled = { kind: 'Deployment', name: 'mail', node: 'mail', field: 'spec.replicas', writer: 'kubectl (scale)', action: 'set-back' as const, inTemplate: false };
    const out = await undoHandEdits(
      [scaled, { ...scaled, field: 'spec.strategy.type', writer: 'kubectl-patch' }],
      {
        patch: async (_name, ops) => calls.push(`patch ${JSON.stringify(ops)}`),
        read: async () => undefined,
        editsOf: () => [],
        objectOf: () => live,
        appliedOf: () => applied,
        observed: async () => (calls.push('observed'), { metadata: { resourceVersion: '9' } }),
      },
      () => {},
    );
    expect(calls).toEqual([
      `patch ${JSON.stringify([{ op: 'test', path: '/metadata/resourceVersion', value: '8' }, { op: 'replace', path: '/spec/replicas', value: 1 }])}`,
      'observed',
      `patch ${JSON.stringify([{ op: 'test', path: '/metadata/resourceVersion', value: '9' }, { op: 'replace', path: '/spec', value: applied.spec }])}`,
    ]);
    // no template edit, but a spec written (the replicas start or stop pods): the rollout step follows
    expect(out.specWritten).toEqual(['mail']);
  });

  it('GIVEN only labels and annotations outside spec undone THEN no rollout step follows (no pod changes)', async () => {
    const { undoHandEdits } = await import('../../../../src/workflow/drift/undo-hand-edits.js');
    const out = await undoHandEdits(
      [edit('/metadata/annotations/x'), edit('/metadata/labels/y')],
      { patch: async () => undefined, read: async () => undefined, editsOf: () => [], objectOf: () => ({ metadata: { resourceVersion: '7' } }), appliedOf: () => undefined, observed: async () => undefined },
      () => {},
    );
    expect(out.removed).toHaveLength(2);
    expect(out.specWritten).toEqual([]);
  });

  it("GIVEN a label of the graph's changed and an annotation of the graph's removed on the Deployment THEN each map is written whole: the applied values again, the other entries kept (tofu takes a manifest's labels as computed: it would not)", async () => {
    const { ownershipPatch } = await import('../../../../src/workflow/drift/undo-hand-edits.js');
    const setBack = (field: string) => ({ kind: 'Deployment', name: 'mail', node: 'mail', field, writer: 'kubectl-replace', action: 'set-back' as const, inTemplate: false });
    const live = { metadata: { labels: { 'app.kubernetes.io/managed-by': 'someone', app: 'mail' }, annotations: { 'deployment.kubernetes.io/revision': '3' } } };
    const ops = ownershipPatch('5', [setBack('metadata.labels[app.kubernetes.io/managed-by]'), setBack('metadata.annotations[team]'), setBack('metadata.labels[gone]')], undefined, { labels: { 'app.kubernetes.io/managed-by': 'deploy' }, annotations: { team: 'ops' } }, live);
    expect(ops).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '5' },
      { op: 'add', path: '/metadata/labels', value: { 'app.kubernetes.io/managed-by': 'deploy', app: 'mail' } },
      { op: 'add', path: '/metadata/annotations', value: { 'deployment.kubernetes.io/revision': '3', team: 'ops' } },
    ]);
  });

  it('GIVEN the labels map removed whole by another writer (seed 526597302 round 166) and a label another writer added THEN the map is made again with the applied labels, without the added one', async () => {
    const { ownershipPatch } = await import('../../../../src/workflow/drift/undo-hand-edits.js');
    const edit = (field: string, action: 'set-back' | 'remove') => ({ kind: 'Deployment', name: 'mail', node: 'mail', field, writer: 'removed by a write that left no field manager', action, inTemplate: false, ...(action === 'remove' ? { pointer: '/metadata/annotations/x' } : {}) });
    const ops = ownershipPatch('5', [edit('metadata.labels[app]', 'set-back'), edit('metadata.labels[group]', 'set-back'), edit('metadata.annotations[x]', 'remove')], undefined, { labels: { app: 'mail', group: 'g' } }, { metadata: { annotations: { x: '1', kept: 'k' } } });
    expect(ops).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '5' },
      { op: 'add', path: '/metadata/labels', value: { app: 'mail', group: 'g' } },
      { op: 'add', path: '/metadata/annotations', value: { kept: 'k' } },
    ]);
  });

  it("GIVEN another writer's server-side apply that claimed a field under spec without changing it (the mirrored serviceAccount, seed 575839611 round 68) THEN the spec is written whole and no claim is left under spec but the graph's and the cluster's", async () => {
    const { ownershipPatch } = await import('../../../../src/workflow/drift/undo-hand-edits.js');
    // GIVEN drift-496 claims spec.template.spec.serviceAccount (and a label outside spec), the
    // rollback its template's containers (seed 575839611 round 149: the rollback's claim of the
    // mirrored serviceAccount, the same way), the controller its own fields
    const claim: ManagedFieldsEntry = { manager: 'drift-496', operation: 'Apply', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:team': {} } }, 'f:spec': { 'f:template': { 'f:spec': { 'f:serviceAccount': {} } } } } };
    const onlySpec: ManagedFieldsEntry = { manager: 'kubectl-patch', operation: 'Update', fieldsV1: { 'f:spec': { 'f:minReadySeconds': {} } } };
    const rollback: ManagedFieldsEntry = { manager: 'deploy-rollout', operation: 'Update', fieldsV1: { 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': {} } } } } };
    const object = live({ spec: (spec: any) => { spec.template.spec.serviceAccount = 'node-mail'; spec.minReadySeconds = 0; }, managedFields: [claim, onlySpec, rollback] });
    const named = findHandEdits(underGraph(object));
    expect(named.map((e) => e.field)).toContain('spec.template.spec.serviceAccount');
    // WHEN the step writes it
    const ops = ownershipPatch('41', named, graph.spec, graph.metadata, object);
    // THEN the spec whole, then managedFields without drift-496's claim under spec (its label
    // kept), without kubectl-patch's entry and the rollback's (an older template's; nothing
    // left of them); deploy's and the controller's entries as they were
    expect(ops.slice(-2)).toEqual([
      { op: 'replace', path: '/spec', value: graph.spec },
      { op: 'replace', path: '/metadata/managedFields', value: [object.metadata.managedFields[0], controller, revision, { ...claim, fieldsV1: { 'f:metadata': { 'f:labels': { 'f:team': {} } } } }] },
    ]);
    // AND read again as written, nothing is named any more
    const after = structuredClone(object);
    after.metadata.managedFields = ops.at(-1)!.op === 'replace' ? (ops.at(-1) as { value: ManagedFieldsEntry[] }).value : [];
    expect(findHandEdits(underGraph(after)).filter((e) => e.field.startsWith('spec.'))).toEqual([]);
  });

  it('GIVEN no other writer claims anything under spec THEN managedFields are not written', async () => {
    const { ownershipPatch } = await import('../../../../src/workflow/drift/undo-hand-edits.js');
    const { withoutOtherClaimsInSpec } = await import('../../../../src/workflow/drift/hand-edits.js');
    const object = live({ managedFields: [{ manager: 'kubectl-label', operation: 'Update', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:x': {} } } } }] });
    expect(withoutOtherClaimsInSpec(object.metadata.managedFields)).toBeUndefined();
    expect(withoutOtherClaimsInSpec(undefined)).toBeUndefined();
    const removal = { kind: 'Deployment', name: 'mail', node: 'mail', field: 'spec.minReadySeconds', writer: 'removed by a write that left no field manager', action: 'set-back' as const, inTemplate: false };
    expect(ownershipPatch('41', [removal], graph.spec, graph.metadata, object).map((o) => o.path)).toEqual(['/metadata/resourceVersion', '/spec']);
  });

  it('GIVEN the Deployment written in between (the test of its resourceVersion fails) THEN it reads it again and removes what is there now', async () => {
    const { undoHandEdits } = await import('../../../../src/workflow/drift/undo-hand-edits.js');
    const versions: unknown[] = [];
    let calls = 0;
    await undoHandEdits(
      [edit('/metadata/annotations/x')],
      {
        patch: async (_name, ops) => {
          versions.push((ops[0] as { value: unknown }).value);
          if (++calls === 1) throw Object.assign(new Error('HTTP 422'), { code: 422 });
        },
        read: async () => ({ metadata: { name: 'mail', resourceVersion: '9' } }),
        editsOf: () => [edit('/metadata/annotations/x'), edit('/metadata/annotations/z')],
        objectOf: () => ({ metadata: { resourceVersion: '7' } }),
        appliedOf: () => undefined,
        observed: async () => undefined,
      },
      () => {},
    );
    expect(versions).toEqual(['7', '9']);
  });

  it('GIVEN the replicas written first and then the spec refused (the controller moved the object) and nothing left when read again THEN the replicas edit is undone, said, and the node waits for its pods (seed 583964702 round 9)', async () => {
    const { undoHandEdits } = await import('../../../../src/workflow/drift/undo-hand-edits.js');
    // GIVEN web scaled to 7 by another writer's server-side apply
    const claim: ManagedFieldsEntry = { manager: 'drift-965', operation: 'Apply', fieldsV1: { 'f:spec': { 'f:replicas': {} } } };
    const object = live({ spec: (spec: any) => (spec.replicas = 7), managedFields: [claim] });
    const named = findHandEdits(underGraph(object));
    expect(named.map((e) => e.field)).toEqual(['spec.replicas']);
    const patches: string[][] = [];
    const said: string[] = [];
    // WHEN the replicas' write goes through, the spec's is refused (its resourceVersion moved), and read again nothing is left to undo
    const out = await undoHandEdits(
      named,
      {
        patch: async (_name, ops) => {
          patches.push(ops.map((o) => o.path));
          if (patches.length === 2) throw Object.assign(new Error('HTTP 422'), { code: 422 });
        },
        read: async () => ({ metadata: { name: 'mail', resourceVersion: '9' } }),
        editsOf: () => [],
        objectOf: () => object,
        appliedOf: () => graph,
        observed: async () => ({ metadata: { name: 'mail', resourceVersion: '8' } }),
      },
      (line) => said.push(line),
    );
    // THEN the replicas were written, the edit counts as undone, the node's rollout step waits
    expect(patches[0]).toEqual(['/metadata/resourceVersion', '/spec/replicas']);
    expect(out.removed.map((e) => e.field)).toEqual(['spec.replicas']);
    expect(out.specWritten).toEqual(['mail']);
    expect(said).toEqual(['mail: undid 1 hand edit of its Deployment (spec.replicas by drift-965)']);
  });

  it('GIVEN the object itself refused (a 422 that names a field, as captured from the API server) THEN no retry: it fails at the first answer', async () => {
    const { undoHandEdits } = await import('../../../../src/workflow/drift/undo-hand-edits.js');
    const { readFileSync } = await import('node:fs');
    const captured = JSON.parse(readFileSync(new URL('../../../fixtures/api-answers/invalid.json', import.meta.url), 'utf8'));
    let calls = 0;
    await expect(
      undoHandEdits(
        [edit('/metadata/annotations/x')],
        {
          patch: async () => {
            calls++;
            throw Object.assign(new Error('HTTP 422'), { code: captured.status, body: captured.body });
          },
          read: async () => ({ metadata: { resourceVersion: '9' } }),
          editsOf: () => [edit('/metadata/annotations/x')],
          objectOf: () => ({ metadata: { resourceVersion: '7' } }),
          appliedOf: () => undefined,
          observed: async () => undefined,
        },
        () => {},
      ),
    ).rejects.toThrow('HTTP 422');
    expect(calls).toBe(1);
  });

  it('GIVEN the API server refusing three times THEN it fails (the apply stops before tofu)', async () => {
    const { undoHandEdits } = await import('../../../../src/workflow/drift/undo-hand-edits.js');
    await expect(
      undoHandEdits(
        [edit('/metadata/annotations/x')],
        { patch: async () => Promise.reject(Object.assign(new Error('HTTP 422'), { code: 422 })), read: async () => ({ metadata: { resourceVersion: '9' } }), editsOf: () => [edit('/metadata/annotations/x')], objectOf: () => ({ metadata: { resourceVersion: '7' } }), appliedOf: () => undefined, observed: async () => undefined },
        () => {},
      ),
    ).rejects.toThrow('HTTP 422');
  });
});
