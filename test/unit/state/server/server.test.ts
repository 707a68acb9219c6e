import { randomUUID } from 'node:crypto';
import { createConnection } from 'node:net';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { stopSharedPostgres } from '../../../support/postgres-server.js';
import { call, lockInfo, md5, STORE_KINDS, startTestBackend, stateDoc, type TestBackend } from '../../../support/state-backend.js';

// HTTP-level tests of every protocol and safety rule of the state backend, against a real
// server on a loopback port with each of its real stores: SQLite in a fresh data directory,
// and PostgreSQL (a real server, started for this file) in a fresh database.

const lineage = 'a3b1c2d4-0000-4000-8000-000000000001';

afterAll(stopSharedPostgres, 60_000);

describe.each(STORE_KINDS)('the state backend on %s', (kind) => {
let backend: TestBackend;
let url: string;

beforeEach(async () => {
  backend = await startTestBackend({ kind });
  url = `${backend.url}/g1-all`;
}, 60_000);
afterEach(async () => {
  vi.useRealTimers();
  await backend.stop();
});

describe('GET', () => {
  it('answers 404 (not 200 with an empty body) when no state is stored', async () => {
    const res = await call(url, 'GET');
    expect(res.status).toBe(404);
  });

  it('returns the stored bytes exactly, with their Content-MD5', async () => {
    const body = stateDoc(1, lineage);
    expect((await call(url, 'POST', body)).status).toBe(200);
    const res = await call(url, 'GET');
    expect(res.status).toBe(200);
    expect(res.text).toBe(body.toString());
    expect(res.headers.get('content-md5')).toBe(md5(body));
  });

  it('returns the stored bytes exactly, also bytes that are not UTF-8', async () => {
    const head = Buffer.from(`{"version":4,"serial":1,"lineage":"${lineage}","outputs":{},"resources":[],"note":"`);
    const body = Buffer.concat([head, Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0x80]), Buffer.from('"}')]);
    expect((await call(url, 'POST', body)).status).toBe(200);
    const res = await fetch(url);
    expect(Buffer.from(await res.arrayBuffer()).equals(body)).toBe(true);
    expect(Buffer.from((await backend.store.read('g1-all'))!.body).equals(body)).toBe(true);
  });

  it('answers 304 to If-None-Match of the latest version\'s ETag, and the whole body to an older one, to ?serial=, and after a DELETE', async () => {
    expect((await call(url, 'POST', stateDoc(1, lineage))).status).toBe(200);
    const first = (await call(url, 'GET')).headers.get('etag')!;
    expect(first).toMatch(/^"[0-9a-f]{64}"$/);
    const same = await call(url, 'GET', undefined, { 'If-None-Match': first });
    expect(same.status).toBe(304);
    expect(same.text).toBe('');
    expect(same.headers.get('etag')).toBe(first);
    expect(same.headers.get('x-deploy-state-serial')).toBe('1');
    const body2 = stateDoc(2, lineage);
    expect((await call(url, 'POST', body2)).status).toBe(200);
    const newer = await call(url, 'GET', undefined, { 'If-None-Match': first });
    expect(newer.status).toBe(200);
    expect(newer.text).toBe(body2.toString());
    const second = newer.headers.get('etag')!;
    expect((await call(`${url}?serial=2`, 'GET', undefined, { 'If-None-Match': second })).status).toBe(200);
    expect((await call(url, 'DELETE')).status).toBe(200);
    expect((await call(url, 'GET', undefined, { 'If-None-Match': second })).status).toBe(404);
  });

  it('keeps each key apart', async () => {
    await call(url, 'POST', stateDoc(1, lineage));
    expect((await call(`${backend.url}/g1-web`, 'GET')).status).toBe(404);
  });

  it('answers 5xx, never 404, when its storage fails', async () => {
    await call(url, 'POST', stateDoc(1, lineage));
    await backend.store.close(); // the database is gone from under the server
    const get = await call(url, 'GET');
    // SQLite: a closed database is a storage failure (500); PostgreSQL: no connection (503)
    expect(get.status).toBe(kind === 'sqlite' ? 500 : 503);
    expect(get.json().error).toMatch(kind === 'sqlite' ? /storage/ : /unavailable/);
    const post = await call(url, 'POST', stateDoc(2, lineage));
    expect(post.status).toBe(get.status);
  });
});

