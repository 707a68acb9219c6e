/**
 * Issue 17 item 4, on the real cluster: destroy needs neither the registry, nor the tags, nor
 * the RuntimeClass. Each case deploys, takes one of them away, and checks that `deploy
 * destroy` exits 0 with the namespace, the claim's volume and every resource of the state
 * gone. The registry and the RuntimeClass taken away are this file's own (a registry on its
 * own port, a RuntimeClass of its own name with the method's handler), never the shared ones.
 */
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireTool } from '../../src/tools/discover.js';
import { DeployHarness, images, ownRegistry } from './harness.js';
import { repoRoot, type BuiltImage } from '../integration/images-scripts.js';

let good: BuiltImage;
beforeAll(async () => {
  good = await images.good();
});

/** The volume behind the node's claim (to check that destroy removed it). */
async function volumeOf(h: DeployHarness, node: string): Promise<string> {
  const claim = await h.getJson(['get', 'pvc', `${node}-state`]);
  expect(claim.status.phase).toBe('Bound');
  return claim.spec.volumeName;
}

/** Exit 0, the namespace gone, the volume gone, and no resource left in the state. */
async function expectDestroyed(h: DeployHarness, volume: string): Promise<void> {
  expect((await h.kubectl(['get', 'namespace', h.namespace], { namespace: null })).exitCode).not.toBe(0);
  expect(await h.volumeGone(volume), `volume ${volume} still there a minute after destroy`).toBe(true);
  const show = await execa(join(repoRoot, 'bin', 'deploy'), ['state', 'show', 'e2e-all'], { env: h.env, reject: false });
  expect(show.exitCode, show.stderr).toBe(0);
  expect(JSON.parse(show.stdout).resources).toEqual([]);
}

describe('destroy with the registry stopped', () => {
  let h: DeployHarness;
  let reg: Awaited<ReturnType<typeof ownRegistry>> | undefined;
  beforeAll(async () => {
    h = await DeployHarness.create('destroy-reg');
    reg = await ownRegistry(h, `destroy-${process.pid}`);
  });
  afterAll(async () => {
    await reg?.remove();
    await h?.cleanup();
  });

  it('removes the namespace, the claim and the state, exit 0', async () => {
    const plan = await h.writePlan('group', { lone: { image: good } });
    const port = reg!.port;
    const registryFlag = ['--registry', `127.0.0.1:${port}`];
    // The cluster's containerd pulls from the shared registry only, so this first rollout
    // fails (exit 5, nothing to set back); the state holds every resource of the node all the
    // same: push, digest, claim, Deployment, rollout step.
    const applied = await h.deploy('apply', plan, ['--target', 'all', ...registryFlag]);
    expect(applied.exitCode, applied.stderr).toBe(5);
    const volume = await volumeOf(h, 'lone');
    expect(await h.registryDigest(`127.0.0.1:${port}/${h.namespace}/lone:${good.tag}`)).toMatch(/^sha256:/);

    await reg!.stop();
    expect(await h.registryDigest(`127.0.0.1:${port}/${h.namespace}/lone:${good.tag}`)).toBeUndefined();

    const r = await h.deploy('destroy', plan, ['--target', 'all', ...registryFlag], {}, { json: false });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain('the registry did not give the digest of lone (registry stopped or tag deleted)');
    expect(r.stdout).toContain(`destroyed: namespace ${h.namespace}`);
    expect(r.stdout).toContain('deletes /var/lib of node lone (claim lone-state): the target is destroyed');
    await expectDestroyed(h, volume);
  });
});

describe('destroy with the tags deleted from the registry', () => {
  let h: DeployHarness;
  beforeAll(async () => (h = await DeployHarness.create('destroy-tag')));
  afterAll(() => h?.cleanup());

  it('removes the namespace, the claim and the state, exit 0', async () => {
    const plan = await h.writePlan('group', { lone: { image: good } });
    expect((await h.deploy('apply', plan, ['--target', 'all'])).exitCode).toBe(0);
    const volume = await volumeOf(h, 'lone');
    // this suite's own repository (<registry>/<namespace>/lone): nothing else uses it
    const ref = `${h.env.K8S_REGISTRY}/${h.namespace}/lone:${good.tag}`;
    const skopeo = requireTool('skopeo', h.env).path;
    const del = await execa(skopeo, ['delete', '--tls-verify=false', `docker://${ref}`], { env: h.env, reject: false, timeout: 60_000 });
    expect(del.exitCode, del.stderr).toBe(0);
    expect(await h.registryDigest(ref)).toBeUndefined();

    const r = await h.deploy('destroy', plan, ['--target', 'all'], {}, { json: false });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain('the registry did not give the digest of lone');
    await expectDestroyed(h, volume);
  });
});

describe('destroy with the RuntimeClass deleted', () => {
  let h: DeployHarness;
  let runtimeClass: string;
  beforeAll(async () => {
    h = await DeployHarness.create('destroy-rc');
    // a RuntimeClass of this suite, with the handler of the cluster's `systemd`
    runtimeClass = `${h.namespace}-rc`;
    const rc = { apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: runtimeClass }, handler: 'systemd' };
    await h.kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(rc), namespace: null });
  });
  afterAll(async () => {
    await h?.kubectl(['delete', 'runtimeclass', '--ignore-not-found', runtimeClass], { namespace: null });
    await h?.cleanup();
  });

  it('removes the namespace, the claim and the state, exit 0', async () => {
    const plan = await h.writePlan('group', { lone: { image: good } });
    const rcFlag = ['--runtime-class', runtimeClass];
    const applied = await h.deploy('apply', plan, ['--target', 'all', ...rcFlag]);
    expect(applied.exitCode, applied.stderr).toBe(0);
    expect((await h.podOf('lone')).spec.runtimeClassName).toBe(runtimeClass);
    const volume = await volumeOf(h, 'lone');
    await h.kubectlOk(['delete', 'runtimeclass', runtimeClass], { namespace: null });
    // a plan now fails on the missing RuntimeClass, as it must
    const planned = await h.deploy('plan', plan, ['--target', 'all', ...rcFlag], {}, { json: false });
    expect(planned.exitCode, planned.stderr).toBe(3);
    expect(planned.stderr).toContain(`The cluster has no RuntimeClass "${runtimeClass}"`);

    const r = await h.deploy('destroy', plan, ['--target', 'all', ...rcFlag], {}, { json: false });
    expect(r.exitCode, r.stderr).toBe(0);
    await expectDestroyed(h, volume);
  });
});
