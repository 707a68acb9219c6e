/**
 * A graph directory's lock file is dropped before `tofu init` exactly when the cache's mirror
 * serves other provider builds than those it was written for (src/tools/provider-lock.ts):
 * a switch of DEPLOY_PROVIDER_PATCHES, a rebuilt provider. File-system only.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { fakeProgram } from '../../support/fake-program.js';
import { dropStaleProviderLock, LOCK_FILE, markProviderLock, PROVIDERS_MARK } from '../../../src/tools/provider-lock.js';
import { MIRROR_PLATFORM, PINNED_PROVIDERS } from '../../../src/tools/versions.js';

let cache: string;
let dir: string;
const env = () => ({ DEPLOY_CACHE_DIR: cache });
const stock = () => ({ DEPLOY_CACHE_DIR: cache, DEPLOY_PROVIDER_PATCHES: 'none' });

function mirror(name: string): void {
  writeFileSync(join(cache, name === 'mirror' ? 'tofu.rc' : 'tofu-patched.rc'), 'provider_installation {}\n');
  for (const p of PINNED_PROVIDERS) fakeProgram(join(cache, name, 'registry.example', 'hashicorp', p.name, p.version, MIRROR_PLATFORM, `terraform-provider-${p.name}_v${p.version}`));
}
const lock = () => writeFileSync(join(dir, LOCK_FILE), '# lock\n');

beforeEach(() => {
  const root = mkdtempSync(join(tmpdir(), 'provider-lock-'));
  cache = join(root, 'cache');
  dir = join(root, 'graph');
  mkdirSync(cache, { recursive: true });
  mkdirSync(dir);
  mirror('mirror');
  mirror('mirror-patched');
});

describe('the lock file of a graph directory and the cache mirror', () => {
  it('GIVEN a lock without a mark (written before marks, or by another mirror) THEN it is dropped', async () => {
    lock();
    expect(await dropStaleProviderLock(dir, env())).toBe(true);
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });

  it('GIVEN a lock marked for the same builds THEN it is kept', async () => {
    lock();
    await markProviderLock(dir, env());
    expect(await dropStaleProviderLock(dir, env())).toBe(false);
    expect(existsSync(join(dir, LOCK_FILE))).toBe(true);
  });

  it('GIVEN a lock marked for the patched builds WHEN DEPLOY_PROVIDER_PATCHES=none THEN it is dropped, and back again', async () => {
    lock();
    await markProviderLock(dir, env());
    expect(await dropStaleProviderLock(dir, stock())).toBe(true);
    lock();
    await markProviderLock(dir, stock());
    expect(await dropStaleProviderLock(dir, stock())).toBe(false);
    expect(await dropStaleProviderLock(dir, env())).toBe(true);
  });

  it('GIVEN a provider rebuilt in place (a new file at the same path) THEN the lock is dropped', async () => {
    lock();
    await markProviderLock(dir, env());
    const p = PINNED_PROVIDERS[0]!;
    const bin = join(cache, 'mirror-patched', 'registry.example', 'hashicorp', p.name, p.version, MIRROR_PLATFORM, `terraform-provider-${p.name}_v${p.version}`);
    rmSync(bin);
    writeFileSync(bin, '#!/bin/sh\necho rebuilt: another size\n', { mode: 0o755 });
    expect(await dropStaleProviderLock(dir, env())).toBe(true);
  });

  it('GIVEN TF_CLI_CONFIG_FILE of the caller THEN the lock is tofu business: kept, and no mark', async () => {
    lock();
    const mine = join(cache, 'mine.rc');
    writeFileSync(mine, 'provider_installation {}\n');
    expect(await dropStaleProviderLock(dir, { ...env(), TF_CLI_CONFIG_FILE: mine })).toBe(false);
    await markProviderLock(dir, { ...env(), TF_CLI_CONFIG_FILE: mine });
    expect(existsSync(join(dir, LOCK_FILE))).toBe(true);
    expect(existsSync(join(dir, PROVIDERS_MARK))).toBe(false);
  });
});