describe('LOCK and UNLOCK', () => {
  it('grants a free lock, and a held one answers 423 with the holder\'s LockInfo', async () => {
    const holder = lockInfo({ Who: 'alice@host-a' });
    expect((await call(url, 'LOCK', holder)).status).toBe(200);
    const other = lockInfo({ Who: 'bob@host-b' });
    const res = await call(url, 'LOCK', other);
    expect(res.status).toBe(423);
    expect(res.json()).toEqual(holder);
  });

  it('grants a retried LOCK with the holder\'s own ID (not "locked by itself")', async () => {
    const holder = lockInfo();
    expect((await call(url, 'LOCK', holder)).status).toBe(200);
    expect((await call(url, 'LOCK', holder)).status).toBe(200);
    // still held: another ID is refused
    expect((await call(url, 'LOCK', lockInfo())).status).toBe(423);
  });

  it('answers 200 to UNLOCK of a free lock', async () => {
    expect((await call(url, 'UNLOCK', lockInfo())).status).toBe(200);
  });

  it('refuses UNLOCK with another ID, names the holder, and keeps the lock', async () => {
    const holder = lockInfo({ Who: 'alice@host-a' });
    await call(url, 'LOCK', holder);
    const res = await call(url, 'UNLOCK', lockInfo({ Who: 'bob@host-b' }));
    expect(res.status).toBe(423);
    expect(res.json()).toMatchObject({ ID: holder.ID, Who: 'alice@host-a', Created: holder.Created });
    expect((await call(url, 'LOCK', lockInfo())).status).toBe(423);
  });

  it('releases on UNLOCK with the holder\'s LockInfo, after which another LOCK wins', async () => {
    const holder = lockInfo();
    await call(url, 'LOCK', holder);
    expect((await call(url, 'UNLOCK', holder)).status).toBe(200);
    expect((await call(url, 'LOCK', lockInfo())).status).toBe(200);
  });

  it('force-unlocks by ID with the body `tofu force-unlock` sends (ID, other fields zero)', async () => {
    const holder = lockInfo();
    await call(url, 'LOCK', holder);
    const forceBody = { ID: holder.ID, Operation: '', Info: '', Who: '', Version: '', Created: '0001-01-01T00:00:00Z', Path: '' };
    expect((await call(url, 'UNLOCK', forceBody)).status).toBe(200);
    expect((await call(url, 'LOCK', lockInfo())).status).toBe(200);
  });

  it('answers 400 to a LOCK or UNLOCK without a LockInfo ID', async () => {
    expect((await call(url, 'LOCK', '{"Who":"x"}')).status).toBe(400);
    expect((await call(url, 'LOCK', 'not json')).status).toBe(400);
    expect((await call(url, 'UNLOCK', '')).status).toBe(400);
  });

  it('never expires a lock on a timer', async () => {
    const holder = lockInfo({ Created: new Date().toISOString() });
    await call(url, 'LOCK', holder);
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 400 * 24 * 3600 * 1000); // a year and more later
    const res = await call(url, 'LOCK', lockInfo());
    expect(res.status).toBe(423);
    expect(res.json().ID).toBe(holder.ID);
  });

  it('lets exactly one of 100 concurrent LOCKs win', async () => {
    const results = await Promise.all(Array.from({ length: 100 }, () => call(url, 'LOCK', lockInfo())));
    const winners = results.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    const held = results.filter((r) => r.status === 423).map((r) => r.json().ID);
    expect(held).toHaveLength(99);
    expect(new Set(held).size).toBe(1);
  });

  it('excludes across processes: two stores on one data directory or database share the lock', async () => {
    const other = await backend.openAnother();
    try {
      const holder = lockInfo();
      expect((await other.lock('g1-all', holder)).kind).toBe('acquired');
      const res = await call(url, 'LOCK', lockInfo());
      expect(res.status).toBe(423);
      expect(res.json().ID).toBe(holder.ID);
      // and a write through the other store is seen at once (no cache)
      expect((await other.update('g1-all', stateDoc(4, lineage), { serial: 4, lineage, empty: false }, holder.ID)).kind).toBe('stored');
      expect((await call(url, 'GET')).headers.get('x-deploy-state-serial')).toBe('4');
    } finally {
      await other.close();
    }
  });
});

