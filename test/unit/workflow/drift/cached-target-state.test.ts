import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { keptViewFile, readState, stateView, type StateReadContext } from '../../../../src/workflow/drift/cached-target-state.js';
import { startStateServer } from '../../../../src/state/server/server.js';
import { call, startTestBackend, type TestBackend } from '../../../support/state-backend.js';
import { httpBackend } from '../../../../src/config/backend-coordinates.js';

const lineage = 'a3b1c2d4-0000-4000-8000-000000000002';

/** A state as tofu writes it, with one resource of each kind the readers take or leave. */
function state(serial: number): string {
  return JSON.stringify({
    version: 4,
    terraform_version: '1.11.0',
    serial,
    lineage,
    outputs: { nodes: { value: { m001: 'x' }, type: ['object', {}] } },
    resources: [
      { mode: 'managed', type: 'kubernetes_manifest', name: 'm001_deployment', provider: 'p', instances: [{ schema_version: 1, attributes: { manifest: { value: { kind: 'Deployment' } }, object: { value: { big: 'typed object' } } }, private: 'bnVsbA==' }] },
      { mode: 'managed', type: 'terraform_data', name: 'm001_pushed-digest', provider: 'p', instances: [{ attributes: { output: { value: { digest: 'sha256:ab' } }, input: { value: 'x' } } }] },
      { mode: 'managed', type: 'null_resource', name: 'm001_push', provider: 'p', instances: [{ index_key: 0, status: 'tainted', attributes: { triggers: { script: 'long' } } }] },
      { mode: 'managed', type: 'kubernetes_service_account_v1', name: 'm001_account', provider: 'p', instances: [{ schema_version: 0, attributes: { automount_service_account_token: false, metadata: [{ name: 'node-m001', annotations: {} }] }, private: 'bnVsbA==' }] },
      { mode: 'data', type: 'kubernetes_resources', name: 'runtime_class', provider: 'p', instances: [{ attributes: { objects: [{ big: 'list' }] } }] },
    ],
  });
}

describe('stateView (the state as the check reads it)', () => {
  it('trusts a version 4 state with its lineage and serial, and refuses the others, saying why', () => {
    expect(stateView(JSON.stringify({ version: 4, lineage: 'l', serial: 3, resources: [], outputs: {} })).untrusted).toBeUndefined();
    expect(stateView(JSON.stringify({ serial: 3, lineage: 'l', meta: {}, encrypted_data: 'AAAA', encryption_version: 'v0' })).untrusted).toContain('encrypted');
    expect(stateView(JSON.stringify({ version: 5, lineage: 'l', serial: 3, resources: [] })).untrusted).toBe('the state has format version 5, not 4');
    expect(stateView(JSON.stringify({ version: 4, serial: 3, resources: [] })).untrusted).toBe('the state has no lineage or serial');
    expect(stateView('{').untrusted).toBe('the state is not JSON');
  });

  it('GIVEN resources of every kind THEN the view keeps each with its instances and only the attributes its readers take', () => {
    const v = stateView(state(4));
    expect(v.serial).toBe(4);
    expect(v.outputs.nodes?.value).toEqual({ m001: 'x' });
    expect(v.resources).toEqual([
      { mode: 'managed', type: 'kubernetes_manifest', name: 'm001_deployment', instances: [{ attributes: { manifest: { value: { kind: 'Deployment' } } } }] },
      { mode: 'managed', type: 'terraform_data', name: 'm001_pushed-digest', instances: [{ attributes: { output: { value: { digest: 'sha256:ab' } } } }] },
      { mode: 'managed', type: 'null_resource', name: 'm001_push', instances: [{ index_key: 0, status: 'tainted', attributes: {} }] },
      // a typed object whole: what a field another writer holds is compared with (issue 45)
      { mode: 'managed', type: 'kubernetes_service_account_v1', name: 'm001_account', instances: [{ attributes: { automount_service_account_token: false, metadata: [{ name: 'node-m001', annotations: {} }] } }] },
      { mode: 'data', type: 'kubernetes_resources', name: 'runtime_class', instances: [{ attributes: {} }] },
    ]);
  });
});

