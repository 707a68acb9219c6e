/**
 * Captures real answers of the API server, one per class of failure that deploy tells apart
 * (src/contract/api/api-status.ts), into test/fixtures/api-answers/<class>.json: the HTTP status
 * and the body exactly as the server sent them (only the addresses of the API server and of
 * this script's stalling listener are replaced by `<api-server>` and `<stall-server>`). The
 * unit tests classify these answers, so the classes rest on what a cluster says, not on what
 * we think it says (issue 45).
 *
 *     node test/support/capture-api-answers.ts        (the local cluster up: npm run cluster:up)
 *
 * Everything it creates is in the namespace `api-corpus` or named `api-corpus-*` (a webhook
 * configuration, a FlowSchema, a PriorityLevelConfiguration: each scoped to that namespace or
 * to its own ServiceAccount, so no one else's request is touched), and is deleted at the end,
 * also on a failure or Ctrl-C. The kubeconfig: KUBE_CONFIG_PATH, else the local cluster's
 * admin kubeconfig. Not part of any test run: the fixtures are checked in.
 *
 * The case `provider` runs the pinned tofu with the patched kubernetes provider of the cache
 * (as deploy does: tofu-patched.rc) on a graph of kubernetes_manifest resources that the
 * cluster refuses, and keeps tofu's -json diagnostic lines (provider-relay.jsonl): how the
 * provider relays a Status.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request, type RequestOptions } from 'node:https';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { withDeadline } from '../../src/deadline.ts';
import { cacheDir, stateDir } from '../../src/paths.ts';

const NS = 'api-corpus';
const OUT = join(import.meta.dirname, '..', 'fixtures', 'api-answers');
/** The label of the objects the failing webhooks look at (their objectSelector), besides the namespace. */
const WEBHOOK_LABEL = 'api-corpus.deploy/webhook';

// --- the cluster's coordinates ---------------------------------------------------------------

interface Kubeconfig {
  clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
  users: { user: { 'client-certificate-data': string; 'client-key-data': string } }[];
}
const kubeconfigPath = process.env.KUBE_CONFIG_PATH ?? join(stateDir(), 'cluster', 'admin.kubeconfig');
const kubeconfig = load(readFileSync(kubeconfigPath, 'utf8')) as Kubeconfig;
const b64 = (s: string) => Buffer.from(s, 'base64');
const server = new URL(kubeconfig.clusters[0]!.cluster.server);
const ca = b64(kubeconfig.clusters[0]!.cluster['certificate-authority-data']);
const admin = { cert: b64(kubeconfig.users[0]!.user['client-certificate-data']), key: b64(kubeconfig.users[0]!.user['client-key-data']) };

// --- one request, its answer as sent ---------------------------------------------------------

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}
interface Call {
  readonly body?: unknown;
  readonly type?: string;
  /** A bearer token instead of the admin's client certificate. */
  readonly token?: string;
}

