import { describe, expect, it } from 'vitest';
import { buildTargets, loadCoordinates, parseGroupPlan } from '../../../../src/config/load.js';
import type { PlannedChange } from '../../../../src/contract/graph/planned-change.js';
import { formatTargetSummary, summarizePlan } from '../../../../src/workflow/summary/plan-summary.js';
import { samplePlan, spirePlan } from '../../../support/cli.js';

const [all] = buildTargets(parseGroupPlan(JSON.stringify(samplePlan()), '/p/g.json'), loadCoordinates({}, { K8S_REGISTRY: 'reg' }, process.cwd()), '/p/g.json', ['all']);
const change = (name: string, actions: string[], actionReason?: string): PlannedChange => ({
  address: `${name.includes('push') || name.includes('rollout') ? 'null_resource' : 'kubernetes_manifest'}.${name}`,
  name,
  actions,
  actionReason,
});

describe('summarizePlan', () => {
  it('GIVEN the service account changed by hand (automountServiceAccountToken) THEN the node says its service account is set back, not "no change" under a "changes" header (issue 30)', () => {
    const s = summarizePlan(all!, [{ ...change('node-alpha_account_0A1B2C3D', ['update']), address: 'kubernetes_service_account_v1.node-alpha_account_0A1B2C3D' }], true);
    const alpha = s.nodes.find((n) => n.node === 'alpha')!;
    expect(alpha.account).toBe('update');
    expect(alpha.words).toBe('set its service account back to the graph (someone else changed it)');
    expect(formatTargetSummary(s)).toContain('  alpha: set its service account back to the graph');
  });

  it('GIVEN hand edits of a node THEN each is on a line of its own under the node, and the node line says what is undone', () => {
    const edits = [
      { kind: 'Deployment', name: 'alpha', node: 'alpha', field: 'metadata.annotations[x]', writer: 'kubectl-annotate', action: 'remove' as const, pointer: '/metadata/annotations/x', inTemplate: false },
      { kind: 'Deployment', name: 'alpha', node: 'alpha', field: 'spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]', writer: 'kubectl-rollout', action: 'keep' as const, why: 'a restart', inTemplate: true },
    ];
    const s = summarizePlan(all!, [], false, undefined, { handEdits: edits });
    // a removal is a change even when tofu has none
    expect(s.changes).toBe(true);
    const alpha = s.nodes.find((n) => n.node === 'alpha')!;
    expect(alpha.words).toBe('undo 1 hand edit (metadata.annotations[x] by kubectl-annotate)');
    expect(formatTargetSummary(s).split('\n').slice(1, 4)).toEqual([
      '  alpha: undo 1 hand edit (metadata.annotations[x] by kubectl-annotate)',
      '    hand edit: metadata.annotations[x] set by kubectl-annotate: apply removes it',
      '    hand edit: spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt] set by kubectl-rollout: kept (a restart)',
    ]);
  });

  it('GIVEN only an edit that is set back (kubectl scale) and no change of tofu\'s THEN it is a change: the ownership step writes it back before tofu plans, and the apply records its verified plan', () => {
    const scaled = { kind: 'Deployment', name: 'alpha', node: 'alpha', field: 'spec.replicas', writer: 'kubectl (scale)', action: 'set-back' as const, inTemplate: false };
    expect(summarizePlan(all!, [], false, undefined, { handEdits: [scaled] }).changes).toBe(true);
    expect(summarizePlan(all!, [], false, undefined, { handEdits: [{ ...scaled, action: 'keep' as const }] }).changes).toBe(false);
  });

  it('GIVEN a new tag THEN the node is pushed, its Deployment updated and its pod replaced', () => {
    const s = summarizePlan(all!, [
      change('image-alpha_push_832904CE', ['delete', 'create']),
      change('node-alpha_deployment_A2CE01B5', ['update']),
      change('node-alpha_rollout_D3D4E6A2', ['delete', 'create'], 'replace_by_triggers'),
    ], true);
    const alpha = s.nodes.find((n) => n.node === 'alpha')!;
    expect(alpha).toMatchObject({ push: 'replace', deployment: 'update', rollout: 'replace', removed: false, retryAfterRollback: false });
    expect(alpha.words).toBe('push reg/fediversity/alpha:a1; update its Deployment; replace its pod and wait for it to be ready');
    expect(s.nodes.find((n) => n.node === 'beta')!.words).toBe('no change');
  });

  it('GIVEN a Deployment update whose pod template changes THEN the pod is replaced and the plan names the cause; without a template change the pod is kept and only checked (issue 50)', () => {
    const s = summarizePlan(all!, [
      { ...change('node-alpha_deployment_A2CE01B5', ['update']), templateChanges: [{ path: 'spec.terminationGracePeriodSeconds', before: 30, after: 60 }] },
      change('node-alpha_rollout_D3D4E6A2', ['delete', 'create'], 'replace_by_triggers'),
      { ...change('node-beta_deployment_A2CE01B5', ['update']), templateChanges: [] },
      change('node-beta_rollout_D3D4E6A2', ['delete', 'create'], 'replace_by_triggers'),
    ], true);
    const [alpha, beta] = ['alpha', 'beta'].map((n) => s.nodes.find((x) => x.node === n)!);
    expect(alpha!.pod).toEqual({ kind: 'replaced', causes: ['the stop timeout (--stop-timeout) changes from 30s to 1m'] });
    expect(alpha!.words).toBe('update its Deployment; replace its pod (the stop timeout (--stop-timeout) changes from 30s to 1m) and wait for it to be ready');
    expect(beta!.pod).toEqual({ kind: 'kept' });
    expect(beta!.words).toBe('update its Deployment; keep its pod (its pod template does not change): the rollout step only checks that it is ready');
  });

  it('GIVEN a rollout step run again on a Deployment that does not change (a later wave after a failed one) THEN the pod is kept, not "replaced"', () => {
    const s = summarizePlan(all!, [change('node-alpha_rollout_D3D4E6A2', ['delete', 'create'], 'replace_by_triggers')], true);
    expect(s.nodes.find((x) => x.node === 'alpha')!.words).toBe('keep its pod (its pod template does not change): the rollout step only checks that it is ready');
  });

  it('GIVEN a state from before the digest record (FR-003) THEN the record alone is said, not "no change" under a "changes" header; with a push it is not said', () => {
    const s = summarizePlan(all!, [
      { ...change('image-alpha_pushed-digest_11111111', ['create']), address: 'terraform_data.image-alpha_pushed-digest_11111111' },
      { ...change('image-beta_pushed-digest_22222222', ['create']), address: 'terraform_data.image-beta_pushed-digest_22222222' },
      change('image-beta_push_832904CE', ['delete', 'create']),
    ], true);
    const alpha = s.nodes.find((n) => n.node === 'alpha')!;
    expect(alpha.recordsDigest).toBe(true);
    expect(alpha.words).toBe('record in the state the digest its Deployment runs (FR-003: a state from before that record; nothing changes in the cluster, and its pod is not touched)');
    const beta = s.nodes.find((n) => n.node === 'beta')!;
    expect(beta.recordsDigest).toBeUndefined();
    expect(beta.words).toBe('push reg/fediversity/beta:b1');
    expect(s.nodes.find((n) => n.node === 'gamma')!.words).toBe('no change');
  });

  it('GIVEN a tainted rollout step (a rollback happened) THEN it says so in words', () => {
    const s = summarizePlan(all!, [
      change('node-beta_deployment_9F587E17', ['update']),
      change('node-beta_rollout_00A985DF', ['delete', 'create'], 'replace_because_tainted'),
    ], true);
    const beta = s.nodes.find((n) => n.node === 'beta')!;
    expect(beta.retryAfterRollback).toBe(true);
    expect(beta.words).toContain('try the rollout again: the last rollout failed, so the state holds the image that failed while the cluster runs the previous one');
    // the rollback's template is set back: the pod is replaced, said once
    expect(beta.words).toContain('; replace its pod (its Deployment runs the previous template since the rollback) and wait for it to be ready');
  });

  it('GIVEN a tainted rollout step whose Deployment changes too (tofu then says replace_by_triggers) THEN it is still the retry after a rollback', () => {
    const s = summarizePlan(all!, [
      change('node-beta_deployment_9F587E17', ['update']),
      { ...change('node-beta_rollout_00A985DF', ['delete', 'create'], 'replace_by_triggers'), wasTainted: true, changedKeys: [] },
    ], true);
    expect(s.nodes.find((n) => n.node === 'beta')!.retryAfterRollback).toBe(true);
  });

  it('GIVEN a Deployment gone from the cluster (drift) THEN it is made again and its pod waited for (SC-001)', () => {
    const s = summarizePlan(all!, [
      change('node-alpha_deployment_A2CE01B5', ['create']),
      { ...change('node-alpha_rollout_D3D4E6A2', ['delete', 'create'], 'replace_by_triggers'), changedKeys: [] },
    ], true);
    const alpha = s.nodes.find((n) => n.node === 'alpha')!;
    expect(alpha).toMatchObject({ deployment: 'create', rollout: 'replace', rolloutForDrift: true, retryAfterRollback: false });
    expect(alpha.words).toBe('create its Deployment (it is gone from the cluster); wait for its pod');
  });

  it('GIVEN a Deployment changed behind the graph and the rollout step following it THEN it is set back and its pod waited for', () => {
    const s = summarizePlan(all!, [
      change('node-gamma_deployment_9F587E17', ['update']),
      { ...change('node-gamma_rollout_00A985DF', ['delete', 'create'], 'replace_by_triggers'), changedKeys: [] },
    ], true);
    expect(s.nodes.find((n) => n.node === 'gamma')!.words).toBe('set its Deployment back to the graph (someone else changed it, e.g. a rollback); wait for its pod');
  });

  it('GIVEN a new image (the rollout trigger "image" changes) THEN it is no drift', () => {
    const s = summarizePlan(all!, [
      change('image-alpha_push_832904CE', ['delete', 'create']),
      change('node-alpha_deployment_A2CE01B5', ['update']),
      { ...change('node-alpha_rollout_D3D4E6A2', ['delete', 'create'], 'replace_by_triggers'), changedKeys: ['image'] },
    ], true);
    expect(s.nodes.find((n) => n.node === 'alpha')!.words).toBe('push reg/fediversity/alpha:a1; update its Deployment; replace its pod and wait for it to be ready');
  });

  it('GIVEN a tag gone from the registry THEN the push is said to happen again, and the pod only if the digest differs', () => {
    const s = summarizePlan(all!, [
      change('image-alpha_push_832904CE', ['delete', 'create'], 'replace_by_request'),
      change('node-alpha_deployment_A2CE01B5', ['update']),
      { ...change('node-alpha_rollout_D3D4E6A2', ['delete', 'create'], 'replace_by_triggers'), changedKeys: ['image'] },
    ], true, undefined, { pushedAgain: new Set(['alpha']) });
    const alpha = s.nodes.find((n) => n.node === 'alpha')!;
    expect(alpha.tagGone).toBe(true);
    expect(alpha.words).toBe('push reg/fediversity/alpha:a1 again (the registry no longer has it); its pod is replaced only if the image pushed has another digest than the one it runs');
  });

  it('GIVEN a Deployment changed behind the graph THEN it says it is set back', () => {
    const s = summarizePlan(all!, [change('node-gamma_deployment_9F587E17', ['update'])], true);
    expect(s.nodes.find((n) => n.node === 'gamma')!.words).toContain('set its Deployment back to the graph');
  });

  it('GIVEN a node gone from the group THEN it is reported as removed, claim included', () => {
    const s = summarizePlan(all!, [
      change('node-old_deployment_11111111', ['delete']),
      change('node-old_state_22222222', ['delete']),
    ], true);
    const old = s.nodes.find((n) => n.node === 'old')!;
    expect(old.removed).toBe(true);
    expect(old.words).toContain('removed from the target');
  });

  it('GIVEN a claim grown in place THEN it says so; GIVEN a claim made again THEN the Deployment is replaced with it', () => {
    const claimUpdate = (changedAttributes?: string[]) => summarizePlan(all!, [{ address: 'kubernetes_persistent_volume_claim_v1.node-alpha_state_26D7464E', name: 'node-alpha_state_26D7464E', actions: ['update'], actionReason: undefined, ...(changedAttributes ? { changedAttributes } : {}) }], true).nodes.find((n) => n.node === 'alpha')!.words;
    expect(claimUpdate(['spec[0].resources[0].requests.storage'])).toBe('grow its /var/lib claim in place (the StorageClass must allow volume expansion; its provisioner resizes the volume)');
    // a metadata edit is never said to be a size change (issue 45)
    expect(claimUpdate(['metadata[0].annotations.team'])).toBe("set its /var/lib claim's metadata[0].annotations.team back to the graph (someone else changed it; the data stays)");
    expect(claimUpdate()).toBe('update its /var/lib claim in place');
    const again = summarizePlan(all!, [
      { address: 'kubernetes_persistent_volume_claim_v1.node-alpha_state_26D7464E', name: 'node-alpha_state_26D7464E', actions: ['delete', 'create'], actionReason: 'replace_because_cannot_update', replacePaths: ['spec[0].storage_class_name'] },
      change('node-alpha_deployment_A2CE01B5', ['delete', 'create'], 'replace_by_triggers'),
      change('node-alpha_rollout_D3D4E6A2', ['delete', 'create'], 'replace_by_triggers'),
    ], true);
    expect(again.nodes.find((n) => n.node === 'alpha')!.words).toBe('replace its Deployment (its pod stops first); REPLACE its /var/lib claim (the data on it is lost); replace its pod and wait for it to be ready');
  });

  it('lists the degrade notes and other resources in the text form', () => {
    const s = summarizePlan(all!, [{ address: 'kubernetes_namespace_v1.namespace', name: 'namespace', actions: ['create'], actionReason: undefined }], true);
    const text = formatTargetSummary(s);
    expect(text).toContain('target all (namespace fediversity, state g1-all): changes');
    expect(text).toContain('  namespace: create');
    expect(text).not.toContain('kubernetes_namespace_v1');
    expect(text).toContain('not honoured by the k8s method:');
    expect(text).toContain('beta: /etc/keys is not under /var/lib');
  });
});

