import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { AppsV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors.js';
import { ReplicaSetSchema } from '../../../src/kube/api-objects.js';
import { callRaw, createKubeApi, loadKubeConfig } from '../../../src/kube/kube-api.js';
import { resolveKubeconfig } from '../../../src/kube/kubeconfig.js';
import { loadFixture } from '../rollout/load-fixture.js';

/**
 * A loopback HTTP server answers a ReplicaSet list as a newer API server would (a template
 * field the client's model does not know). The raw call must keep it: a rollback writes the
 * template back whole.
 */
describe('callRaw: API responses as the server sent them', () => {
  const fx = loadFixture('terminal-systemd-degraded');
  const rs = structuredClone(fx.raw.replicaSets[0]) as any;
  rs.spec.template.spec.containers[0].futureField = { keep: 'me' };
  let server: Server;
  let kc: KubeConfig;
  const seen: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers['content-type'] ?? ''}`);
      res.setHeader('content-type', 'application/json');
      if (req.method === 'PATCH') {
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => res.end(JSON.stringify({ ...(fx.raw.deployment as object), metadata: { ...(fx.raw.deployment as any).metadata, generation: 3 }, _echo: JSON.parse(body) })));
        return;
      }
      res.end(JSON.stringify({ kind: 'ReplicaSetList', apiVersion: 'apps/v1', metadata: { resourceVersion: '777' }, items: [rs] }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('keeps fields the typed model drops, and string timestamps', async () => {
    const apps = kc.makeApiClient(AppsV1Api);
    const typed = await apps.listNamespacedReplicaSet({ namespace: 'fediversity' });
    expect((typed.items[0]!.spec!.template!.spec!.containers[0] as any).futureField).toBeUndefined();
    const raw = (await callRaw((o) => apps.listNamespacedReplicaSet({ namespace: 'fediversity' }, o))) as any;
    expect(raw.items[0].spec.template.spec.containers[0].futureField).toEqual({ keep: 'me' });
    expect(raw.items[0].metadata.creationTimestamp).toBe('2026-11-30T04:01:00Z');
    expect(ReplicaSetSchema.parse(raw.items[0]).spec.template).toEqual(rs.spec.template);
  });

  it('lists with the resourceVersion, and patches as a JSON patch with the field manager', async () => {
    const api = createKubeApi(kc);
    const l = await api.listReplicaSets('fediversity', 'app.kubernetes.io/name=web');
    expect(l.resourceVersion).toBe('777');
    expect(l.items).toHaveLength(1);
    const patched = (await api.patchDeployment('fediversity', 'web', [{ op: 'replace', path: '/spec/template', value: { a: 1 } }], 'deploy-rollout')) as any;
    expect(patched.metadata.generation).toBe(3);
    expect(patched._echo).toEqual([{ op: 'replace', path: '/spec/template', value: { a: 1 } }]);
    expect(seen.at(-1)).toBe('PATCH /apis/apps/v1/namespaces/fediversity/deployments/web?fieldManager=deploy-rollout application/json-patch+json');
    expect(seen.at(-2)).toContain('labelSelector=app.kubernetes.io%2Fname%3Dweb');
  });
});

describe('loadKubeConfig', () => {
  it('names KUBE_CONFIG_PATH when no kubeconfig is given', () => {
    expect(() => loadKubeConfig(resolveKubeconfig({ cwd: process.cwd(), env: {} }))).toThrow(ConfigError);
    expect(() => loadKubeConfig(resolveKubeconfig({ cwd: process.cwd(), env: {} }))).toThrow(/KUBE_CONFIG_PATH/);
  });
  it('GIVEN KUBE_CTX and a tokenFile THEN the client gets that context, its cluster and the token read from the file', async () => {
    const d = await mkdtemp(join(tmpdir(), 'deploy-kube-api-'));
    try {
      await writeFile(join(d, 'tok'), 'from-file\n');
      const file = join(d, 'kc.yaml');
      await writeFile(
        file,
        'apiVersion: v1\nkind: Config\nclusters:\n- {name: a, cluster: {server: "https://a:6443"}}\n- {name: b, cluster: {server: "https://b:6443", tls-server-name: bee}}\n' +
          'users:\n- {name: ua, user: {token: ta}}\n- {name: ub, user: {tokenFile: tok, as: alice}}\ncontexts:\n- {name: one, context: {cluster: a, user: ua}}\n- {name: two, context: {cluster: b, user: ub}}\ncurrent-context: one\n',
      );
      const kc = loadKubeConfig(resolveKubeconfig({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: file, KUBE_CTX: 'two' } }));
      expect(kc.getCurrentCluster()).toMatchObject({ server: 'https://b:6443', tlsServerName: 'bee' });
      expect(kc.getCurrentUser()).toMatchObject({ token: 'from-file', impersonateUser: 'alice' });
    } finally {
      await rm(d, { recursive: true, force: true });
    }
  });
  it('names the file it cannot read', () => {
    expect(() => loadKubeConfig(resolveKubeconfig({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: '/nonexistent/kubeconfig' } }))).toThrow(/\/nonexistent\/kubeconfig/);
  });
});