function call(method: string, path: string, c: Call = {}): Promise<Answer> {
  const text = c.body === undefined ? undefined : typeof c.body === 'string' ? c.body : JSON.stringify(c.body);
  const opts: RequestOptions = {
    method,
    host: server.hostname,
    port: server.port,
    path,
    ca,
    ...(c.token ? {} : admin),
    headers: {
      accept: 'application/json',
      ...(c.token ? { authorization: `Bearer ${c.token}` } : {}),
      ...(text !== undefined ? { 'content-type': c.type ?? 'application/json', 'content-length': Buffer.byteLength(text) } : {}),
    },
    agent: false,
  };
  return new Promise((resolve, reject) => {
    const req = request(opts, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (b: Buffer) => chunks.push(b));
      res.on('error', reject);
      res.on('end', () => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers[k] = v;
        resolve({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end(text);
  });
}

/** The answer, which must be a success (setting up and cleaning up). */
async function ok(method: string, path: string, c: Call = {}, also: number[] = []): Promise<any> {
  const a = await call(method, path, c);
  if ((a.status < 200 || a.status > 299) && !also.includes(a.status)) throw new Error(`${method} ${path}: HTTP ${a.status}: ${a.body.slice(0, 400)}`);
  return a.body ? JSON.parse(a.body) : undefined;
}

// --- the fixtures ------------------------------------------------------------------------------

let stall: { server: Server; host: string; sockets: Set<Socket> } | undefined;

function scrub(text: string): string {
  let out = text.split(server.host).join('<api-server>');
  if (stall) out = out.split(stall.host).join('<stall-server>');
  return out;
}

/** The cluster's version and the day, in every fixture. */
let stamp = { kubernetes: '', captured: '' };

/** Writes one captured answer: what was asked, and the status and body as the server sent them. */
function record(file: string, what: string, method: string, path: string, a: Answer, expect: number): void {
  if (a.status !== expect) throw new Error(`${file}: expected HTTP ${expect}, got ${a.status}: ${a.body.slice(0, 400)}`);
  // Retry-After is the one header a class reads (429); the rest is the server's chatter
  const headers = a.headers['retry-after'] !== undefined ? { 'retry-after': a.headers['retry-after'] } : {};
  const fixture = { what, ...stamp, request: { method, path }, status: a.status, headers, body: scrub(a.body) };
  writeFileSync(join(OUT, file), `${JSON.stringify(fixture, null, 2)}\n`);
  log(`${file}: HTTP ${a.status}`);
}

function log(msg: string): void {
  process.stderr.write(`[capture] ${msg}\n`);
}

// --- the objects -------------------------------------------------------------------------------

const deployments = `/apis/apps/v1/namespaces/${NS}/deployments`;
const configmaps = `/api/v1/namespaces/${NS}/configmaps`;
const webhooks = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const flowSchemas = '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas';
const priorityLevels = '/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations';

/** The Deployment of the bug of issue 45: `Recreate` with `rollingUpdate`, as an apply would write it. */
function recreateWithRollingUpdate(name: string) {
  const labels = { app: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS },
    spec: {
      replicas: 0,
      selector: { matchLabels: labels },
      strategy: { type: 'Recreate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: { metadata: { labels }, spec: { containers: [{ name, image: 'example.invalid/none:1' }] } },
    },
  };
}

const configMap = (name: string, labels: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data: { a: '1' } });

/** A webhook configuration that only sees ConfigMaps of api-corpus carrying WEBHOOK_LABEL=<value>. */
function failingWebhook(name: string, value: string, clientConfig: unknown, timeoutSeconds: number, failurePolicy: 'Fail' | 'Ignore') {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name },
    webhooks: [
      {
        name: `${value}.api-corpus.deploy.invalid`,
        clientConfig,
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], scope: 'Namespaced' }],
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } },
        objectSelector: { matchLabels: { [WEBHOOK_LABEL]: value } },
        failurePolicy,
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        timeoutSeconds,
      },
    ],
  };
}

/** A listener that takes connections and never answers: a webhook that stalls. */
async function startStall(): Promise<NonNullable<typeof stall>> {
  const sockets = new Set<Socket>();
  const s = createServer((sock) => {
    sockets.add(sock);
    sock.on('error', () => undefined);
    sock.on('close', () => sockets.delete(sock));
  });
  await new Promise<void>((resolve) => s.listen(0, server.hostname, resolve));
  const port = (s.address() as { port: number }).port;
  return { server: s, host: `${server.hostname}:${port}`, sockets };
}

