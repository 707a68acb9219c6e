/**
 * `deploy status` and `deploy history` through the CLI, in-process: states written to a real
 * data directory of the embedded backend; the cluster is a small HTTP server that answers the
 * two list requests status makes (the real cluster: test/e2e/deploy-status.test.ts).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataDirSource } from '../../../src/state/source/data-dir-source.js';
import { LAST_ROLLOUT_ANNOTATION } from '../../../src/rollout/last-rollout.js';
import { runCli, tempDir, writeJson } from '../../support/cli.js';
import { digest, fixtureState, imageRef } from '../workflow/state-fixture.js';

const plan = { version: 1, group: 'g1', nodes: { web: { image: { archive: 'w.tar', tag: 't1' }, apps: ['site'] }, mail: { image: { archive: 'm.tar', tag: 't1' }, apps: [] } }, roster: { spiffeProvider: null } };

function deployment(node: string, c: string, annotations: Record<string, string> = {}) {
  return { metadata: { name: node, uid: `d-${node}`, labels: { 'app.kubernetes.io/managed-by': 'deploy', 'app.kubernetes.io/name': node, 'deploy.fediversity/group': 'g1' }, annotations }, spec: { template: { spec: { containers: [{ name: 'node', image: imageRef(node, c) }] } } } };
}
function pod(node: string, c: string, ready: boolean) {
  return {
    metadata: { name: `${node}-x-1`, uid: `p-${node}`, labels: { 'app.kubernetes.io/name': node }, creationTimestamp: new Date(Date.now() - 90_000).toISOString() },
    spec: { containers: [{ name: 'node', image: imageRef(node, c) }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }], containerStatuses: [{ name: 'node', ready, restartCount: 2, imageID: `r/${node}@${digest(c)}`, state: { running: {} } }] },
  };
}

let dir = '';
let cleanup: () => Promise<void>;
let server: Server;
let lists: { deployments: unknown[]; pods: unknown[] } = { deployments: [], pods: [] };
const requests: string[] = [];
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('deploy-status-'));
  server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const body = req.url?.startsWith('/apis/apps/v1/namespaces/ns1/deployments') ? lists.deployments : req.url?.startsWith('/api/v1/namespaces/ns1/pods') ? lists.pods : undefined;
    res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body ? { kind: 'List', metadata: { resourceVersion: '1' }, items: body } : { kind: 'Status', code: 404 }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`);
  await writeJson(join(dir, 'group.json'), plan);
  env = { HOME: '/nonexistent-home', DEPLOY_STATE_DIR: join(dir, 'state'), KUBE_CONFIG_PATH: kubeconfig };
  // two versions of g1-all: web and mail, then web on a new image whose rollout failed
  // (the database made as the embedded backend makes it; DataDirSource creates nothing)
  const { SqliteStateStore } = await import('../../../src/state/store/sqlite-store.js');
  await mkdir(join(dir, 'state', 'state'), { recursive: true });
  const db = SqliteStateStore.open(join(dir, 'state', 'state'));
  await db.close();
  const source = new DataDirSource(join(dir, 'state', 'state'));
  for (const [serial, body] of [
    [1, fixtureState(1, 'ns1', { web: { image: imageRef('web', 'a') }, mail: { image: imageRef('mail', 'a') } })],
    [2, fixtureState(2, 'ns1', { web: { image: imageRef('web', 'b'), tag: 't2', tainted: true }, mail: { image: imageRef('mail', 'a') } })],
  ] as const) {
    await source.lock('g1-all', { ID: `l${serial}` });
    await source.write('g1-all', body, `l${serial}`);
    await source.unlock(`l${serial}`, 'g1-all');
  }
  source.close();
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  await cleanup();
});

describe('deploy status', () => {
  it('GIVEN every node ready on the image its state holds THEN the table says ok and the exit is 0, from two list requests', async () => {
    lists = { deployments: [deployment('web', 'b'), deployment('mail', 'a')], pods: [pod('web', 'b', true), pod('mail', 'a', true)] };
    requests.length = 0;
    const r = await runCli(['status'], env, dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('target all: namespace ns1, state g1-all serial 2');
    expect(r.stdout).toMatch(/web +ok +sha256:bbbbbbbbbbbb +sha256:bbbbbbbbbbbb +yes +2 +9\ds/);
    expect(r.stdout).toContain('status: ok, every node (2) is ready and runs the image its state holds');
    expect(requests.filter((u) => u.includes('/deployments')).length).toBe(1);
    expect(requests.filter((u) => u.includes('/pods')).length).toBe(1);
  });

  it('GIVEN a node rolled back and one whose Deployment is gone THEN both are marked, with the report, and the exit is 7; --json has the documented shape', async () => {
    const last = { outcome: 'rolled-back', reason: 'systemd-degraded', message: 'systemd is degraded (failed units: broken.service)', at: '2026-12-01T12:00:00.000Z', image: imageRef('web', 'b'), previousImage: imageRef('web', 'a'), failedUnits: ['broken.service'] };
    lists = { deployments: [deployment('web', 'a', { [LAST_ROLLOUT_ANNOTATION]: JSON.stringify(last) })], pods: [pod('web', 'a', true)] };
    const r = await runCli(['status'], env, dir);
    expect(r.code, r.stderr).toBe(7);
    expect(r.stdout).toMatch(/web +ROLLED-BACK +sha256:bbbbbbbbbbbb +sha256:aaaaaaaaaaaa .*rolled-back 2026-12-01T12:00:00.000Z \(systemd-degraded\)/);
    expect(r.stdout).toMatch(/mail +MISSING +sha256:aaaaaaaaaaaa +gone/);
    expect(r.stdout).toContain('status: 2 of 2 nodes differ: mail, web (exit 7)');
    const j = await runCli(['status', '--json'], env, dir);
    const doc = JSON.parse(j.stdout);
    expect(j.code).toBe(7);
    expect(Object.keys(doc)).toEqual(['verb', 'exitCode', 'healthy', 'group', 'stateSource', 'cluster', 'targets', 'notDeployed']);
    expect(Object.keys(doc.targets[0])).toEqual(['target', 'stateKey', 'namespace', 'serial', 'updated', 'lock', 'nodes', 'notApplied']);
    expect(doc.targets[0].lock).toEqual({ state: 'free' });
    expect(Object.keys(doc.targets[0].nodes[1])).toEqual(['node', 'mark', 'words', 'state', 'cluster', 'lastRollout']);
    expect(doc.targets[0].nodes.map((n: any) => [n.node, n.mark])).toEqual([['mail', 'missing'], ['web', 'rolled-back']]);
    expect(doc.targets[0].nodes[1].lastRollout).toEqual(last);
  });

  it('GIVEN an unknown target, or a target never applied THEN exit 2 naming it and what to do', async () => {
    const unknown = await runCli(['status', '-t', 'nope'], env, dir);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('"nope" is not a target of group "g1"; its targets are: all, site');
    const never = await runCli(['status', '-t', 'site'], env, dir);
    expect(never.code).toBe(2);
    expect(never.stderr).toContain('nothing deployed: no state g1-site with a node');
    expect(never.stderr).toContain('deploy apply --target site');
  });

  it('GIVEN no state data, an unreachable backend, or an unreachable API server THEN each is named (exit 2, 3, 3)', async () => {
    const none = await runCli(['status'], { ...env, DEPLOY_STATE_DIR: join(dir, 'empty') }, dir);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(`no state here: ${join(dir, 'empty', 'state')} holds no state data`);
    const backend = await runCli(['status'], { ...env, TF_HTTP_ADDRESS: 'http://127.0.0.1:9' }, dir);
    expect(backend.code).toBe(3);
    expect(backend.stderr).toContain('cannot read the state g1-all from http://127.0.0.1:9');
    const bad = join(dir, 'bad.kubeconfig');
    await writeFile(bad, 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "http://127.0.0.1:9", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n');
    const cluster = await runCli(['status', '--kubeconfig', bad], env, dir);
    expect(cluster.code).toBe(3);
    expect(cluster.stderr).toContain('Listing the Deployments of namespace ns1 failed against the API server http://127.0.0.1:9');
  });
});

describe('deploy history', () => {
  it('GIVEN two versions THEN each with its serial and time, the image change with both tags, the failed rollout, and when each node last changed image', async () => {
    const r = await runCli(['history', 'all'], env, dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^1 +\S+Z +mail: added, image sha256:aaaaaaaaaaaa \(tag t1\)$/m);
    expect(r.stdout).toMatch(/^2 +\S+Z +web: image sha256:aaaaaaaaaaaa -> sha256:bbbbbbbbbbbb \(tag t1 -> t2\)$/m);
    expect(r.stdout).toContain('web: its rollout failed');
    expect(r.stdout).toMatch(/web: sha256:bbbbbbbbbbbb since serial 2/);
    const j = JSON.parse((await runCli(['history', 'all', '--json', '--last', '1'], env, dir)).stdout);
    expect(j.versions.map((v: any) => v.serial)).toEqual([2]);
    expect(j.lastImageChange.map((l: any) => [l.node, l.serial])).toEqual([['mail', 1], ['web', 2]]);
  });
  it('GIVEN a target without state THEN exit 2 naming the key and the targets', async () => {
    const r = await runCli(['history', 'nope'], env, dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no state g1-nope');
    expect(r.stderr).toContain('its targets: all, site');
  });
});

describe('one set of flags: status and history take --namespace, --target, --kubeconfig and --json as plan does', () => {
  it('GIVEN the namespace the state holds THEN status and history read as without it; the flags of plan are accepted', async () => {
    lists = { deployments: [deployment('web', 'b'), deployment('mail', 'a')], pods: [pod('web', 'b', true), pod('mail', 'a', true)] };
    const r = await runCli(['status', '--namespace', 'ns1', '--target', 'all', '--kubeconfig', env.KUBE_CONFIG_PATH!, '--plan', 'group.json', '--json'], env, dir);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).targets[0].namespace).toBe('ns1');
    const fromEnv = await runCli(['status'], { ...env, K8S_NAMESPACE: 'ns1' }, dir);
    expect(fromEnv.code, fromEnv.stderr).toBe(0);
    const h = await runCli(['history', '--target', 'all', '--namespace', 'ns1', '--json'], env, dir);
    expect(h.code, h.stderr).toBe(0);
    expect(JSON.parse(h.stdout).stateKey).toBe('g1-all');
  });

  it('GIVEN another namespace THEN exit 2 naming both namespaces and where the other was given; nothing read of the cluster', async () => {
    requests.length = 0;
    const r = await runCli(['status', '--namespace', 'ceo-hang'], env, dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--namespace: target all means namespace "ceo-hang", but g1-all holds namespace "ns1"');
    expect(requests, 'no list request for a state of another namespace').toEqual([]);
    const fromEnv = await runCli(['status'], { ...env, K8S_NAMESPACE: 'ceo-hang' }, dir);
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toContain('K8S_NAMESPACE: target all means namespace "ceo-hang"');
    const h = await runCli(['history', 'all', '--namespace', 'ceo-hang'], env, dir);
    expect(h.code).toBe(2);
    expect(h.stderr).toContain('g1-all holds namespace "ns1"');
  });

  it('GIVEN history with two different targets, or none THEN exit 2 saying it reads one state', async () => {
    const two = await runCli(['history', 'all', '--target', 'site'], env, dir);
    expect(two.code).toBe(2);
    expect(two.stderr).toContain("one state's history at a time; given: all, site");
    const none = await runCli(['history'], env, dir);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('deploy history needs one target');
    const same = await runCli(['history', 'all', '-t', 'all'], env, dir);
    expect(same.code, same.stderr).toBe(0);
  });
});
