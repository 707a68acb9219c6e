/**
 * Issue 50 ("nothing by surprise", the claims), on the real cluster: a node's /var/lib claim
 * already at risk is named by `deploy plan` and stops `deploy apply` (exit 2, nothing changed)
 * until `--allow-volume-replacement <node>` names the node. Three nodes, three states made with
 * kubectl as an operator would, on the cluster's host-path provisioner (reclaim policy Delete):
 *   - t: `kubectl delete pvc t-state --wait=false` while its pod runs: Terminating, held by the
 *     kubernetes.io/pvc-protection finalizer;
 *   - g: its Deployment and claim deleted by hand: the state holds the claim, the cluster does
 *     not, and the volume went with it (Delete);
 *   - r: its volume set to Retain, then its Deployment and claim deleted: the volume Released.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeployHarness, images } from './harness.js';
import type { BuiltImage } from '../integration/images-scripts.js';

let good: BuiltImage;
beforeAll(async () => {
  good = await images.good();
});

interface Seen {
  deployments: Record<string, string>;
  claims: Record<string, { uid: string; deleting: boolean; volume: string }>;
  pods: Record<string, string>;
}

/** The namespace's Deployments, claims and pods by name, with their UIDs: what "nothing changed" compares. */
async function seen(h: DeployHarness): Promise<Seen> {
  const [d, c, p] = await Promise.all([h.getJson(['get', 'deployments']), h.getJson(['get', 'pvc']), h.getJson(['get', 'pods'])]);
  return {
    deployments: Object.fromEntries(d.items.map((o: any) => [o.metadata.name, o.metadata.uid])),
    claims: Object.fromEntries(c.items.map((o: any) => [o.metadata.name, { uid: o.metadata.uid, deleting: Boolean(o.metadata.deletionTimestamp), volume: o.spec.volumeName }])),
    pods: Object.fromEntries(p.items.filter((o: any) => !o.metadata.deletionTimestamp).map((o: any) => [o.metadata.name, o.metadata.uid])),
  };
}

async function volumePhase(h: DeployHarness, pv: string): Promise<string | undefined> {
  const r = await h.kubectl(['get', 'pv', pv, '-o', 'jsonpath={.status.phase}'], { namespace: null });
  return r.exitCode === 0 ? r.stdout : undefined;
}