async function tokenOf(sa: string): Promise<string> {
  await ok('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { body: { metadata: { name: sa } } });
  const tr = await ok('POST', `/api/v1/namespaces/${NS}/serviceaccounts/${sa}/token`, { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } } });
  return tr.status.token as string;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms / 1000}s`);
    await pause(500);
  }
}

// --- the cases ---------------------------------------------------------------------------------

async function captureInvalid(): Promise<void> {
  // as the provider writes a kubernetes_manifest: a server-side apply, forced
  const path = `${deployments}/recreate?fieldManager=deploy&force=true`;
  const a = await call('PATCH', path, { body: recreateWithRollingUpdate('recreate'), type: 'application/apply-patch+yaml' });
  record('invalid.json', 'a server-side apply of a Deployment with strategy.type Recreate and strategy.rollingUpdate', 'PATCH', path, a, 422);
}

async function captureConflicts(): Promise<void> {
  const first = await ok('POST', configmaps, { body: configMap('stale') });
  await ok('PUT', `${configmaps}/stale`, { body: { ...first, data: { a: '2' } } });
  const path = `${configmaps}/stale`;
  const a = await call('PUT', path, { body: { ...first, data: { a: '3' } } });
  record('conflict.json', 'an update of a ConfigMap with the resourceVersion it had before another update', 'PUT', path, a, 409);
  const again = await call('POST', configmaps, { body: configMap('stale') });
  record('conflict-already-exists.json', 'a create of a ConfigMap whose name is taken', 'POST', configmaps, again, 409);
  // what deploy's ownership step sends: a JSON patch that tests the resourceVersion first
  const test = await call('PATCH', path, { body: [{ op: 'test', path: '/metadata/resourceVersion', value: first.metadata.resourceVersion }, { op: 'replace', path: '/data/a', value: '4' }], type: 'application/json-patch+json' });
  record('invalid-patch-test.json', "a JSON patch whose test of metadata.resourceVersion fails (the object moved since it was read)", 'PATCH', path, test, 422);
}

async function captureNotFound(): Promise<void> {
  const path = `${deployments}/absent`;
  record('not-found.json', 'a read of a Deployment that does not exist', 'GET', path, await call('GET', path), 404);
}

async function captureAuth(): Promise<void> {
  const token = await tokenOf('api-corpus-nobody');
  record('forbidden.json', 'a list of Deployments by a ServiceAccount that no role grants anything', 'GET', deployments, await call('GET', deployments, { token }), 403);
  record('unauthorized.json', 'a list of Deployments with a bearer token the server does not know', 'GET', deployments, await call('GET', deployments, { token: 'not-a-token' }), 401);
}

/** A ResourceQuota of 0 pods in api-corpus, counted. */
async function noPodsQuota(): Promise<void> {
  const quotas = `/api/v1/namespaces/${NS}/resourcequotas`;
  if ((await call('GET', `${quotas}/api-corpus-no-pods`)).status === 200) return;
  await ok('POST', quotas, { body: { metadata: { name: 'api-corpus-no-pods' }, spec: { hard: { pods: '0' } } } });
  // the quota admits nothing until the controller has counted what it limits (status.hard)
  await until('the quota counted', async () => ((await ok('GET', `${quotas}/api-corpus-no-pods`)).status?.hard?.pods !== undefined ? true : undefined));
}

async function captureQuota(): Promise<void> {
  await noPodsQuota();
  const pods = `/api/v1/namespaces/${NS}/pods`;
  const pod = { metadata: { name: 'over-quota' }, spec: { containers: [{ name: 'c', image: 'example.invalid/none:1' }] } };
  record('quota.json', 'a create of a Pod in a namespace whose ResourceQuota allows 0 pods', 'POST', pods, await call('POST', pods, { body: pod }), 403);
}

/** The webhook (failurePolicy Fail) whose Service does not exist, in force: a create it sees, answered. */
async function noServiceWebhook(): Promise<Answer> {
  if ((await call('GET', `${webhooks}/api-corpus-no-service`)).status === 404) {
    await ok('POST', webhooks, { body: failingWebhook('api-corpus-no-service', 'no-service', { service: { namespace: NS, name: 'no-such-service', path: '/validate' } }, 5, 'Fail') });
  }
  return retryCreate(configMap('webhook-down', { [WEBHOOK_LABEL]: 'no-service' }), 500);
}

async function captureServerError(): Promise<void> {
  const a = await noServiceWebhook();
  record('server-error.json', 'a create that a webhook (failurePolicy Fail) must admit, whose Service does not exist', 'POST', configmaps, a, 500);
}

/** A create, again until the answer has the status (a new webhook configuration takes a moment to be seen). */
async function retryCreate(body: unknown, status: number): Promise<Answer> {
  return until(`HTTP ${status} for a create`, async () => {
    const a = await call('POST', configmaps, { body });
    if (a.status === status) return a;
    if (a.status >= 200 && a.status < 300) await ok('DELETE', `${configmaps}/${(body as { metadata: { name: string } }).metadata.name}`);
    log(`(waiting for the webhook: HTTP ${a.status})`);
    return undefined;
  });
}

/** The listener that stalls and the webhook (failurePolicy Ignore, 10 s) that calls it, once. */
async function stallingWebhook(): Promise<void> {
  if (stall) return;
  stall = await startStall();
  await ok('POST', webhooks, { body: failingWebhook('api-corpus-stall', 'stall', { url: `https://${stall.host}/validate` }, 10, 'Ignore') });
}