describe('summarizePlan of a destroy', () => {
  it('reports every node as removed, claim included', () => {
    const s = summarizePlan(all!, [
      change('node-alpha_deployment_A2CE01B5', ['delete']),
      change('node-alpha_state_26D7464E', ['delete']),
      change('image-alpha_push_832904CE', ['delete']),
    ], true);
    expect(s.nodes.find((n) => n.node === 'alpha')!).toMatchObject({ removed: true, words: expect.stringContaining('removed from the target') });
  });
});

describe('summarizePlan with SPIRE', () => {
  const HOST_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHnU1vq8oTjWkDmmXG0vWq4m7Kq8lYk3dQ2dN3bq7c0X';
  const coords = loadCoordinates({}, {
    K8S_REGISTRY: 'reg',
    K8S_SPIRE_NODE: 'spire.example.org',
    SSH_USER: 'deploy',
    SSH_PRIVATE_KEY_FILE: '/k',
    SSH_NODES: JSON.stringify({ 'spire.example.org': { hostKey: HOST_KEY } }),
  }, process.cwd());
  const [model] = buildTargets(parseGroupPlan(JSON.stringify(spirePlan()), '/p/g.json'), coords, '/p/g.json', ['all']);
  const spireChange = (type: string, name: string, actions: string[], changedKeys: string[], actionReason?: string): PlannedChange => ({
    address: `${type}.${name}`,
    name,
    actions,
    actionReason,
    changedKeys,
  });

  it('GIVEN the spire node made again THEN it says the hand-off is replaced because its machine ID changed', () => {
    const s = summarizePlan(model!, [spireChange('null_resource', 'spire_handoff_D9870845', ['delete', 'create'], ['spire_machine_id'], 'replace_by_triggers')], true);
    expect(s.spire).toEqual(['hand off again to spire.example.org (kubeconfig and names): the machine ID of spire.example.org changed (it was made again)']);
    // --json readers find it among the resources outside the nodes
    expect(s.other).toEqual([{ address: 'null_resource.spire_handoff_D9870845', change: 'replace' }]);
    const text = formatTargetSummary(s);
    expect(text).toContain('  spire: hand off again to spire.example.org');
    expect(text).not.toContain('null_resource.spire_handoff');
  });

  it('GIVEN a CA rotation THEN it says the ConfigMap bundle changed, and no node restarts', () => {
    const s = summarizePlan(model!, [spireChange('kubernetes_config_map_v1', 'spire_agent-config-map_7E6B42E0', ['update'], ['bundle.crt'])], true);
    expect(s.spire).toEqual(["update the ConfigMap spire-agent: the trust bundle changed (the SPIRE server's CA rotated); the pods see it in place, without a restart"]);
    expect(s.nodes.every((n) => n.words === 'no change')).toBe(true);
  });

  it('GIVEN a first deploy and a destroy THEN it says what the hand-off does', () => {
    const first = summarizePlan(model!, [spireChange('null_resource', 'spire_handoff_D9870845', ['create'], [])], true);
    expect(first.spire[0]).toBe('hand spire.example.org the kubeconfig of spire-server and the names of 4 nodes, before the Deployments');
    const gone = summarizePlan(model!, [spireChange('null_resource', 'spire_handoff_D9870845', ['delete'], [])], true);
    expect(gone.spire[0]).toBe('retire the names of the namespace and remove its kubeconfig on the spire node');
  });

  it('GIVEN no SPIRE change THEN there are no SPIRE words', () => {
    expect(summarizePlan(all!, [], false).spire).toEqual([]);
  });
});

