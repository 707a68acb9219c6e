/**
 * Issue 17 item 3, on the real cluster: the /var/lib claim of a node that stays is never
 * replaced or deleted by surprise. A change of StorageClass is refused (exit 2) before anything
 * changes, naming node, claim and attribute; `--allow-volume-replacement <node>` lets it go. A
 * larger size on a class that allows expansion grows the claim in place; a smaller one would
 * replace it and is refused. Each suite makes its own StorageClass (host-path, like the
 * cluster's default `standard`) and deletes it afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeployHarness, images } from './harness.js';
import type { BuiltImage } from '../integration/images-scripts.js';

let good: BuiltImage;
beforeAll(async () => {
  good = await images.good();
});

/** A StorageClass of the host-path provisioner, like the cluster's `standard`. */
async function makeStorageClass(h: DeployHarness, name: string, allowVolumeExpansion: boolean): Promise<void> {
  const sc = { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name }, provisioner: 'kubernetes.io/host-path', reclaimPolicy: 'Delete', volumeBindingMode: 'Immediate', allowVolumeExpansion };
  await h.kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(sc), namespace: null });
}

async function claimsOf(h: DeployHarness): Promise<Record<string, { uid: string; storageClass: string; request: string }>> {
  const list = await h.getJson(['get', 'pvc']);
  return Object.fromEntries(
    list.items.map((c: any) => [c.metadata.name, { uid: c.metadata.uid, storageClass: c.spec.storageClassName, request: c.spec.resources.requests.storage }]),
  );
}

describe('a change of StorageClass never replaces the claims of staying nodes by surprise', () => {
  let h: DeployHarness;
  let other: string;
  beforeAll(async () => {
    h = await DeployHarness.create('claims');
    other = `${h.namespace}-other`;
    await makeStorageClass(h, other, false);
  });
  afterAll(async () => {
    await h?.kubectl(['delete', 'storageclass', '--ignore-not-found', other], { namespace: null });
    await h?.cleanup();
  });

  it('apply exits 2 naming node, claim and attribute; the claims keep their UIDs and /var/lib its file; with the flag for every node it proceeds', async () => {
    const plan = await h.writePlan('group', { a: { image: good }, b: { image: good } });
    const first = await h.deploy('apply', plan, ['--target', 'all']);
    expect(first.exitCode, first.stderr).toBe(0);
    const before = await claimsOf(h);
    expect(before['a-state']!.storageClass).toBe('standard');
    await h.exec('a', 'echo precious > /var/lib/precious && sync');
    const podBefore = (await h.podOf('a')).metadata.uid;

    // plan: says it on a line of its own, in text and in --json, and exits 0
    const text = await h.deploy('plan', plan, ['--target', 'all', '--storage-class', other], {}, { json: false });
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).toContain(
      `  replaces /var/lib of node a (claim a-state), forced by spec[0].storage_class_name: the StorageClass (K8S_STORAGE_CLASS or --storage-class, now "${other}"): apply refuses this without --allow-volume-replacement a`,
    );
    const json = await h.deploy('plan', plan, ['--target', 'all', '--storage-class', other]);
    expect(json.json.targets[0].claimLosses.map((l: any) => [l.node, l.claim, l.change, l.cause, l.allowed])).toEqual([
      ['a', 'a-state', 'replace', 'forced', false],
      ['b', 'b-state', 'replace', 'forced', false],
    ]);

    // apply: refused before anything changes
    const refused = await h.deploy('apply', plan, ['--target', 'all', '--storage-class', other], {}, { json: false });
    expect(refused.exitCode, refused.stderr).toBe(2);
    expect(refused.stderr).toContain('apply refused before changing anything');
    expect(refused.stderr).toContain('  - node a: claim a-state would be replaced, forced by spec[0].storage_class_name');
    expect(refused.stderr).toContain('  - node b: claim b-state would be replaced');
    expect(refused.stderr).toContain('--allow-volume-replacement a --allow-volume-replacement b');
    // the flag for one node is not enough for the other
    const half = await h.deploy('apply', plan, ['--target', 'all', '--storage-class', other, '--allow-volume-replacement', 'a'], {}, { json: false });
    expect(half.exitCode, half.stderr).toBe(2);
    expect(half.stderr).toContain('  - node b: claim b-state would be replaced');
    expect(half.stderr).not.toContain('  - node a:');
    expect(await claimsOf(h)).toEqual(before);
    expect(await h.exec('a', 'cat /var/lib/precious')).toBe('precious');
    expect((await h.podOf('a')).metadata.uid).toBe(podBefore);

    // with the flag for each node: the claims are made again in the new class
    const allowed = await h.deploy('apply', plan, ['--target', 'all', '--storage-class', other, '--allow-volume-replacement', 'a', '--allow-volume-replacement', 'b']);
    expect(allowed.exitCode, allowed.stderr).toBe(0);
    expect(allowed.json.targets[0].claimLosses.map((l: any) => [l.node, l.allowed])).toEqual([['a', true], ['b', true]]);
    const after = await claimsOf(h);
    for (const c of ['a-state', 'b-state']) {
      expect(after[c]!.storageClass).toBe(other);
      expect(after[c]!.uid).not.toBe(before[c]!.uid);
    }
    expect((await h.podOf('a')).status.conditions.find((c: any) => c.type === 'Ready').status).toBe('True');
    expect(await h.exec('a', 'cat /var/lib/precious 2>/dev/null || echo gone')).toBe('gone');
  });
});

describe('the size of a claim', () => {
  let h: DeployHarness;
  let grow: string;
  beforeAll(async () => {
    h = await DeployHarness.create('claim-size');
    grow = `${h.namespace}-grow`;
    await makeStorageClass(h, grow, true);
  });
  afterAll(async () => {
    await h?.kubectl(['delete', 'storageclass', '--ignore-not-found', grow], { namespace: null });
    await h?.cleanup();
  });

  it('grows in place on a class that allows expansion; a smaller size would replace it and is refused', async () => {
    const plan = await h.writePlan('group', { s: { image: good } });
    const first = await h.deploy('apply', plan, ['--target', 'all', '--storage-class', grow, '--state-size', '1Gi']);
    expect(first.exitCode, first.stderr).toBe(0);
    const before = (await claimsOf(h))['s-state']!;
    await h.exec('s', 'echo precious > /var/lib/precious && sync');

    const bigger = await h.deploy('apply', plan, ['--target', 'all', '--storage-class', grow, '--state-size', '2Gi']);
    expect(bigger.exitCode, bigger.stderr).toBe(0);
    const [node] = bigger.json.targets[0].nodes;
    expect(node).toMatchObject({ node: 's', claim: 'update', rollout: 'none' });
    expect(bigger.json.targets[0].claimLosses).toEqual([]);
    expect((await claimsOf(h))['s-state']).toEqual({ ...before, request: '2Gi' });
    expect(await h.exec('s', 'cat /var/lib/precious')).toBe('precious');

    const smaller = await h.deploy('apply', plan, ['--target', 'all', '--storage-class', grow, '--state-size', '1Gi'], {}, { json: false });
    expect(smaller.exitCode, smaller.stderr).toBe(2);
    expect(smaller.stderr).toContain(
      '  - node s: claim s-state would be replaced, forced by spec[0].resources[0].requests: the size (K8S_STATE_SIZE or --state-size, now "1Gi"): smaller than the claim, and a claim only grows in place',
    );
    expect((await claimsOf(h))['s-state']).toEqual({ ...before, request: '2Gi' });
  });
});
