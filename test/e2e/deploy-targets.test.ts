/**
 * Safe defaults (issue 17, items 1 and 2) on the local cluster: automation never uses the
 * embedded state backend by accident, and a run without --target runs every node once (the
 * target `all`); a node another target's state already runs is named, from that state.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeployHarness, images } from './harness.js';
import { repoRoot } from '../integration/images-scripts.js';

interface DemoPlan {
  group: string;
  nodes: Record<string, { apps: string[] }>;
  roster: unknown;
}

describe('examples/demo.json without --target: one pod per node', () => {
  let h: DeployHarness;
  let plan: string;
  let demo: DemoPlan;
  let ns: string;

  /** The node pods of the demo group in this suite's namespaces, as `<namespace>/<node>`. */
  async function podsOfGroup(): Promise<string[]> {
    const pods = await h.getJson(['get', 'pods', '--all-namespaces', '-l', `deploy.fediversity/group=${demo.group}`], { namespace: null });
    return pods.items
      .filter((p: any) => p.metadata.namespace === ns || p.metadata.namespace.startsWith(`${ns}-`))
      .filter((p: any) => !p.metadata.deletionTimestamp)
      .map((p: any) => `${p.metadata.namespace}/${p.metadata.labels['app.kubernetes.io/name']}`)
      .sort();
  }

  beforeAll(async () => {
    h = await DeployHarness.create('targets');
    ns = h.namespace;
    demo = JSON.parse(await readFile(join(repoRoot, 'examples', 'demo.json'), 'utf8')) as DemoPlan;
    const good = await images.good();
    const nodes = Object.fromEntries(Object.entries(demo.nodes).map(([n, spec]) => [n, { image: good, apps: spec.apps }]));
    plan = await h.writePlan('demo', nodes, { roster: demo.roster }, demo.group);
  });
  afterAll(async () => {
    for (const app of ['web', 'mail']) await h?.kubectl(['delete', 'namespace', '--ignore-not-found', '--wait=false', `${ns}-${app}`], { namespace: null });
    await h?.cleanup();
  });

  it('GIVEN CI=true and no TF_HTTP_ADDRESS nor DEPLOY_STATE THEN apply exits 2 naming both, before anything: no state, no push, no namespace', async () => {
    const r = await h.deploy('apply', plan, [], { CI: 'true', DEPLOY_STATE: '' }, { json: false });
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain('TF_HTTP_ADDRESS: is not set, and CI=true says this runs under automation');
    expect(r.stderr).toContain('DEPLOY_STATE=embedded');
    expect(r.stdout).toBe('');
    expect((await h.kubectl(['get', 'namespace', ns], { namespace: null })).exitCode).not.toBe(0);
    expect(await h.registryDigest(`${h.env.K8S_REGISTRY}/${ns}/web:${(await images.good()).tag}`)).toBeUndefined();
    expect(await readdir(join(h.dir, 'state')).catch(() => [])).toEqual([]);
  });

  it('GIVEN CI=true and DEPLOY_STATE=embedded WHEN apply runs without --target THEN only target all runs: exactly one pod per node', { timeout: 900_000 }, async () => {
    const r = await h.deploy('apply', plan, [], { CI: 'true', DEPLOY_STATE: 'embedded' });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.json.chosenTargets).toEqual(['all']);
    expect(r.json.targets.map((t: any) => [t.target, t.namespace])).toEqual([['all', ns]]);
    expect(r.json.targets[0].nodeCopies).toEqual([]);
    const nodes = Object.keys(demo.nodes).sort();
    expect(await podsOfGroup()).toEqual(nodes.map((n) => `${ns}/${n}`));
    expect(nodes).toHaveLength(2);
    for (const app of ['web', 'mail']) expect((await h.kubectl(['get', 'namespace', `${ns}-${app}`], { namespace: null })).exitCode, app).not.toBe(0);
  });

  it('WHEN plan --target web THEN it warns that node web already runs in the namespace of target all (read from its state), naming both namespaces', { timeout: 600_000 }, async () => {
    const r = await h.deploy('plan', plan, ['--target', 'web'], {}, { json: false });
    expect(r.exitCode, r.stderr).toBe(0);
    const warning = `warning: node web already runs in namespace ${ns} (target all, state ${demo.group}-all); target web runs it in namespace ${ns}-web too: two copies, each with its own /var/lib and machine ID.`;
    expect(r.stdout).toContain(warning);
    expect(r.stderr).toContain(`[web] ${warning}`);
    expect(r.stdout).not.toContain('node mail');
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('targets: web');
  });

  it("WHEN plan --target '*' THEN every target is planned, the summary names them, and each per-app copy is named from the state or from this run", { timeout: 600_000 }, async () => {
    const r = await h.deploy('plan', plan, ['--target', '*']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.json.chosenTargets).toEqual(['all', 'mail', 'web']);
    const copies = r.json.targets.flatMap((t: any) => t.nodeCopies.map((c: any) => `${t.target}: ${c.node} ${c.namespace} ${c.otherTarget} ${c.otherNamespace} ${c.seenIn}`));
    expect(copies).toEqual([
      `all: mail ${ns} mail ${ns}-mail this run`,
      `all: web ${ns} web ${ns}-web this run`,
      `mail: mail ${ns}-mail all ${ns} state`,
      `web: web ${ns}-web all ${ns} state`,
    ]);
  });

  it('WHEN destroy runs without --target THEN it removes target all only; a plan of web then names no copy (the state of all runs nothing)', { timeout: 900_000 }, async () => {
    const r = await h.deploy('destroy', plan, []);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.json.targets.map((t: any) => t.target)).toEqual(['all']);
    expect(await podsOfGroup()).toEqual([]);
    const p = await h.deploy('plan', plan, ['--target', 'web']);
    expect(p.exitCode, p.stderr).toBe(0);
    expect(p.json.targets[0].nodeCopies).toEqual([]);
  });
});
