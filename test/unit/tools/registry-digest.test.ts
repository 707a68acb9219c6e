/**
 * The in-process tag reader of the no-op check against a registry of this test's own (the
 * real one, with basic auth, is in test/integration/images-registry.test.ts): the Bearer token
 * exchange with the auth file's credentials, a digest computed from the manifest when the
 * registry does not say it, "unsure" for what it cannot read, and a registry over https with
 * a private CA (K8S_REGISTRY_CA_FILE).
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTagRef, readTagDigests } from '../../../src/tools/registry-digest.js';
import { makeTestCa, type TestCa } from '../../support/test-ca.js';

const MANIFEST = Buffer.from('{"schemaVersion":2}');
const DIGEST = `sha256:${createHash('sha256').update(MANIFEST).digest('hex')}`;
let server: Server;
let host: string;
let dir: string;
const seen: string[] = [];

function handle(req: IncomingMessage, res: ServerResponse): void {
  seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? '-'}`);
  if (req.url?.startsWith('/token')) {
    const url = new URL(req.url, 'http://x');
    if (req.headers.authorization !== `Basic ${Buffer.from('u:p').toString('base64')}` || url.searchParams.get('scope') !== 'repository:ns/web:pull') {
      res.writeHead(401).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token: 'T1' }));
    return;
  }
  if (req.url === '/v2/') {
    res.writeHead(200).end();
    return;
  }
  if (req.headers.authorization !== 'Bearer T1') {
    res.writeHead(401, { 'www-authenticate': `Bearer realm="http://${host}/token",service="test"` }).end();
    return;
  }
  if (req.url === '/v2/ns/web/manifests/v1') {
    res.writeHead(200, { 'docker-content-digest': DIGEST }).end(req.method === 'GET' ? MANIFEST : undefined);
    return;
  }
  if (req.url === '/v2/ns/web/manifests/nodigest') {
    // no Docker-Content-Digest: the client hashes the manifest it gets
    res.writeHead(200).end(req.method === 'GET' ? MANIFEST : undefined);
    return;
  }
  if (req.url === '/v2/ns/web/manifests/broken') {
    res.writeHead(500).end();
    return;
  }
  res.writeHead(404).end();
}

beforeAll(async () => {
  server = createServer(handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const a = server.address();
  host = `127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
  dir = await mkdtemp(join(tmpdir(), 'registry-digest-'));
  await writeFile(join(dir, 'auth.json'), JSON.stringify({ auths: { [host]: { auth: Buffer.from('u:p').toString('base64') } } }));
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
  await rm(dir, { recursive: true, force: true });
});

describe('readTagDigests', () => {
  it('answers a Bearer challenge with a token fetched with the auth file credentials, once per repository', async () => {
    seen.length = 0;
    const env = { REGISTRY_AUTH_FILE: join(dir, 'auth.json') };
    const refs = [`${host}/ns/web:v1`, `${host}/ns/web:gone`, `${host}/ns/web:nodigest`, `${host}/ns/web:broken`];
    const read = await readTagDigests(refs, { tlsVerify: false, env, concurrency: 1 });
    expect(read.get(refs[0]!)).toEqual({ kind: 'digest', digest: DIGEST });
    expect(read.get(refs[1]!)).toEqual({ kind: 'gone' });
    expect(read.get(refs[2]!)).toEqual({ kind: 'digest', digest: DIGEST });
    expect(read.get(refs[3]!)).toMatchObject({ kind: 'unsure', why: expect.stringContaining('answered 500') });
    expect(seen.filter((l) => l.startsWith('GET /token'))).toHaveLength(1);
  });

  it('is unsure, never wrong, without credentials or with a credential helper', async () => {
    const ref = `${host}/ns/web:v1`;
    const none = await readTagDigests([ref], { tlsVerify: false, env: { HOME: dir } });
    expect(none.get(ref)?.kind).toBe('unsure');
    await writeFile(join(dir, 'helper.json'), JSON.stringify({ credHelpers: { [host]: 'pass' } }));
    const helper = await readTagDigests([ref], { tlsVerify: false, env: { REGISTRY_AUTH_FILE: join(dir, 'helper.json') } });
    expect(helper.get(ref)).toMatchObject({ kind: 'unsure', why: expect.stringContaining('credential helper') });
  });

  it('with TLS verification on, does not fall back to plain http', async () => {
    const ref = `${host}/ns/web:v1`;
    expect((await readTagDigests([ref], { tlsVerify: true, env: { REGISTRY_AUTH_FILE: join(dir, 'auth.json') } })).get(ref)?.kind).toBe('unsure');
  });

  it('parses tag references and refuses references by digest', () => {
    expect(parseTagRef('127.0.0.1:5000/fediversity/web:v1')).toEqual({ host: '127.0.0.1:5000', repository: 'fediversity/web', tag: 'v1' });
    expect(parseTagRef(`r.example/web@${DIGEST}`)).toBeUndefined();
    expect(parseTagRef('web:v1')).toBeUndefined();
  });
});

describe('readTagDigests from a registry with a private CA (K8S_REGISTRY_CA_FILE)', () => {
  let tlsServer: HttpsServer;
  let tlsHost: string;
  let ca: TestCa;
  let otherCa: TestCa;

  beforeAll(async () => {
    ca = await makeTestCa(dir, 'registry');
    otherCa = await makeTestCa(dir, 'other');
    // basic auth, like the registry of the e2e test (registry.sh --tls --auth)
    await writeFile(join(dir, 'tls-auth.json'), '{}');
    tlsServer = createHttpsServer({ cert: await readFile(ca.certFile), key: await readFile(ca.keyFile) }, (req, res) => {
      seen.push(`TLS ${req.method} ${req.url} ${req.headers.authorization ?? '-'}`);
      if (req.headers.authorization !== `Basic ${Buffer.from('u:p').toString('base64')}`) {
        res.writeHead(401, { 'www-authenticate': 'Basic realm="registry"' }).end();
        return;
      }
      if (req.url === '/v2/ns/web/manifests/v1') res.writeHead(200, { 'docker-content-digest': DIGEST }).end();
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => tlsServer.listen(0, '127.0.0.1', r));
    const a = tlsServer.address();
    tlsHost = `127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
    await writeFile(join(dir, 'tls-auth.json'), JSON.stringify({ auths: { [tlsHost]: { auth: Buffer.from('u:p').toString('base64') } } }));
  });
  afterAll(() => new Promise((r) => tlsServer.close(r)));

  it('GIVEN the CA that signed the certificate THEN the tag is read over https with basic auth', async () => {
    const ref = `${tlsHost}/ns/web:v1`;
    const gone = `${tlsHost}/ns/web:v2`;
    seen.length = 0;
    const read = await readTagDigests([ref, gone], { tlsVerify: true, caFile: ca.caFile, env: { REGISTRY_AUTH_FILE: join(dir, 'tls-auth.json') } });
    expect(read.get(ref)).toEqual({ kind: 'digest', digest: DIGEST });
    expect(read.get(gone)).toEqual({ kind: 'gone' });
    expect(seen.some((l) => l.startsWith('TLS HEAD /v2/ns/web/manifests/v1 Basic '))).toBe(true);
  });

  it('GIVEN no CA or another CA THEN unsure, saying which CAs were tried and naming the setting; never plain http', async () => {
    const ref = `${tlsHost}/ns/web:v1`;
    const env = { REGISTRY_AUTH_FILE: join(dir, 'tls-auth.json') };
    const none = (await readTagDigests([ref], { tlsVerify: true, env })).get(ref);
    expect(none).toMatchObject({ kind: 'unsure', why: expect.stringContaining("checked against the system's CAs: for a registry with a private CA, set K8S_REGISTRY_CA_FILE") });
    const other = (await readTagDigests([ref], { tlsVerify: true, caFile: otherCa.caFile, env })).get(ref);
    expect(other).toMatchObject({ kind: 'unsure', why: expect.stringContaining(`K8S_REGISTRY_CA_FILE=${otherCa.caFile}: is that the CA that signed the registry's certificate?`) });
    const gone = (await readTagDigests([ref], { tlsVerify: true, caFile: join(dir, 'no-such-ca.pem'), env })).get(ref);
    expect(gone).toMatchObject({ kind: 'unsure', why: expect.stringContaining('cannot read K8S_REGISTRY_CA_FILE') });
  });
});
