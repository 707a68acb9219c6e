/**
 * The kubeconfig as kubectl and the apply's provider read it (kubeconfig.ts): the files merged,
 * the context chosen, the KUBE_* overrides, the checks, and the identity text the verified
 * no-op check compares.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { dump } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors.js';
import { openKubeAccess, requireKubeAccess, resolveKubeconfig, resolveRunKubeconfig } from '../../../src/kube/kubeconfig.js';
import { tempDir } from '../../support/cli.js';

let dir = '';
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('deploy-kubeconfig-'));
  await mkdir(join(dir, 'sub'));
  await writeFile(join(dir, 'sub', 'ca.crt'), 'not really a CA\n');
});
afterAll(() => cleanup());

let n = 0;
async function file(doc: Record<string, unknown>, sub = ''): Promise<string> {
  const f = join(dir, sub, `kc-${++n}.yaml`);
  await writeFile(f, dump({ apiVersion: 'v1', kind: 'Config', ...doc }));
  return f;
}

const cluster = (name: string, server: string, extra: Record<string, unknown> = {}) => ({ name, cluster: { server, ...extra } });
const user = (name: string, u: Record<string, unknown>) => ({ name, user: u });
const context = (name: string, c: string, u: string) => ({ name, context: { cluster: c, user: u } });

function configError(f: () => unknown): ConfigError {
  try {
    f();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('no ConfigError');
}

describe('resolveKubeconfig: every path of KUBECONFIG, merged as kubectl merges them', () => {
  it('GIVEN two files THEN the first to name a cluster, user or context wins whole, and current-context is the first set', async () => {
    const a = await file({ clusters: [cluster('c', 'https://a:6443', { 'tls-server-name': 'a' })], users: [user('u', { token: 'ta' })] });
    const b = await file({
      'current-context': 'x',
      clusters: [cluster('c', 'https://b:6443'), cluster('d', 'https://d:6443')],
      users: [user('u', { token: 'tb', as: 'someone' })],
      contexts: [context('x', 'c', 'u')],
    });
    const k = resolveKubeconfig({ cwd: process.cwd(), env: { KUBECONFIG: `${a}:${join(dir, 'missing.yaml')}:${b}:${a}` } });
    expect(k.files).toEqual([a, join(dir, 'missing.yaml'), b]);
    expect(k.contextName).toBe('x');
    // a's cluster and user, not merged field by field with b's
    expect(k.cluster).toEqual({ server: 'https://a:6443', 'tls-server-name': 'a' });
    expect(k.user).toEqual({ token: 'ta' });
  });

  it('GIVEN relative paths THEN each is the directory of the file that names it', async () => {
    const f = await file(
      { 'current-context': 'x', clusters: [cluster('c', 'https://a:6443', { 'certificate-authority': 'ca.crt' })], users: [user('u', { tokenFile: 'tok', exec: undefined })], contexts: [context('x', 'c', 'u')] },
      'sub',
    );
    const k = resolveKubeconfig({ cwd: process.cwd(), env: { KUBECONFIG: f } });
    expect(k.cluster['certificate-authority']).toBe(join(dir, 'sub', 'ca.crt'));
    expect(k.user.tokenFile).toBe(join(dir, 'sub', 'tok'));
  });

  it('GIVEN KUBE_CONFIG_PATH THEN it alone is read, and a missing one is an error naming it', async () => {
    const a = await file({ 'current-context': 'x', clusters: [cluster('c', 'https://a:6443')], contexts: [context('x', 'c', 'u')] });
    const b = await file({ 'current-context': 'y', clusters: [cluster('c', 'https://b:6443')], contexts: [context('y', 'c', 'u')] });
    expect(resolveKubeconfig({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: b, KUBECONFIG: a } }).cluster.server).toBe('https://b:6443');
    const err = configError(() => resolveKubeconfig({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: join(dir, 'nope.yaml') } }));
    expect(err.message).toContain(join(dir, 'nope.yaml'));
  });

  it('GIVEN a name twice in one file and a context that names no cluster THEN every problem is reported at once', async () => {
    const f = await file({ 'current-context': 'x', clusters: [cluster('c', 'https://a:6443'), cluster('c', 'https://b:6443')], contexts: [] });
    const err = configError(() => resolveKubeconfig({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: f } }));
    expect(err.issues.map((i) => i.message)).toEqual(['the name "c" is there twice']);
    const g = await file({ 'current-context': 'x', clusters: [cluster('c', 'https://a:6443')], contexts: [] });
    expect(configError(() => resolveKubeconfig({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: g } })).issues).toEqual(
      expect.arrayContaining([{ where: g, message: 'current-context "x" names no context' }]),
    );
  });
});

describe("resolveKubeconfig: the provider's KUBE_* variables", () => {
  let two = '';
  beforeAll(async () => {
    two = await file({
      'current-context': 'one',
      clusters: [cluster('c1', 'https://one:6443', { 'certificate-authority-data': 'Q0E=', 'tls-server-name': 'one.internal' }), cluster('c2', 'https://two:6443')],
      users: [user('u1', { token: 't1' }), user('u2', { token: 't2', as: 'alice', 'as-groups': ['g1', 'g2'] })],
      contexts: [context('one', 'c1', 'u1'), context('two', 'c2', 'u2')],
    });
  });

  it('GIVEN KUBE_CTX THEN its context is used, and an unknown one is an error naming KUBE_CTX', () => {
    const k = resolveKubeconfig({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: two, KUBE_CTX: 'two' } });
    expect([k.contextName, k.clusterName, k.userName, k.cluster.server, k.user.as]).toEqual(['two', 'c2', 'u2', 'https://two:6443', 'alice']);
    expect(configError(() => resolveKubeconfig({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: two, KUBE_CTX: 'three' } })).issues).toEqual([
      { where: 'env KUBE_CTX', message: 'context "three" does not exist in the kubeconfig' },
    ]);
    // --context over KUBE_CTX
    expect(resolveKubeconfig({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: two, KUBE_CTX: 'two' } }, { context: 'one' }).contextName).toBe('one');
  });

  it('GIVEN KUBE_CTX_CLUSTER and KUBE_CTX_AUTH_INFO THEN they replace the context cluster and user', () => {
    const k = resolveKubeconfig({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: two, KUBE_CTX_CLUSTER: 'c2', KUBE_CTX_AUTH_INFO: 'u2' } });
    expect([k.contextName, k.cluster.server, k.user.token]).toEqual(['one', 'https://two:6443', 't2']);
  });

  it('GIVEN KUBE_HOST THEN it replaces the server and clears tls-server-name; KUBE_TOKEN replaces the token', () => {
    const k = resolveKubeconfig({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: two, KUBE_HOST: 'https://elsewhere:443', KUBE_TOKEN: 'tt' } });
    expect(k.cluster).toEqual({ server: 'https://elsewhere:443', 'certificate-authority-data': 'Q0E=' });
    expect(k.user.token).toBe('tt');
  });

  it('GIVEN KUBE_INSECURE THEN the CA is cleared with it; a host without a scheme is https with it, http without TLS material', async () => {
    const k = resolveKubeconfig({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: two, KUBE_INSECURE: 'true', KUBE_HOST: '10.0.0.1:6443' } });
    expect(k.cluster).toEqual({ server: 'https://10.0.0.1:6443', 'insecure-skip-tls-verify': true });
    // a kubeconfig without a context: KUBE_HOST alone names the cluster, as for the provider
    const empty = await file({});
    expect(resolveKubeconfig({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: empty, KUBE_HOST: '10.0.0.1:8080' } }).cluster.server).toBe('http://10.0.0.1:8080');
    expect(resolveKubeconfig({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: empty, KUBE_HOST: '10.0.0.1:6443', KUBE_CLUSTER_CA_CERT_DATA: '-----BEGIN CERTIFICATE-----' } }).cluster).toEqual({
      server: 'https://10.0.0.1:6443',
      'certificate-authority-data': Buffer.from('-----BEGIN CERTIFICATE-----').toString('base64'),
    });
    expect(configError(() => resolveKubeconfig({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: two, KUBE_INSECURE: 'maybe' } })).issues).toEqual([{ where: 'env KUBE_INSECURE', message: 'maybe is not true or false' }]);
  });

  it('GIVEN KUBE_PROXY_URL THEN it is the default a cluster proxy-url overrides', async () => {
    expect(resolveKubeconfig({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: two, KUBE_PROXY_URL: 'http://proxy:3128' } }).cluster['proxy-url']).toBe('http://proxy:3128');
    const p = await file({ 'current-context': 'x', clusters: [cluster('c', 'https://a:6443', { 'proxy-url': 'http://own:3128' })], contexts: [context('x', 'c', 'u')] });
    expect(resolveKubeconfig({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: p, KUBE_PROXY_URL: 'http://proxy:3128' } }).cluster['proxy-url']).toBe('http://own:3128');
  });
});

describe("resolveKubeconfig: kubectl's checks", () => {
  it('GIVEN an exec plugin of v1 without interactiveMode, and as-groups without as THEN both are named', async () => {
    const f = await file({
      'current-context': 'x',
      clusters: [cluster('c', 'https://a:6443')],
      users: [user('u', { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'get-token' }, 'as-groups': ['g'] })],
      contexts: [context('x', 'c', 'u')],
    });
    expect(configError(() => resolveKubeconfig({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: f } })).issues.map((i) => i.message)).toEqual([
      'exec.interactiveMode must be specified (Never, IfAvailable or Always) for an apiVersion v1 plugin',
      'as-uid, as-groups or as-user-extra given without as (the user to impersonate)',
    ]);
  });

  it('GIVEN a v1beta1 plugin without interactiveMode THEN it is IfAvailable (the v1beta1 default)', async () => {
    const f = await file({
      'current-context': 'x',
      clusters: [cluster('c', 'https://a:6443')],
      users: [user('u', { exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', command: 'get-token' } })],
      contexts: [context('x', 'c', 'u')],
    });
    expect(resolveKubeconfig({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: f } }).user.exec?.interactiveMode).toBe('IfAvailable');
  });

  it('GIVEN a token and basic auth, and a CA file that is not there THEN each is named', async () => {
    const f = await file({
      'current-context': 'x',
      clusters: [cluster('c', 'https://a:6443', { 'certificate-authority': 'nowhere.crt' })],
      users: [user('u', { token: 't', username: 'me', password: 'pw' })],
      contexts: [context('x', 'c', 'u')],
    });
    const messages = configError(() => resolveKubeconfig({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: f } })).issues.map((i) => i.message);
    expect(messages).toEqual([expect.stringContaining('more than one authentication method found: token, basicAuth'), expect.stringContaining('unable to read certificate-authority')]);
  });
});

describe('clusterIdentityText: what the verified no-op check compares', () => {
  let f = '';
  const plugin = { apiVersion: 'client.authentication.k8s.io/v1', command: '/usr/bin/get-token', args: ['--cluster', 'a'], env: [{ name: 'SECRET_ENV', value: 'env-secret-value' }], interactiveMode: 'Never' };
  beforeAll(async () => {
    f = await file({
      'current-context': 'one',
      clusters: [cluster('c1', 'https://one:6443'), cluster('c2', 'https://two:6443')],
      users: [user('u1', { exec: plugin }), user('u2', { token: 'static-token-value' })],
      contexts: [context('one', 'c1', 'u1'), context('two', 'c2', 'u2')],
    });
  });

  it('GIVEN KUBE_CTX, a KUBE_* variable, a proxy variable or TF_CLI_ARGS* THEN the text differs', () => {
    const base = openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: f } }).identity;
    for (const extra of [{ KUBE_CTX: 'two' }, { KUBE_CTX_CLUSTER: 'c2' }, { KUBE_HOST: 'https://one:6443' }, { KUBE_TOKEN: 'x' }, { HTTPS_PROXY: 'http://p:3128' }, { NO_PROXY: 'one' }, { TF_CLI_ARGS: '-lock=false' }, { TF_CLI_ARGS_plan: '-refresh=false' }]) {
      expect(openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: f, ...extra } }).identity, JSON.stringify(extra)).not.toBe(base);
    }
    // unrelated variables do not
    expect(openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: f, EDITOR: 'vi' } }).identity).toBe(base);
  });

  it('GIVEN the exec plugin THEN its command, args and env names are in the text, no secret value is', () => {
    const text = openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: f, KUBE_PASSWORD: 'kube-password-value', HTTPS_PROXY: 'http://me:proxy-password@p:3128' } }).identity;
    expect(text).toContain('/usr/bin/get-token');
    expect(text).toContain('"--cluster","a"');
    expect(text).toContain('SECRET_ENV');
    for (const secret of ['env-secret-value', 'kube-password-value', 'proxy-password']) expect(text).not.toContain(secret);
    const two = openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: f, KUBE_CTX: 'two' } }).identity;
    expect(two).not.toContain('static-token-value');
    expect(two).toContain('sha256:');
  });

  it('GIVEN another context edited in the same file THEN the text is the same; the chosen one edited THEN it differs', async () => {
    const doc = (u2: Record<string, unknown>, args: string[]) => ({
      'current-context': 'one',
      clusters: [cluster('c1', 'https://one:6443'), cluster('c2', 'https://two:6443')],
      users: [user('u1', { exec: { ...plugin, args } }), user('u2', u2)],
      contexts: [context('one', 'c1', 'u1'), context('two', 'c2', 'u2')],
    });
    const g = join(dir, 'edited.yaml');
    await writeFile(g, dump(doc({ token: 'a' }, ['--cluster', 'a'])));
    const before = openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: g } }).identity;
    await writeFile(g, dump(doc({ token: 'b' }, ['--cluster', 'a'])));
    expect(openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: g } }).identity).toBe(before);
    await writeFile(g, dump(doc({ token: 'b' }, ['--cluster', 'b'])));
    expect(openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: g } }).identity).not.toBe(before);
  });
});

describe('the kubeconfig path: one rule (src/paths.ts absoluteFile), against the run\'s cwd', () => {
  it('GIVEN a relative KUBE_CONFIG_PATH or KUBECONFIG THEN it is the cwd\'s, never the process\'s; ~ is $HOME', async () => {
    const f = await file({ 'current-context': 'one', clusters: [cluster('c', 'https://rel:6443')], users: [user('u', { token: 't' })], contexts: [context('one', 'c', 'u')] });
    const name = f.slice(dir.length + 1);
    expect(resolveKubeconfig({ cwd: dir, env: { KUBE_CONFIG_PATH: name } }).files).toEqual([f]);
    expect(resolveKubeconfig({ cwd: dir, env: { KUBECONFIG: name } }).files).toEqual([f]);
    expect(resolveKubeconfig({ cwd: '/', env: { KUBE_CONFIG_PATH: `~/${name}`, HOME: dir } }).cluster.server).toBe('https://rel:6443');
    expect(configError(() => resolveKubeconfig({ cwd: dir, env: { KUBE_CONFIG_PATH: '~bob/k' } })).issues).toEqual([{ where: 'env KUBE_CONFIG_PATH', message: '~bob/k: only ~ and ~/... name a home directory; write the path in full' }]);
  });

  it('GIVEN a run\'s kubeconfig resolved once THEN its access carries the identity; one that cannot be used keeps its error for the reader', async () => {
    const f = await file({ 'current-context': 'one', clusters: [cluster('c', 'https://once:6443')], users: [user('u', { token: 't' })], contexts: [context('one', 'c', 'u')] });
    const run = resolveRunKubeconfig(f, { cwd: '/', env: { KUBE_CONFIG_PATH: 'ignored', KUBE_CTX: 'one' } });
    expect(run.ok && run.access.identity).toBe(openKubeAccess({ cwd: '/', env: { KUBE_CONFIG_PATH: f, KUBE_CTX: 'one' } }).identity);
    expect(requireKubeAccess(run).kubeconfig.cluster.server).toBe('https://once:6443');
    const bad = resolveRunKubeconfig(join(dir, 'missing.yaml'), { cwd: '/', env: {} });
    expect(bad).toMatchObject({ ok: false, file: join(dir, 'missing.yaml') });
    expect(() => requireKubeAccess(bad)).toThrow(ConfigError);
  });
});
