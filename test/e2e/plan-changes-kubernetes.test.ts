/**
 * The in-process reader of saved plans (src/tools/planfile/plan-changes.ts) against `tofu show -json` on
 * plans of `kubernetes_manifest` changes, made by the REAL OpenTofu and kubernetes provider
 * against the running local cluster (test/cluster/): its values are dynamically typed
 * (`manifest`, `object`: cty's [type, value] pairs in msgpack), with unknowns deep inside
 * `object` after a change. The output known only after the apply reads a computed field the
 * manifest sets (`metadata.labels`, unknown on a create): the patched provider's `object` holds
 * only the manifest's paths (docs/provider-patch.md, 0004), so `object.metadata.uid` is no
 * attribute there. In the e2e project, whose global setup brings the cluster up and
 * provides its kubeconfig (`clusterEnv`); kubectl is found as deploy finds it (the build
 * cache, then PATH). A missing kubeconfig or kubectl fails the suite, naming it.
 *
 * Creates only the namespace plan-reader-<random> and objects in it; deletes the namespace at
 * the end, whatever happened.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogEvent } from '../../src/log.js';
import { readPlanChanges } from '../../src/tools/planfile/plan-changes.js';
import { applyPlan, initGraph, planGraph, showPlan, type TofuOptions } from '../../src/tools/tofu/tofu.js';
import { DeployHarness } from './harness.js';

let h: DeployHarness;
let namespace = '';
const kubectl = (...args: string[]) => h.kubectlOk(args, { namespace: null });

const configMap = (name: string, data: Record<string, string>) => ({ manifest: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels: { app: 'plan-reader' } }, data } });

function writeGraph(dir: string, manifests: Record<string, unknown>, output: Record<string, unknown>): void {
  const graph = {
    terraform: { required_providers: { kubernetes: { source: 'hashicorp/kubernetes', version: '2.38.0' } }, backend: { local: { path: 'terraform.tfstate' } } },
    provider: { kubernetes: [{}] },
    resource: { kubernetes_manifest: manifests },
    output,
  };
  writeFileSync(join(dir, 'cdk.tf.json'), JSON.stringify(graph, null, 2));
}

async function bothReaders(opts: TofuOptions, planFile: string) {
  return { inProcess: await readPlanChanges(planFile), shown: await showPlan(opts, planFile) };
}

describe('kubernetes_manifest plans: the in-process reader equals tofu show -json', () => {
  let opts: TofuOptions;
  const warned: LogEvent[] = [];
  const logger = { warn: (e: LogEvent) => warned.push(e) };

  beforeAll(async () => {
    h = await DeployHarness.create('plan-reader');
    namespace = h.namespace;
    if (!h.env.KUBE_CONFIG_PATH) throw new Error('the e2e global setup provided no KUBE_CONFIG_PATH (the cluster\'s cluster.env): is the cluster up?');
    await kubectl('create', 'namespace', namespace);
    // the providers from the offline mirror; the cluster's API not through any proxy
    const env = { ...h.env, HTTPS_PROXY: 'http://127.0.0.1:9', HTTP_PROXY: 'http://127.0.0.1:9', NO_PROXY: '*' };
    opts = { dir: h.dir, env, timeoutMs: 240_000 };
    writeGraph(
      opts.dir,
      {
        settings: configMap('settings', { level: 'info', size: '10' }),
        named: configMap('first-name', { a: 'b' }),
        gone: { manifest: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'gone', namespace }, type: 'Opaque', data: { token: 'bm90LWEtc2VjcmV0' } } },
      },
      { label: { value: '${kubernetes_manifest.settings.object.metadata.labels.app}' }, level: { value: '${kubernetes_manifest.settings.manifest.data.level}' } },
    );
    await initGraph(opts);
  });

  afterAll(async () => {
    // whatever the tests left: the namespace and all in it, and the graph's directory
    await h?.cleanup();
  });

  it('a first plan: creates, with object unknown and an output known only after the apply', async () => {
    const plan = await planGraph({ ...opts, planFile: 'create.tfplan', logger });
    const { inProcess, shown } = await bothReaders(opts, plan.planFile);
    expect(inProcess).toEqual(shown);
    expect(plan.changes).toEqual(shown.changes);
    expect(warned).toEqual([]);
    expect(inProcess.changes.map((c) => `${c.address} ${c.actions.join('+')}`)).toEqual(['kubernetes_manifest.gone create', 'kubernetes_manifest.named create', 'kubernetes_manifest.settings create']);
    expect(inProcess.outputs).toEqual({ label: { sensitive: false }, level: { value: 'info', sensitive: false } });
    await applyPlan({ ...opts, planFile: plan.planFile });
    expect(await kubectl('get', 'configmap', 'settings', '-n', namespace, '-o', 'jsonpath={.data.level}')).toBe('info');
  });

  it('updates in place, a replace (a new name), a delete and a create', async () => {
    writeGraph(
      opts.dir,
      {
        settings: configMap('settings', { level: 'debug', size: '10' }),
        named: configMap('second-name', { a: 'b' }),
        added: { manifest: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'added', namespace }, automountServiceAccountToken: false } },
      },
      { label: { value: '${kubernetes_manifest.settings.object.metadata.labels.app}' }, level: { value: '${kubernetes_manifest.settings.manifest.data.level}' } },
    );
    const plan = await planGraph({ ...opts, planFile: 'change.tfplan', logger });
    const { inProcess, shown } = await bothReaders(opts, plan.planFile);
    // THEN both readers agree on every field, and planGraph read it in-process (no warning)
    expect(inProcess).toEqual(shown);
    expect(plan.changes).toEqual(shown.changes);
    expect(warned).toEqual([]);
    const byAddress = new Map(inProcess.changes.map((c) => [c.address, c]));
    expect(byAddress.get('kubernetes_manifest.settings')).toMatchObject({ actions: ['update'] });
    expect(byAddress.get('kubernetes_manifest.named')).toMatchObject({ actions: ['delete', 'create'], actionReason: 'replace_because_cannot_update' });
    expect(byAddress.get('kubernetes_manifest.named')?.replacePaths).toEqual(shown.changes.find((c) => c.address === 'kubernetes_manifest.named')?.replacePaths);
    expect(byAddress.get('kubernetes_manifest.gone')).toMatchObject({ actions: ['delete'], actionReason: 'delete_because_no_resource_config' });
    expect(byAddress.get('kubernetes_manifest.added')).toMatchObject({ actions: ['create'] });
    expect(inProcess.outputs.level).toEqual({ value: 'debug', sensitive: false });
    // AND the plan's state holds the manifests as the state file writes them (dynamic: {value, type})
    const settings = plan.priorState?.find((r) => r.name === 'settings');
    expect((settings?.instances?.[0]?.attributes?.manifest as { value?: { data?: unknown } } | undefined)?.value?.data).toEqual({ level: 'info', size: '10' });
    await applyPlan({ ...opts, planFile: plan.planFile });
    expect(await kubectl('get', 'configmap', 'second-name', '-n', namespace, '-o', 'jsonpath={.data.a}')).toBe('b');
  });

  it('a destroy plan', async () => {
    const plan = await planGraph({ ...opts, destroy: true, planFile: 'destroy.tfplan', logger });
    const { inProcess, shown } = await bothReaders(opts, plan.planFile);
    expect(inProcess).toEqual(shown);
    expect(warned).toEqual([]);
    expect(inProcess.changes.map((c) => c.actions.join('+'))).toEqual(['delete', 'delete', 'delete']);
    await applyPlan({ ...opts, planFile: plan.planFile });
  });
});
