import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, repo, startServerProcess } from '../support/state-server.js';
import { stopSharedPostgres } from '../support/postgres-server.js';
import { newStoreData, STORE_KINDS, withStore } from './state-stores.js';

// OpenTofu's own tests of its http backend client (remote.TestClient with POST and with PUT,
// each ending with a DELETE; remote.TestRemoteLocks with two clients), built from OpenTofu
// v1.12.6's source with one test file added (state-opentofu-client/), run against
// `deploy state serve` on each store.

let root: string;
let testBinary: string;
beforeAll(async () => {
  ensureBuilt();
  root = await mkdtemp(join(tmpdir(), 'deploy-state-otf-'));
  const build = spawnSync('bash', [join(repo, 'test', 'integration', 'state-opentofu-client', 'build.sh')], { encoding: 'utf8', timeout: 30 * 60_000 });
  if (build.status !== 0) throw new Error(`building OpenTofu's http client tests failed (exit ${build.status}):\n${build.stderr}`);
  testBinary = build.stdout.trim();
}, 30 * 60_000);
afterAll(async () => {
  await stopSharedPostgres();
  await rm(root, { recursive: true, force: true });
}, 120_000);

describe.each(STORE_KINDS)("OpenTofu's http client tests against deploy state serve on %s", (kind) => {
  it('pass: put, get, delete (then get finds nothing), with POST and with PUT; one lock at a time between two clients', async () => {
    const data = await newStoreData(kind, root, 'otf');
    const server = await startServerProcess(data.data, data.serveEnv);
    try {
      const r = spawnSync(testBinary, ['-test.run', '^TestDeployStateServe$', '-test.v', '-test.count=1'], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH, HOME: process.env.HOME, DEPLOY_STATE_URL: server.url },
        timeout: 120_000,
      });
      const out = `${r.stdout}${r.stderr}`;
      expect(r.status, out).toBe(0);
      expect(out).toContain('--- PASS: TestDeployStateServe');
      expect(out).toContain('DELETE');
    } finally {
      await server.stop();
    }
    // each DELETE was kept as a version: two states written, two deletions, all readable
    await withStore(data, async (s) => {
      const versions = await s.versions('opentofu-client');
      expect(versions.map((v) => v.deleted)).toEqual([false, true, false, true]);
      expect(await s.read('opentofu-client')).toBeUndefined();
      expect(JSON.parse((await s.read('opentofu-client', versions[0]!.serial))!.body.toString()).lineage).toBe('stub-lineage');
      expect(await s.lockOf('opentofu-locks')).toBeUndefined();
    });
  });
});