describe('POST while locked', () => {
  it('needs ?ID= of the holder: none or another answers 423, the holder\'s stores', async () => {
    const holder = lockInfo();
    await call(url, 'LOCK', holder);
    const none = await call(url, 'POST', stateDoc(1, lineage));
    expect(none.status).toBe(423);
    expect(none.json().ID).toBe(holder.ID);
    expect((await call(`${url}?ID=${randomUUID()}`, 'POST', stateDoc(1, lineage))).status).toBe(423);
    expect((await call(url, 'GET')).status).toBe(404);
    expect((await call(`${url}?ID=${holder.ID}`, 'POST', stateDoc(1, lineage))).status).toBe(200);
    expect((await call(url, 'GET')).status).toBe(200);
  });

  it('refuses ?ID= when no lock is held (it was force-unlocked: another run may have written)', async () => {
    const res = await call(`${url}?ID=${randomUUID()}`, 'POST', stateDoc(1, lineage));
    expect(res.status).toBe(409);
    expect((await call(url, 'GET')).status).toBe(404);
  });
});

describe('safety of updates', () => {
  it('keeps every version, each readable by serial', async () => {
    const bodies = [1, 2, 3].map((s) => stateDoc(s, lineage));
    for (const b of bodies) expect((await call(url, 'POST', b)).status).toBe(200);
    expect((await backend.store.versions('g1-all')).map((v) => v.serial)).toEqual([1, 2, 3]);
    expect((await call(`${url}?serial=1`, 'GET')).text).toBe(bodies[0]!.toString());
    expect((await call(url, 'GET')).text).toBe(bodies[2]!.toString());
  });

  it('stores exactly one of 30 concurrent updates to the same next serial (the check and the write are one transaction)', async () => {
    await call(url, 'POST', stateDoc(1, lineage));
    const bodies = Array.from({ length: 30 }, (_, i) => stateDoc(2, lineage, { resources: i + 2 }));
    const statuses = await Promise.all(bodies.map((b) => call(url, 'POST', b).then((r) => r.status)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(29);
    expect((await backend.store.versions('g1-all')).map((v) => v.serial)).toEqual([1, 2]);
  });

  it('refuses a lower serial (409) and keeps the stored state', async () => {
    await call(url, 'POST', stateDoc(5, lineage));
    const res = await call(url, 'POST', stateDoc(4, lineage, { resources: 3 }));
    expect(res.status).toBe(409);
    expect(res.json().error).toMatch(/lower/);
    expect((await call(url, 'GET')).text).toBe(stateDoc(5, lineage).toString());
  });

  it('refuses the same serial with other bytes, and accepts an identical resend without a new version', async () => {
    const body = stateDoc(3, lineage);
    expect((await call(url, 'POST', body)).status).toBe(200);
    const resend = await call(url, 'POST', body);
    expect(resend.status).toBe(200);
    expect(await backend.store.versions('g1-all')).toHaveLength(1);
    const other = await call(url, 'POST', stateDoc(3, lineage, { resources: 2 }));
    expect(other.status).toBe(409);
    expect((await call(url, 'GET')).text).toBe(body.toString());
  });

  it('refuses another lineage over a non-empty state', async () => {
    await call(url, 'POST', stateDoc(2, lineage));
    const res = await call(url, 'POST', stateDoc(9, 'b0000000-0000-4000-8000-000000000002'));
    expect(res.status).toBe(409);
    expect(res.json().error).toMatch(/lineage/);
  });

  it('accepts another lineage over an empty state (nothing is lost)', async () => {
    await call(url, 'POST', stateDoc(2, lineage, { resources: 0 }));
    const res = await call(url, 'POST', stateDoc(1, 'b0000000-0000-4000-8000-000000000002'));
    expect(res.status).toBe(200);
  });

  it('checks Content-MD5 when sent: a mismatch is 400 and stores nothing', async () => {
    const body = stateDoc(1, lineage);
    const bad = await call(url, 'POST', body, { 'Content-MD5': md5(Buffer.from('something else')) });
    expect(bad.status).toBe(400);
    expect((await call(url, 'GET')).status).toBe(404);
    expect((await call(url, 'POST', body, { 'Content-MD5': md5(body) })).status).toBe(200);
  });

  it('answers 400 to a body that is not a state document', async () => {
    expect((await call(url, 'POST', '{"serial": 1}')).status).toBe(400);
    expect((await call(url, 'POST', 'garbage')).status).toBe(400);
    expect((await call(url, 'POST', '')).status).toBe(400);
  });

  it('answers 400 to a bad key and 405 to an unknown method', async () => {
    expect((await call(`${backend.url}/..%2Fetc`, 'GET')).status).toBe(400);
    expect((await call(`${backend.url}/`, 'GET')).status).toBe(400);
    await call(url, 'POST', stateDoc(1, lineage));
    const patch = await call(url, 'PATCH', stateDoc(2, lineage));
    expect(patch.status).toBe(405);
    expect(patch.headers.get('allow')).toContain('DELETE');
    expect((await call(url, 'GET')).text).toBe(stateDoc(1, lineage).toString());
  });
});

describe('DELETE', () => {
  it('runs OpenTofu\'s client test sequence: PUT, GET, DELETE, then GET finds nothing', async () => {
    // remote.TestClient (internal/states/remote/testing.go): Put, Get, Delete, Get == nil
    const body = stateDoc(1, lineage);
    expect((await call(url, 'PUT', body)).status).toBe(200);
    expect((await call(url, 'GET')).text).toBe(body.toString());
    expect((await call(url, 'DELETE')).status).toBe(200);
    expect((await call(url, 'GET')).status).toBe(404);
  });

  it('keeps the deleted versions readable, and is itself a version', async () => {
    for (const s of [1, 2]) await call(url, 'POST', stateDoc(s, lineage));
    expect((await call(url, 'DELETE')).json()).toEqual({ deleted: true, serial: 2 });
    const versions = await backend.store.versions('g1-all');
    expect(versions.map((v) => [v.serial, v.deleted])).toEqual([
      [1, false],
      [2, false],
      [2, true],
    ]);
    expect(versions[2]).toMatchObject({ size: 0, lineage });
    expect((await call(`${url}?serial=2`, 'GET')).text).toBe(stateDoc(2, lineage).toString());
    expect((await call(`${url}?serial=1`, 'GET')).text).toBe(stateDoc(1, lineage).toString());
    const listed = (await call(`${backend.url}/_deploy/v1/states`, 'GET')).json();
    expect(listed).toMatchObject([{ key: 'g1-all', deleted: true, versions: 3, latest: { serial: 2, deleted: true } }]);
  });

  it('answers a retried DELETE with 200 and stores nothing new; a key that never had a state: 404', async () => {
    await call(url, 'POST', stateDoc(1, lineage));
    expect((await call(url, 'DELETE')).status).toBe(200);
    expect((await call(url, 'DELETE')).status).toBe(200);
    expect(await backend.store.versions('g1-all')).toHaveLength(2);
    expect((await call(`${backend.url}/never-stored`, 'DELETE')).status).toBe(404);
  });

  it('lets a deleted key start afresh: a new lineage and a lower serial are accepted', async () => {
    await call(url, 'POST', stateDoc(5, lineage));
    await call(url, 'DELETE');
    const fresh = stateDoc(1, 'b0000000-0000-4000-8000-000000000009');
    expect((await call(url, 'POST', fresh)).status).toBe(200);
    expect((await call(url, 'GET')).text).toBe(fresh.toString());
    expect((await call(`${backend.url}/_deploy/v1/states`, 'GET')).json()[0]).toMatchObject({ deleted: false, versions: 3 });
  });

  it('is refused while another ID holds the lock (423 with the holder), allowed with the holder\'s ID', async () => {
    await call(url, 'POST', stateDoc(1, lineage));
    const holder = lockInfo({ Who: 'alice@host-a' });
    await call(url, 'LOCK', holder);
    const none = await call(url, 'DELETE');
    expect(none.status).toBe(423);
    expect(none.json()).toEqual(holder);
    expect((await call(`${url}?ID=${randomUUID()}`, 'DELETE')).status).toBe(423);
    expect((await call(url, 'GET')).status).toBe(200);
    expect((await call(`${url}?ID=${holder.ID}`, 'DELETE')).status).toBe(200);
    expect((await call(url, 'GET')).status).toBe(404);
    // the lock stays until its holder releases it
    expect((await call(url, 'LOCK', lockInfo())).status).toBe(423);
  });

  it('refuses ?ID= when no lock is held', async () => {
    await call(url, 'POST', stateDoc(1, lineage));
    expect((await call(`${url}?ID=${randomUUID()}`, 'DELETE')).status).toBe(409);
    expect((await call(url, 'GET')).status).toBe(200);
  });
});

describe('body size limit', () => {
  it('answers 413 to a body over the limit, declared or streamed', async () => {
    const small = await startTestBackend({ kind, maxBodyBytes: 10_000 });
    try {
      const big = stateDoc(1, lineage, { pad: 20_000 });
      expect((await call(`${small.url}/k`, 'POST', big)).status).toBe(413);
      // chunked: no Content-Length, the limit applies while reading
      const status = await rawChunkedPost(small.url, '/k', big);
      expect(status).toBe(413);
      // a declared length over the limit is refused before the body is read
      expect(await rawDeclaredPost(small.url, '/k', 1_000_000_000)).toBe(413);
      expect((await call(`${small.url}/k`, 'GET')).status).toBe(404);
      expect((await call(`${small.url}/k`, 'POST', stateDoc(1, lineage))).status).toBe(200);
    } finally {
      await small.stop();
    }
  });
});

describe('basic auth', () => {
  it('answers 401 without or with wrong credentials, and serves with the right ones', async () => {
    const creds = { username: 'ops', password: 's3cret-pw' };
    const authed = await startTestBackend({ kind, credentials: creds });
    const basic = (u: string, p: string) => ({ Authorization: `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}` });
    try {
      const res = await call(`${authed.url}/k`, 'GET');
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Basic/);
      expect((await call(`${authed.url}/k`, 'GET', undefined, basic('ops', 'wrong'))).status).toBe(401);
      expect((await call(`${authed.url}/k`, 'LOCK', lockInfo(), basic('ops', 'wrong'))).status).toBe(401);
      expect((await call(`${authed.url}/_deploy/v1/states`, 'GET')).status).toBe(401);
      expect((await call(`${authed.url}/k`, 'GET', undefined, basic('ops', 's3cret-pw'))).status).toBe(404);
      expect((await call(`${authed.url}/k`, 'LOCK', lockInfo(), basic('ops', 's3cret-pw'))).status).toBe(200);
    } finally {
      await authed.stop();
    }
  });
});

});