async function captureTimeouts(): Promise<void> {
  await stallingWebhook();
  const slow = (name: string) => configMap(name, { [WEBHOOK_LABEL]: 'stall' });
  // a request whose own deadline (?timeout=) has passed before the server could answer it. (A
  // create with ?timeout=2s that the webhook stalls for longer is no Status: the server cut
  // the connection, "Timeout or abort while handling" in its log, on 1.36.3.)
  const path = `${deployments}?timeout=1ms`;
  const a = await until('a 504', async () => {
    const got = await call('GET', path);
    return got.status === 504 ? got : void log(`(GET with ?timeout=1ms: HTTP ${got.status})`);
  });
  record('timeout.json', 'a list of Deployments with ?timeout=1ms: its deadline passed before the server answered', 'GET', path, a, 504);
  // deploy's own clients give up after their deadline (src/deadline.ts withDeadline): no status, no body
  // (again until the webhook is in force: a create it does not stall is answered at once)
  const what = `create ConfigMap ${NS}/client-timeout`;
  const seen = await until('no answer in time', () =>
    withDeadline(what, call('POST', configmaps, { body: slow('client-timeout') }), 2_000).then(
      async (got) => void (got.status === 201 && (await ok('DELETE', `${configmaps}/client-timeout`))),
      (err: Error) => ({ name: err.name, message: err.message }),
    ),
  );
  writeFileSync(join(OUT, 'timeout-client.json'), `${JSON.stringify({ what: 'a create that a webhook stalls, given up by deploy\'s deadline (withDeadline, 2 s): what the client sees', ...stamp, status: null, error: seen }, null, 2)}\n`);
  log(`timeout-client.json: ${seen.name}`);
}

async function captureTooManyRequests(): Promise<void> {
  // A priority level of the least concurrency, lending and borrowing nothing, that rejects
  // what it cannot seat; a FlowSchema sends only our own ServiceAccount to it.
  await ok('POST', priorityLevels, {
    body: {
      metadata: { name: 'api-corpus-tiny' },
      spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, lendablePercent: 0, borrowingLimitPercent: 0, limitResponse: { type: 'Reject' } } },
    },
  });
  const sa = 'api-corpus-limited';
  const token = await tokenOf(sa);
  await ok('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, { body: { metadata: { name: sa }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'get', 'list'] }] } });
  await ok('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
    body: { metadata: { name: sa }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: sa }, subjects: [{ kind: 'ServiceAccount', name: sa, namespace: NS }] },
  });
  const fs = await ok('POST', flowSchemas, {
    body: {
      metadata: { name: 'api-corpus-tiny' },
      spec: {
        priorityLevelConfiguration: { name: 'api-corpus-tiny' },
        matchingPrecedence: 500,
        distinguisherMethod: { type: 'ByUser' },
        rules: [{ subjects: [{ kind: 'ServiceAccount', serviceAccount: { name: sa, namespace: NS } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }] }],
      },
    },
  });
  // the server says which FlowSchema classified a request: ours, once it is in force
  await until('the FlowSchema in force', async () => ((await call('GET', configmaps, { token })).headers['x-kubernetes-pf-flowschema-uid'] === fs.metadata.uid ? true : undefined));
  await stallingWebhook();
  // each create holds a seat while the webhook stalls (10 s); those that find none are rejected
  const creates = Array.from({ length: 16 }, (_, i) => call('POST', configmaps, { token, body: configMap(`seat-${i}`, { [WEBHOOK_LABEL]: 'stall' }) }));
  const answers = await Promise.all(creates);
  log(`(16 creates: ${answers.map((a) => a.status).join(' ')})`);
  const rejected = answers.find((a) => a.status === 429);
  if (!rejected) throw new Error('too-many-requests.json: no create was rejected');
  record('too-many-requests.json', 'a create by a ServiceAccount whose FlowSchema leads to a priority level of the least concurrency (limitResponse Reject), its seats held by creates a webhook stalls', 'POST', configmaps, rejected, 429);
}

// --- setting up and cleaning up ----------------------------------------------------------------

async function cleanUp(): Promise<void> {
  // (the cluster may be restarting under another user of it: each step is tried again for a while)
  for (const path of [`${webhooks}/api-corpus-no-service`, `${webhooks}/api-corpus-stall`, `${flowSchemas}/api-corpus-tiny`, `${priorityLevels}/api-corpus-tiny`, `/api/v1/namespaces/${NS}`]) {
    await until(`DELETE ${path}`, () => ok('DELETE', path, {}, [404]).then(() => true, (err: Error) => void log(`(${err.message}: again)`)), 300_000);
  }
  await until(`namespace ${NS} gone`, () => call('GET', `/api/v1/namespaces/${NS}`).then((a) => (a.status === 404 ? true : undefined), () => undefined), 300_000);
  if (stall) {
    for (const s of stall.sockets) s.destroy();
    stall.server.close();
  }
}