describe('summarizePlan and a moved tag (FR-003)', () => {
  const moved = new Map([['alpha', { recorded: `sha256:${'a'.repeat(64)}`, current: `sha256:${'b'.repeat(64)}` }]]);

  it('GIVEN a tag moved behind deploy\'s back THEN the plan names the node and both digests, and changes nothing', () => {
    const s = summarizePlan(all!, [], false, undefined, { movedTags: moved });
    const alpha = s.nodes.find((n) => n.node === 'alpha')!;
    expect(alpha.tagMoved).toEqual(moved.get('alpha'));
    expect(alpha.words).toBe(
      `its tag reg/fediversity/alpha:a1 was moved in the registry (not by deploy): it points at sha256:${'b'.repeat(64)}; the Deployment keeps sha256:${'a'.repeat(64)}, the digest deploy pushed, and nothing follows the tag (FR-003); to run the other image, give the node a new tag`,
    );
    expect(formatTargetSummary(s).split('\n')[0]).toContain(': no changes');
    expect(s.nodes.find((n) => n.node === 'beta')!.tagMoved).toBeUndefined();
  });

  it('GIVEN the push of that node is planned (its digest is read after it) THEN no moved tag is said', () => {
    const s = summarizePlan(all!, [change('image-alpha_push_832904CE', ['delete', 'create'])], true, undefined, { movedTags: moved });
    expect(s.nodes.find((n) => n.node === 'alpha')!.tagMoved).toBeUndefined();
  });

  it('GIVEN no change of tofu\'s but a claim at risk THEN the headline does not say "no changes" alone', () => {
    const s = summarizePlan(all!, [], false);
    const risky = { ...s, claimLosses: [{ node: 'alpha', claim: 'alpha-state', cause: 'at-risk' as const, forcedBy: [], allowed: false } as any] };
    expect(formatTargetSummary(risky).split('\n')[0]).toMatch(/: no changes planned; a \/var\/lib claim is at risk \(below\)$/);
    expect(formatTargetSummary(s).split('\n')[0]).toMatch(/: no changes$/);
  });
});

