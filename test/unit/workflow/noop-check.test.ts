/**
 * The pure parts of the verified no-op check: what an object's fingerprint leaves out (only what
 * the cluster writes), what counts as a difference, when the check is off, and that an apply
 * with a foreign writer keeps no record. The check itself runs against the real cluster,
 * backend and registry in test/e2e (deploy-us1, deploy-drift, deploy-moved-tag).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TargetModel } from '../../../src/config/target-model.js';
import type { NoopCheckContext } from '../../../src/workflow/noop/check-context.js';
import { changedBehindTheApply, compare } from '../../../src/workflow/noop/compare.js';
import { graphFingerprint, objectFingerprint, providerSettings, type TargetFingerprint } from '../../../src/workflow/noop/fingerprint.js';
import { forgetNoop, recordNoop } from '../../../src/workflow/noop/record.js';
import { whyNoFastPlan } from '../../../src/workflow/noop/fast-plan-switch.js';
import { checkNoop, oneLine } from '../../../src/workflow/noop/verdict.js';

const deployment = (over: Record<string, unknown> = {}, annotations: Record<string, string> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', uid: 'u1', generation: 2, resourceVersion: '100', managedFields: [{ manager: 'deploy' }], annotations: { 'deploy.fediversity/owner': 'x', ...annotations } },
  spec: { replicas: 1, template: { spec: { containers: [{ image: 'r/web@sha256:1' }] } } },
  status: { readyReplicas: 1 },
  ...over,
});

describe('objectFingerprint', () => {
  it('ignores what only the cluster writes: resourceVersion, managedFields, status, the revision and last-rollout annotations, key order', () => {
    const base = objectFingerprint(deployment());
    const moved = deployment({ status: { readyReplicas: 0 } }, { 'deployment.kubernetes.io/revision': '7', 'deploy.fediversity/last-rollout': '{}' });
    moved.metadata.resourceVersion = '200';
    moved.metadata.managedFields = [{ manager: 'kube-controller-manager' }];
    expect(objectFingerprint(moved)).toBe(base);
    const { spec, ...rest } = deployment();
    expect(objectFingerprint({ spec, ...rest })).toBe(base);
  });

  it('sees a field changed by anyone, an annotation added, and an object made again (another uid)', () => {
    const base = objectFingerprint(deployment());
    expect(objectFingerprint(deployment({ spec: { replicas: 0 } }))).not.toBe(base);
    expect(objectFingerprint(deployment({}, { 'kubectl.kubernetes.io/restartedAt': 'now' }))).not.toBe(base);
    const again = deployment();
    again.metadata.uid = 'u2';
    expect(objectFingerprint(again)).not.toBe(base);
  });
});

describe('compare', () => {
  const graph = { rest: 'r', resources: { 'null_resource.image-web_push_1A2B3C4D': 'p1', 'kubernetes_manifest.node-web_deployment_1A2B3C4E': 'd1', 'data.external.image-web_digest_1A2B3C4F': 'x1', 'kubernetes_network_policy_v1.network-policy': 'n1' } };
  const fingerprint: TargetFingerprint = { inputs: 'i', graph, lineage: 'l', serial: 3, objects: { 'Deployment/web': 'a', 'Namespace/ns': 'b', 'PersistentVolumeClaim/web-state': 'c' }, foreignWriters: [] };
  it('finds nothing between equal prints', () => {
    expect(compare(fingerprint, { ...fingerprint, objects: { 'Namespace/ns': 'b', 'PersistentVolumeClaim/web-state': 'c', 'Deployment/web': 'a' } })).toEqual({ kind: 'same' });
  });
  it('names the first difference outside the nodes', () => {
    const reason = (now: TargetFingerprint) => {
      const d = compare(fingerprint, now);
      return d.kind === 'differs' ? d.reason : d.kind;
    };
    expect(reason({ ...fingerprint, inputs: 'j' })).toMatch(/tofu, its providers/);
    expect(reason({ ...fingerprint, graph: { ...graph, rest: 's' } })).toMatch(/graph changed outside the nodes/);
    expect(reason({ ...fingerprint, graph: { ...graph, resources: { ...graph.resources, 'kubernetes_network_policy_v1.network-policy': 'n2' } } })).toBe('the graph changed outside the nodes (NetworkPolicy)');
    expect(reason({ ...fingerprint, serial: 4 })).toBe('the state changed (serial 3 -> 4)');
    expect(reason({ ...fingerprint, lineage: 'm' })).toMatch(/state changed/);
    expect(reason({ ...fingerprint, objects: { 'Namespace/ns': 'b', 'PersistentVolumeClaim/web-state': 'c' } })).toBe('Deployment/web is gone from the cluster');
    expect(reason({ ...fingerprint, objects: { ...fingerprint.objects, 'Deployment/web': 'z' } })).toBe('Deployment/web changed in the cluster');
    expect(reason({ ...fingerprint, objects: { ...fingerprint.objects, 'ServiceAccount/x': 'c' } })).toBe('ServiceAccount/x appeared in the cluster');
  });
  it("with only a node's parts of the graph changed, names the node and its resources; its own objects may differ", () => {
    const now = { ...fingerprint, graph: { ...graph, resources: { ...graph.resources, 'null_resource.image-web_push_1A2B3C4D': 'p2' } }, objects: { ...fingerprint.objects, 'Deployment/web': 'z' } };
    expect(compare(fingerprint, now)).toEqual({ kind: 'nodes', nodes: ['web'], addresses: ['kubernetes_manifest.node-web_deployment_1A2B3C4E', 'null_resource.image-web_push_1A2B3C4D'], ownObjectsAsRecorded: false });
    // its objects as recorded: the plan may skip tofu's refresh of them; one gone: it may not
    const same = { ...now, objects: fingerprint.objects };
    expect(compare(fingerprint, same)).toMatchObject({ kind: 'nodes', nodes: ['web'], ownObjectsAsRecorded: true });
    const { ['PersistentVolumeClaim/web-state']: _claim, ...withoutClaim } = fingerprint.objects;
    expect(compare(fingerprint, { ...now, objects: withoutClaim })).toMatchObject({ kind: 'nodes', ownObjectsAsRecorded: false });
    // another object changed too: the full plan
    expect(compare(fingerprint, { ...now, objects: { ...now.objects, 'Namespace/ns': 'q' } })).toEqual({ kind: 'differs', reason: 'Namespace/ns changed in the cluster' });
  });
});

describe('graphFingerprint', () => {
  it('prints each block by address and the rest apart', () => {
    const g = (image: string, output: string) => ({ output: { names: { value: [output] } }, resource: { null_resource: { 'image-web_push_1A2B3C4D': { triggers: { ref: image } }, 'image-mail_push_1A2B3C41': { triggers: { ref: 'm' } } } }, data: { external: { 'image-web_digest_1A2B3C4F': { program: ['sh'] } } } });
    const a = graphFingerprint(g('v1', 'web'));
    expect(Object.keys(a.resources).sort()).toEqual(['data.external.image-web_digest_1A2B3C4F', 'null_resource.image-mail_push_1A2B3C41', 'null_resource.image-web_push_1A2B3C4D']);
    const b = graphFingerprint(g('v2', 'web'));
    expect(b.rest).toBe(a.rest);
    expect(b.resources['null_resource.image-web_push_1A2B3C4D']).not.toBe(a.resources['null_resource.image-web_push_1A2B3C4D']);
    expect(b.resources['null_resource.image-mail_push_1A2B3C41']).toBe(a.resources['null_resource.image-mail_push_1A2B3C41']);
    expect(graphFingerprint(g('v1', 'mail')).rest).not.toBe(a.rest);
  });
});

describe('whyNoFastPlan and the record', () => {
  const model = { stateKey: 'g-all', spire: undefined } as unknown as TargetModel;
  it('is off with DEPLOY_FAST_PLAN=off and for a target with SPIRE steps', () => {
    expect(whyNoFastPlan({ env: {}, model })).toBeUndefined();
    expect(whyNoFastPlan({ env: { DEPLOY_FAST_PLAN: 'OFF' }, model })).toBe('DEPLOY_FAST_PLAN=off');
    expect(whyNoFastPlan({ env: {}, model: { ...model, spire: {} } as unknown as TargetModel })).toMatch(/SPIRE/);
  });

  it("keeps a plan's fingerprint, and an apply's only without a foreign writer that wrote since the fingerprint before the plan", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'noop-record-'));
    const ctx = { env: { DEPLOY_STATE_DIR: dir }, model };
    const file = join(dir, 'noop', 'g-all.json');
    const edit = 'Deployment/web: kubectl-edit at 2026-12-02T01:00:00Z';
    const fingerprint: TargetFingerprint = { inputs: 'i', graph: { rest: 'r', resources: {} }, lineage: 'l', serial: 3, objects: { 'Deployment/web': 'a' }, foreignWriters: [edit] };
    expect(await recordNoop(ctx, fingerprint, 'plan')).toEqual([]);
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ recordedBy: 'plan', serial: 3, objects: { 'Deployment/web': 'a' } });
    // a writer the fingerprint before the plan did not have: not recorded, and the old record goes
    expect(await recordNoop(ctx, fingerprint, 'apply')).toEqual([edit]);
    await expect(readFile(file, 'utf8')).rejects.toThrow();
    expect(await recordNoop(ctx, fingerprint, 'apply', { ...fingerprint, foreignWriters: ['Deployment/web: kubectl-edit at 2026-12-02T00:59:00Z'] })).toEqual([edit]);
    // the same writer at the same time, there before the plan: recorded
    expect(await recordNoop(ctx, fingerprint, 'apply', fingerprint)).toEqual([]);
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ recordedBy: 'apply' });
    expect(await recordNoop(ctx, { ...fingerprint, foreignWriters: [] }, 'apply')).toEqual([]);
    await forgetNoop(ctx);
    await expect(readFile(file, 'utf8')).rejects.toThrow();
    await rm(dir, { recursive: true, force: true });
  });
});

describe('providerSettings', () => {
  it('is the settings as they take effect: DEPLOY_CACHE_DIR unset or set to its default, DEPLOY_PROVIDER_PATCHES unset or all, are one', () => {
    // GIVEN a cache with both mirrors' CLI configurations
    const home = mkdtempSync(join(tmpdir(), 'noop-settings-'));
    const cache = join(home, '.cache', 'k8s-deployer');
    mkdirSync(cache, { recursive: true });
    for (const f of ['tofu.rc', 'tofu-patched.rc']) writeFileSync(join(cache, f), '');
    const base = { HOME: home, XDG_CACHE_HOME: undefined };
    // THEN the default written out is the default
    expect(providerSettings({ ...base, DEPLOY_CACHE_DIR: cache })).toBe(providerSettings(base));
    expect(providerSettings({ ...base, DEPLOY_PROVIDER_PATCHES: 'all' })).toBe(providerSettings(base));
    // AND another choice is another setting
    expect(providerSettings({ ...base, DEPLOY_PROVIDER_PATCHES: 'none' })).not.toBe(providerSettings(base));
    expect(providerSettings({ ...base, DEPLOY_PROVIDERS: 'download', DEPLOY_CACHE_DIR: join(home, 'empty') })).not.toBe(providerSettings(base));
  });
});

describe('changedBehindTheApply', () => {
  it("names the graph's objects that changed during the run, but not those the apply changed nor the namespace's default service account", async () => {
    const fingerprintOf = (objects: Record<string, string>) => ({ inputs: '', graph: { rest: '', resources: {} }, lineage: 'l', serial: 1, objects, foreignWriters: [] });
    const before = fingerprintOf({ 'Deployment/web': 'a', 'Deployment/mail': 'b', 'NetworkPolicy/p': 'c' });
    const after = fingerprintOf({ 'Deployment/web': 'a2', 'Deployment/mail': 'b2', 'ServiceAccount/default': 'd' });
    const graph = (k: string) => k !== 'ServiceAccount/default';
    expect(changedBehindTheApply(before, after, (k) => k === 'Deployment/mail', graph)).toEqual(['Deployment/web: changed during the run', 'NetworkPolicy/p: gone during the run']);
  });
});

describe('the reason of a full plan when the check cannot read', () => {
  it("GIVEN a kubeconfig error with its issues THEN the reason is one line: the summary, then each issue", async () => {
    const message = 'The kubeconfig cannot be used.\n  - env KUBE_CTX: context "other" does not exist in the kubeconfig\n  - /kc: no server';
    expect(oneLine(message)).toBe('The kubeconfig cannot be used: env KUBE_CTX: context "other" does not exist in the kubeconfig; /kc: no server');
    expect(oneLine('no answer within 15s')).toBe('no answer within 15s');
    const verdict = await checkNoop({} as NoopCheckContext, message, [], {});
    expect(verdict).toEqual({ kind: 'full', reason: 'the check could not read everything it needs (The kubeconfig cannot be used: env KUBE_CTX: context "other" does not exist in the kubeconfig; /kc: no server)' });
  });
});

describe('the check never answers over a /var/lib claim at risk (law 18)', () => {
  const model = { namespace: 'demo', nodes: [{ name: 'web' }] } as unknown as TargetModel;
  const objects = (claims: unknown[]) => ({ server: 'https://cluster.test', objects: [], state: undefined, complete: true, claims, volumes: [], deployments: { patch: async () => undefined, read: async () => undefined } });
  it('GIVEN the claim is being deleted (a status and a deletionTimestamp the fingerprint does not see) THEN the full plan runs, naming the claim and why', async () => {
    const deleting = { metadata: { name: 'web-state', uid: 'u', deletionTimestamp: '2026-05-01T10:00:00Z' }, status: { phase: 'Bound' } };
    const verdict = await checkNoop({ model } as NoopCheckContext, objects([deleting]), [], {});
    expect(verdict).toEqual({ kind: 'full', reason: '/var/lib claim at risk in the cluster (web-state: deleting)' });
  });
  it('GIVEN the claims were not read THEN the full plan runs, saying so', async () => {
    const { claims: _c, ...noClaims } = objects([]);
    expect(await checkNoop({ model } as NoopCheckContext, noClaims, [], {})).toEqual({ kind: 'full', reason: 'the check could not judge the /var/lib claims (the claims were not read)' });
  });
});
