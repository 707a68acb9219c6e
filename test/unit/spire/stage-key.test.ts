/**
 * The run's staging of the SPIRE steps' key (src/spire/stage-key.ts): a new path per run,
 * mode 0600 in a 0700 directory, removed at close; ssh and kubectl as found.
 */
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, ToolError } from '../../../src/errors.js';
import { stageSpireAccess } from '../../../src/spire/stage-key.js';
import { tempDir } from '../../support/cli.js';

const SPIRE = { node: 'spire.example.org', sshUser: 'deploy', hostKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHnU1vq8oTjWkDmmXG0vWq4m7Kq8lYk3dQ2dN3bq7c0X', sshOptions: [], apiServer: undefined, tokenSeconds: 3600 };
let dir: string;
let cleanup: () => Promise<void>;
let key: string;
let bin: string;
const exists = (p: string) => stat(p).then(() => true, () => false);

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('deploy-stage-key-'));
  key = join(dir, 'id_ed25519');
  await writeFile(key, 'PRIVATE KEY TEXT\n', { mode: 0o644 });
  bin = join(dir, 'bin');
  await mkdir(bin);
  for (const tool of ['ssh', 'kubectl']) {
    await writeFile(join(bin, tool), '#!/bin/sh\n');
    await chmod(join(bin, tool), 0o755);
  }
});
afterAll(() => cleanup());

describe('stageSpireAccess', () => {
  const env = () => ({ PATH: bin, DEPLOY_CACHE_DIR: join(dir, 'no-cache') });

  it('GIVEN SPIRE on WHEN staged THEN tofu gets a copy of the key at a new path (0600, dir 0700), ssh and kubectl; close removes it', async () => {
    const a = await stageSpireAccess({ spire: SPIRE, keyFile: key, env: env() });
    const b = await stageSpireAccess({ spire: SPIRE, keyFile: key, env: env() });
    try {
      expect(a.env).toEqual({
        DEPLOY_SSH: join(bin, 'ssh'),
        DEPLOY_KUBECTL: join(bin, 'kubectl'),
        DEPLOY_SPIRE_NODE: 'spire.example.org',
        DEPLOY_SPIRE_HOST_KEY: SPIRE.hostKey,
        SSH_PRIVATE_KEY_FILE: a.stagedKeyFile,
      });
      expect(a.stagedKeyFile).not.toBe(key);
      expect(b.stagedKeyFile).not.toBe(a.stagedKeyFile);
      expect(await readFile(a.stagedKeyFile!, 'utf8')).toBe('PRIVATE KEY TEXT\n');
      expect((await stat(a.stagedKeyFile!)).mode & 0o777).toBe(0o600);
      expect((await stat(dirname(a.stagedKeyFile!))).mode & 0o777).toBe(0o700);
    } finally {
      await a.close();
      await b.close();
      await a.close(); // twice is fine
    }
    expect(await exists(dirname(a.stagedKeyFile!))).toBe(false);
    expect(await exists(dirname(b.stagedKeyFile!))).toBe(false);
  });

  it('GIVEN SPIRE on and no ssh THEN it fails naming openssh-client', async () => {
    await expect(stageSpireAccess({ spire: SPIRE, keyFile: key, env: { PATH: join(dir, 'nothing'), DEPLOY_CACHE_DIR: join(dir, 'no-cache') } })).rejects.toThrow(ToolError);
    await expect(stageSpireAccess({ spire: SPIRE, keyFile: key, env: { PATH: join(dir, 'nothing'), DEPLOY_CACHE_DIR: join(dir, 'no-cache') } })).rejects.toMatchObject({
      message: expect.stringContaining('ssh was not found'),
      hint: expect.stringContaining('openssh-client'),
    });
  });

  it('GIVEN SPIRE on and an unreadable key THEN it is a ConfigError naming SSH_PRIVATE_KEY_FILE', async () => {
    const e = await stageSpireAccess({ spire: SPIRE, keyFile: join(dir, 'missing'), env: env() }).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(ConfigError);
    expect((e as ConfigError).issues).toEqual([{ where: 'SSH_PRIVATE_KEY_FILE', message: `${join(dir, 'missing')} does not exist` }]);
  });

  it('GIVEN SPIRE off THEN a readable key is still staged (to retire an earlier hand-off), a missing one is no error', async () => {
    const on = await stageSpireAccess({ spire: undefined, keyFile: key, env: env() });
    expect(on.env.SSH_PRIVATE_KEY_FILE).toBe(on.stagedKeyFile);
    await on.close();
    const off = await stageSpireAccess({ spire: undefined, keyFile: join(dir, 'missing'), env: { PATH: join(dir, 'nothing'), DEPLOY_CACHE_DIR: join(dir, 'no-cache') } });
    expect(off.env).toEqual({});
    expect(off.stagedKeyFile).toBeUndefined();
  });
});