/** A graph of kubernetes_manifest resources the cluster refuses, applied by tofu: its diagnostics as tofu wrote them. */
async function captureProviderRelay(): Promise<void> {
  await noPodsQuota();
  await noServiceWebhook();
  await ok('POST', configmaps, { body: configMap('taken') });
  const manifests: Record<string, unknown> = {
    invalid: recreateWithRollingUpdate('recreate'),
    quota: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'over-quota', namespace: NS }, spec: { containers: [{ name: 'c', image: 'example.invalid/none:1' }] } },
    webhook: { ...configMap('webhook-down', { [WEBHOOK_LABEL]: 'no-service' }), metadata: { name: 'webhook-down', namespace: NS, labels: { [WEBHOOK_LABEL]: 'no-service' } } },
    exists: { ...configMap('taken'), metadata: { name: 'taken', namespace: NS } },
  };
  const graph = {
    terraform: { required_providers: { kubernetes: { source: 'hashicorp/kubernetes', version: '2.38.0' } } },
    provider: { kubernetes: { config_path: kubeconfigPath } },
    resource: { kubernetes_manifest: Object.fromEntries(Object.entries(manifests).map(([k, m]) => [k, { manifest: m, field_manager: { name: 'deploy', force_conflicts: true } }])) },
  };
  const dir = mkdtempSync(join(tmpdir(), 'api-corpus-tofu-'));
  try {
    writeFileSync(join(dir, 'main.tf.json'), JSON.stringify(graph, null, 2));
    const versions = readFileSync(join(import.meta.dirname, '..', '..', 'toolchain', 'versions.env'), 'utf8');
    const tofu = join(cacheDir(), 'tofu', /^TOFU_VERSION=(\S+)$/m.exec(versions)![1]!, 'tofu');
    const env = { ...process.env, TF_CLI_CONFIG_FILE: join(cacheDir(), 'tofu-patched.rc'), TF_IN_AUTOMATION: '1' };
    execFileSync(tofu, ['init', '-input=false', '-no-color'], { cwd: dir, env, stdio: ['ignore', 'ignore', 'inherit'], timeout: 120_000 });
    let out = '';
    try {
      out = execFileSync(tofu, ['apply', '-json', '-auto-approve', '-input=false'], { cwd: dir, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 300_000 });
    } catch (err) {
      out = String((err as { stdout?: unknown }).stdout ?? '');
    }
    const lines = out.split('\n').filter((l) => l.includes('"type":"diagnostic"'));
    if (!lines.some((l) => l.includes('Kubernetes API Error: Invalid'))) throw new Error(`provider-relay.jsonl: no relayed 422 in tofu's output:\n${out.slice(-2000)}`);
    writeFileSync(join(OUT, 'provider-relay.jsonl'), `${lines.map(scrub).join('\n')}\n`);
    log(`provider-relay.jsonl: ${lines.length} diagnostics`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const CASES: Record<string, () => Promise<void>> = {
  invalid: captureInvalid,
  conflict: captureConflicts,
  'not-found': captureNotFound,
  forbidden: captureAuth,
  'server-error': captureServerError,
  timeout: captureTimeouts,
  'too-many-requests': captureTooManyRequests,
  quota: captureQuota, // (the quota refuses pods from then on)
  provider: captureProviderRelay,
};

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const version = await ok('GET', '/version');
  stamp = { kubernetes: version.gitVersion, captured: new Date().toISOString().slice(0, 10) };
  log(`Kubernetes ${version.gitVersion} at ${server.host}; namespace ${NS}`);
  await cleanUp(); // a run that was killed may have left them
  let interrupted = false;
  const onSignal = () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    log('interrupted: cleaning up');
    cleanUp().finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    await ok('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } });
    // (a name or more on the command line: those cases only)
    const only = process.argv.slice(2);
    for (const [name, capture] of Object.entries(CASES)) if (only.length === 0 || only.includes(name)) await capture();
  } finally {
    await cleanUp();
    log(`cleaned up: namespace ${NS}, the api-corpus-* webhook configurations, FlowSchema and priority level deleted`);
  }
}

await main();