async function waitFor(what: string, ok: () => Promise<boolean>, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000}s`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

describe('a claim at risk in the cluster is named by plan and stops apply until the node is named (issue 50)', () => {
  let h: DeployHarness;
  let retained: string | undefined;
  beforeAll(async () => {
    h = await DeployHarness.create('at-risk');
  });
  afterAll(async () => {
    // the Released volume is the test's: Delete lets the provisioner remove it and its directory
    if (retained) await h?.kubectl(['patch', 'pv', retained, '-p', '{"spec":{"persistentVolumeReclaimPolicy":"Delete"}}'], { namespace: null });
    await h?.cleanup();
  });

  it('Terminating, gone, Released: plan names each; apply exits 2 and changes nothing; with the flag for each node the apply proceeds', async () => {
    const plan = await h.writePlan('group', { t: { image: good }, g: { image: good }, r: { image: good } });
    const first = await h.deploy('apply', plan, ['--target', 'all']);
    expect(first.exitCode, first.stderr).toBe(0);
    await h.exec('t', 'echo precious > /var/lib/precious && sync');
    const made = await seen(h);
    const tVolume = made.claims['t-state']!.volume;
    retained = made.claims['r-state']!.volume;
    const gVolume = made.claims['g-state']!.volume;

    // t: deleted while its pod runs (the finalizer holds it)
    await h.kubectlOk(['delete', 'pvc', 't-state', '--wait=false']);
    // g: its Deployment and its claim deleted by hand; the volume goes with the claim (Delete)
    await h.kubectlOk(['delete', 'deployment', 'g']);
    await h.kubectlOk(['delete', 'pvc', 'g-state', '--timeout=180s']);
    expect(await h.volumeGone(gVolume), `volume ${gVolume} of g still there a minute after its claim went`).toBe(true);
    // r: its volume kept (Retain), then its Deployment and claim deleted: the volume is Released
    await h.kubectlOk(['patch', 'pv', retained, '-p', '{"spec":{"persistentVolumeReclaimPolicy":"Retain"}}'], { namespace: null });
    await h.kubectlOk(['delete', 'deployment', 'r']);
    await h.kubectlOk(['delete', 'pvc', 'r-state', '--timeout=180s']);
    await waitFor(`volume ${retained} Released`, async () => (await volumePhase(h, retained!)) === 'Released');
    const before = await seen(h);
    expect(before.claims['t-state']).toMatchObject({ deleting: true });
    expect(Object.keys(before.deployments).sort()).toEqual(['t']);

    // plan: each node and claim named, with what the objects say; never "verified" (the first apply left a no-op record)
    const text = await h.deploy('plan', plan, ['--target', 'all'], {}, { json: false });
    expect(text.exitCode, text.stderr).toBe(0);
    const lines = text.stdout.split('\n');
    const lineOf = (node: string) => lines.find((l) => l.startsWith(`  /var/lib of node ${node} is at risk: claim ${node}-state is `));
    expect(lineOf('t'), text.stdout).toMatch(/is being deleted since \S+Z \(the kubernetes.io\/pvc-protection finalizer/);
    expect(lineOf('t')).toContain(`when the claim goes, volume ${tVolume} (reclaim policy Delete, Bound) goes with it, and the data on it: apply refuses every change without --allow-volume-replacement t`);
    expect(lineOf('g'), text.stdout).toContain('is gone from the cluster while the state holds it');
    expect(lineOf('g')).toContain('no volume that was bound to it is left in the cluster: the data went with it');
    expect(lineOf('r'), text.stdout).toContain(`its volume ${retained} is Released`);
    expect(lineOf('r')).toContain(`the data is on volume ${retained} (reclaim policy Retain, Released)`);
    expect(text.stderr).toContain('full plan: /var/lib claims at risk in the cluster (g-state: gone; r-state: gone, volume-released; t-state: deleting)');
    const json = await h.deploy('plan', plan, ['--target', 'all']);
    expect(json.exitCode, json.stderr).toBe(0);
    expect(json.json.targets[0].verifiedNoop).toBeUndefined();
    expect(json.json.targets[0].claimLosses.map((l: any) => [l.node, l.claim, l.cause, l.allowed, l.risk.dangers])).toEqual([
      ['g', 'g-state', 'at-risk', false, ['gone']],
      ['r', 'r-state', 'at-risk', false, ['gone', 'volume-released']],
      ['t', 't-state', 'at-risk', false, ['deleting']],
    ]);

    // apply: refused before anything changes, naming node and claim, with the commands that keep the data
    const refused = await h.deploy('apply', plan, ['--target', 'all'], {}, { json: false });
    expect(refused.exitCode, refused.stderr).toBe(2);
    expect(refused.stderr).toContain('apply refused before changing anything');
    expect(refused.stderr).toContain('  - node t: claim t-state is being deleted since ');
    expect(refused.stderr).toContain(`kubectl patch pv ${tVolume} -p '{"spec":{"persistentVolumeReclaimPolicy":"Retain"}}'`);
    expect(refused.stderr).toContain('  - node g: claim g-state is gone from the cluster');
    expect(refused.stderr).toContain('  - node r: claim r-state is gone from the cluster');
    expect(refused.stderr).toContain(`a claim r-state in namespace ${h.namespace} with spec.volumeName: ${retained}`);
    expect(refused.stderr).toContain('--allow-volume-replacement g --allow-volume-replacement r --allow-volume-replacement t');
    // the flag for one node is not enough for the others
    const half = await h.deploy('apply', plan, ['--target', 'all', '--allow-volume-replacement', 't'], {}, { json: false });
    expect(half.exitCode, half.stderr).toBe(2);
    expect(half.stderr).not.toContain('  - node t:');
    expect(half.stderr).toContain('  - node g:');
    expect(await seen(h)).toEqual(before);
    expect(await h.exec('t', 'cat /var/lib/precious')).toBe('precious');
    expect(await volumePhase(h, retained)).toBe('Released');

    // with the flag for each node: t's claim made again (its pod stops first), g and r made again on new claims
    const allowed = await h.deploy('apply', plan, ['--target', 'all', '--allow-volume-replacement', 't', '--allow-volume-replacement', 'g', '--allow-volume-replacement', 'r']);
    expect(allowed.exitCode, allowed.stderr).toBe(0);
    expect(allowed.json.targets[0].claimLosses.map((l: any) => [l.node, l.allowed])).toEqual([['g', true], ['r', true], ['t', true]]);
    const after = await seen(h);
    expect(Object.keys(after.deployments).sort()).toEqual(['g', 'r', 't']);
    for (const c of ['g-state', 'r-state', 't-state']) expect(after.claims[c], c).toMatchObject({ deleting: false });
    expect(after.claims['t-state']!.uid).not.toBe(before.claims['t-state']!.uid);
    expect(after.claims['r-state']!.volume).not.toBe(retained);
    for (const n of ['g', 'r', 't']) expect((await h.podOf(n)).status.conditions.find((c: any) => c.type === 'Ready').status, n).toBe('True');
    expect(await h.exec('t', 'cat /var/lib/precious 2>/dev/null || echo gone')).toBe('gone');
    // r's old volume is left as it was: Released, with its data, for the operator
    expect(await volumePhase(h, retained)).toBe('Released');

    // and the next plan finds nothing at risk
    const again = await h.deploy('plan', plan, ['--target', 'all']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.json.targets[0].claimLosses).toEqual([]);
  });
});