/** Sends only the headers of a POST declaring `length` bytes; resolves with the status. */
function rawDeclaredPost(base: string, path: string, length: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const { sock } = statusSocket(base, resolve);
    sock.setTimeout(5_000, () => sock.destroy(new Error('no answer before the body: the declared length was not checked')));
    sock.on('error', reject);
    sock.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: ${length}\r\nContent-Type: application/json\r\n\r\n{`);
  });
}

/** POSTs with Transfer-Encoding: chunked (fetch always sends a length for a Buffer). */
function rawChunkedPost(base: string, path: string, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const { sock, answered } = statusSocket(base, resolve);
    sock.setTimeout(10_000, () => sock.destroy(new Error('timeout')));
    sock.on('error', (err) => (answered() ? undefined : reject(err)));
    sock.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n`);
    for (let i = 0; i < body.length; i += 4096) {
      const chunk = body.subarray(i, i + 4096);
      sock.write(`${chunk.length.toString(16)}\r\n`);
      sock.write(chunk);
      sock.write('\r\n');
    }
    sock.write('0\r\n\r\n');
  });
}

/** A raw connection to `base` that resolves with the status of the first reply line and closes. */
function statusSocket(base: string, resolve: (status: number) => void) {
  const { hostname, port } = new URL(base);
  const sock = createConnection({ host: hostname, port: Number(port) });
  let got = '';
  sock.on('data', (d) => {
    got += String(d);
    const m = /^HTTP\/1\.1 (\d{3})/.exec(got);
    if (m) {
      resolve(Number(m[1]));
      sock.destroy();
    }
  });
  return { sock, answered: () => got !== '' };
}
