import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InterruptedError } from '../../../src/errors.js';
import { parseBackendCoordinates, tofuBackendVariables } from '../../../src/config/backend-coordinates.js';
import { resolveBackend, startEmbeddedBackend } from '../../../src/state/embedded.js';
import { defaultStateDataDir } from '../../../src/config/backend-coordinates.js';
import { tempDir } from '../../support/cli.js';
import { call, lockInfo, stateDoc } from '../../support/state-backend.js';

const basic = (env: Record<string, string>) => ({
  Authorization: `Basic ${Buffer.from(`${env.TF_HTTP_USERNAME}:${env.TF_HTTP_PASSWORD}`).toString('base64')}`,
});

describe('resolveBackend', () => {
  it('passes the operator\'s TF_HTTP_* through unchanged when TF_HTTP_ADDRESS is set, and starts nothing', async () => {
    const env = {
      TF_HTTP_ADDRESS: 'https://state.example.test/team/g1-all',
      TF_HTTP_LOCK_ADDRESS: 'https://state.example.test/team/g1-all/lock',
      TF_HTTP_LOCK_METHOD: 'POST',
      TF_HTTP_USERNAME: 'team',
      TF_HTTP_PASSWORD: 'pw',
      UNRELATED: 'x',
    };
    const backend = await resolveBackend(parseBackendCoordinates(env), 'g1-all');
    expect(backend.embedded).toBe(false);
    expect(backend.address).toBe(env.TF_HTTP_ADDRESS);
    const { UNRELATED: _, ...tfHttp } = env;
    expect(tofuBackendVariables(backend.http)).toEqual(tfHttp);
    await backend.close();
  });

  it('starts the embedded backend under the user\'s state directory when TF_HTTP_ADDRESS is unset', async () => {
    const { dir, cleanup } = await tempDir();
    const env = { DEPLOY_STATE_DIR: dir };
    expect(defaultStateDataDir(env)).toBe(join(dir, 'state'));
    expect(defaultStateDataDir({ XDG_STATE_HOME: '/x/state' })).toBe('/x/state/k8s-deployer/state');
    expect(defaultStateDataDir({ HOME: '/home/u' })).toBe('/home/u/.local/state/k8s-deployer/state');
    const backend = await resolveBackend(parseBackendCoordinates(env), 'g1-all');
    try {
      expect(backend.embedded).toBe(true);
      expect(backend.address).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/g1-all$/);
      expect(Object.keys(tofuBackendVariables(backend.http)).sort()).toEqual([
        'TF_HTTP_ADDRESS',
        'TF_HTTP_LOCK_ADDRESS',
        'TF_HTTP_LOCK_METHOD',
        'TF_HTTP_PASSWORD',
        'TF_HTTP_UNLOCK_ADDRESS',
        'TF_HTTP_UNLOCK_METHOD',
        'TF_HTTP_USERNAME',
      ]);
      expect(tofuBackendVariables(backend.http).TF_HTTP_LOCK_METHOD).toBe('LOCK');
      expect(tofuBackendVariables(backend.http).TF_HTTP_UNLOCK_METHOD).toBe('UNLOCK');
      expect(tofuBackendVariables(backend.http).TF_HTTP_PASSWORD!.length).toBeGreaterThanOrEqual(24);
      // a random password: other local users cannot reach the state
      expect((await call(backend.address, 'GET')).status).toBe(401);
      expect((await call(backend.address, 'POST', stateDoc(1, 'l'), basic(tofuBackendVariables(backend.http)))).status).toBe(200);
      expect((await call(tofuBackendVariables(backend.http).TF_HTTP_LOCK_ADDRESS!, 'LOCK', lockInfo(), basic(tofuBackendVariables(backend.http)))).status).toBe(200);
    } finally {
      await backend.close();
    }
    // private to the user
    expect(statSync(join(dir, 'state')).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'state', 'state.db')).mode & 0o777).toBe(0o600);
    // the data is on disk in the state directory: a second run sees it
    const again = await startEmbeddedBackend({ dataDir: join(dir, 'state'), key: 'g1-all' });
    try {
      const res = await call(again.address, 'GET', undefined, basic(tofuBackendVariables(again.http)));
      expect(res.status).toBe(200);
      expect(res.text).toBe(stateDoc(1, 'l').toString());
      expect(tofuBackendVariables(again.http).TF_HTTP_PASSWORD).not.toBe(tofuBackendVariables(backend.http).TF_HTTP_PASSWORD);
    } finally {
      await again.close();
      await again.close(); // idempotent
    }
    await cleanup();
  });

  it('refuses a bad key and an aborted start', async () => {
    await expect(startEmbeddedBackend({ key: '../x', dataDir: '/nonexistent' })).rejects.toThrow(/state key/);
    const stopped = await startEmbeddedBackend({ key: 'k', dataDir: '/nonexistent', signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect(stopped).toBeInstanceOf(InterruptedError);
    expect((stopped as Error).message).toBe('interrupted before the state backend of k started: nothing of this target was changed');
  });
});