describe('readState and the view kept by ETag', () => {
  let backend: TestBackend;
  let dir: string;
  let ctx: StateReadContext;
  beforeEach(async () => {
    backend = await startTestBackend();
    dir = mkdtempSync(join(tmpdir(), 'state-view-'));
    ctx = { model: { stateKey: 'g1-all' }, env: { DEPLOY_STATE_DIR: dir }, backend: { http: httpBackend('TF_HTTP_ADDRESS', `${backend.url}/g1-all`), embedded: false }, signal: AbortSignal.timeout(10_000) };
  });
  afterEach(async () => {
    await backend.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('GIVEN no state THEN undefined, and nothing is kept', async () => {
    expect(await readState(ctx)).toBeUndefined();
    expect(existsSync(keptViewFile(ctx))).toBe(false);
  });

  it('GIVEN the view of the latest version kept THEN the backend answers 304 and the kept view is the answer; a newer version is read whole', async () => {
    expect((await call(ctx.backend.http.address, 'POST', state(1))).status).toBe(200);
    expect((await readState(ctx))?.serial).toBe(1);
    const kept = JSON.parse(readFileSync(keptViewFile(ctx), 'utf8'));
    expect(kept.etag).toMatch(/^"[0-9a-f]{64}"$/);
    // a mark only the kept file has: seen again only if the backend said "not modified"
    writeFileSync(keptViewFile(ctx), JSON.stringify({ ...kept, view: { ...kept.view, lineage: 'from the kept view' } }));
    expect((await readState(ctx))?.lineage).toBe('from the kept view');
    expect((await call(ctx.backend.http.address, 'POST', state(2))).status).toBe(200);
    const newer = await readState(ctx);
    expect(newer?.serial).toBe(2);
    expect(newer?.lineage).toBe(lineage);
    expect(JSON.parse(readFileSync(keptViewFile(ctx), 'utf8')).view.serial).toBe(2);
  });

  it('GIVEN the embedded backend, on another port each run THEN the view kept for this state directory is still used', async () => {
    expect((await call(ctx.backend.http.address, 'POST', state(1))).status).toBe(200);
    const embedded = { ...ctx, backend: { ...ctx.backend, embedded: true } };
    await readState(embedded);
    const kept = JSON.parse(readFileSync(keptViewFile(ctx), 'utf8'));
    writeFileSync(keptViewFile(ctx), JSON.stringify({ ...kept, view: { ...kept.view, lineage: 'from the kept view' } }));
    const store = await backend.openAnother();
    const next = await startStateServer({ store, listen: { host: '127.0.0.1', port: 0, loopback: true } });
    try {
      expect((await readState({ ...embedded, backend: { ...embedded.backend, http: httpBackend('TF_HTTP_ADDRESS', `${next.url}/g1-all`) } }))?.lineage).toBe('from the kept view');
      // not embedded, the other address is another backend: read whole
      expect((await readState({ ...ctx, backend: { ...ctx.backend, http: httpBackend('TF_HTTP_ADDRESS', `${next.url}/g1-all`) } }))?.lineage).toBe(lineage);
    } finally {
      await next.close();
      await store.close();
    }
  });

  it('GIVEN a kept view of another backend address, or one that does not read back THEN the state is read whole', async () => {
    expect((await call(ctx.backend.http.address, 'POST', state(1))).status).toBe(200);
    await readState(ctx);
    const kept = JSON.parse(readFileSync(keptViewFile(ctx), 'utf8'));
    writeFileSync(keptViewFile(ctx), JSON.stringify({ ...kept, backend: 'http://127.0.0.1:1/other', view: { ...kept.view, lineage: 'other' } }));
    expect((await readState(ctx))?.lineage).toBe(lineage);
    writeFileSync(keptViewFile(ctx), '{"half');
    expect((await readState(ctx))?.lineage).toBe(lineage);
  });

  it('GIVEN a view kept by a version that read fewer attributes (no format 2) THEN it is not used: the state is read whole', async () => {
    expect((await call(ctx.backend.http.address, 'POST', state(1))).status).toBe(200);
    await readState(ctx);
    const { format, ...older } = JSON.parse(readFileSync(keptViewFile(ctx), 'utf8'));
    expect(format).toBe(2);
    writeFileSync(keptViewFile(ctx), JSON.stringify({ ...older, view: { ...older.view, lineage: 'kept by an older deploy' } }));
    expect((await readState(ctx))?.lineage).toBe(lineage);
  });
});

describe('readState against a backend without sha256 ETags', () => {
  let server: Server;
  let dir: string;
  const tags: (string | undefined)[] = [];
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'state-view-'));
    server = createServer((req, res) => {
      const tag = tags.shift();
      res.writeHead(200, { 'Content-Type': 'application/json', ...(tag !== undefined ? { ETag: tag } : {}) });
      res.end(state(7));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });
  afterEach(async () => {
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('GIVEN no ETag, an opaque one, or a sha256 that is not of the bytes THEN the state is read and no view is kept', async () => {
    const port = (server.address() as { port: number }).port;
    const ctx: StateReadContext = { model: { stateKey: 'g1-all' }, env: { DEPLOY_STATE_DIR: dir }, backend: { http: httpBackend('TF_HTTP_ADDRESS', `http://127.0.0.1:${port}/g1-all`), embedded: false }, signal: AbortSignal.timeout(10_000) };
    tags.push(undefined, 'W/"1"', `"${'0'.repeat(64)}"`);
    for (let i = 0; i < 3; i++) {
      expect((await readState(ctx))?.serial).toBe(7);
      expect(existsSync(keptViewFile(ctx))).toBe(false);
    }
  });
});