describe('the plan says the soak and --on-failure group, per node and wave', () => {
  const model = (env: NodeJS.ProcessEnv) => buildTargets(parseGroupPlan(JSON.stringify(samplePlan()), '/p/g.json'), loadCoordinates({}, { K8S_REGISTRY: 'reg', DEPLOY_MAX_UNAVAILABLE: '2', ...env }, process.cwd()), '/p/g.json', ['all'])[0]!;
  // every node's Deployment updated, its pod replaced; waves: alpha beta | delta gamma
  const planned = ['alpha', 'beta', 'delta', 'gamma'].flatMap((n) => [change(`node-${n}_deployment_0A1B2C3D`, ['update']), change(`node-${n}_rollout_0A1B2C3D`, ['delete', 'create'])]);

  it('GIVEN --soak 40s and --on-failure group THEN each changing node says its soak (the next wave, or its rollout in the last) and the group rollback; --json has the fields', () => {
    const s = summarizePlan(model({ DEPLOY_SOAK: '40s', DEPLOY_ON_FAILURE: 'group' }), planned, true);
    const of = (n: string) => s.nodes.find((x) => x.node === n)!;
    expect(of('alpha').words).toMatch(/; in wave 1 of 2 \(at most 2 nodes down at once\); then watched for 40s \(soak: it must stay running\) before the next wave starts; set back to its previous image if a rollout of this run fails \(--on-failure group\)$/);
    expect(of('gamma').words).toMatch(/; in wave 2 of 2 .*; then watched for 40s \(soak: it must stay running\) before its rollout counts; set back/);
    expect([of('alpha').soakSeconds, of('alpha').setBackWithGroup, s.soakSeconds, s.onFailure]).toEqual([40, true, 40, 'group']);
    expect(formatTargetSummary(s).split('\n').slice(1, 3)).toEqual([
      '  soak: every node whose pod changes must stay running 40s once Ready before its wave counts; a fall is rolled back and holds the later waves',
      '  on a failed rollout: every node this run changed is set back too, the last wave first (--on-failure group)',
    ]);
  });

  it('GIVEN neither THEN the words and the document are as before', () => {
    const s = summarizePlan(model({}), planned, true);
    const alpha = s.nodes.find((x) => x.node === 'alpha')!;
    expect(alpha.words).not.toMatch(/soak|group/);
    expect(['soakSeconds' in alpha, 'setBackWithGroup' in alpha, 'soakSeconds' in s, 'onFailure' in s]).toEqual([false, false, false, false]);
  });

  it('GIVEN a node whose pod does not change THEN it says no soak', () => {
    const s = summarizePlan(model({ DEPLOY_SOAK: '40s' }), planned.filter((c) => !c.name.includes('beta')), true);
    expect(s.nodes.find((x) => x.node === 'beta')!.words).toBe('no change');
  });
});

