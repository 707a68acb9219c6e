import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { InterruptedError } from '../../../../src/errors.js';
import { readTofuVersion } from '../../../../src/tools/tofu/tofu.js';
import { TOFU_GOGC } from '../../../../src/contract/graph/tofu-gogc.js';

const fakeTofu = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'tofu-env.mjs');
const nodePath = `${dirname(process.execPath)}:${process.env.PATH ?? ''}`;

afterEach(() => {
  delete process.env.H4_PROCESS_ONLY;
});

describe('the environment tofu runs in', () => {
  it('is the one the caller passes, not the process environment, with the non-interactive settings over it', async () => {
    // GIVEN a variable only the process has, and a caller whose environment asks for input
    process.env.H4_PROCESS_ONLY = 'leaked';
    const cache = mkdtempSync(join(tmpdir(), 'tofu-env-'));
    const env = { PATH: nodePath, FROM_CALLER: 'given', TF_INPUT: '1', DEPLOY_CACHE_DIR: cache, TF_CLI_CONFIG_FILE: join(cache, 'absent.rc') };
    // WHEN tofu runs
    const seen = JSON.parse((await readTofuVersion({ tofuPath: fakeTofu, env })).version);
    // THEN it got the caller's variables only, never asks for input, and no config file that is not there
    expect(seen).toEqual({ caller: 'given', processOnly: null, input: '0', rc: null, gogc: TOFU_GOGC, gogcSet: TOFU_GOGC });
  });

  it('gets a garbage collector target of its own, unless the caller sets one', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'tofu-env-'));
    const own = JSON.parse((await readTofuVersion({ tofuPath: fakeTofu, env: { PATH: nodePath, DEPLOY_CACHE_DIR: cache } })).version);
    // (and says that deploy set it: the graph's image build runs without it, stacks/image-scripts.ts)
    expect([own.gogc, own.gogcSet]).toEqual(['400', '400']);
    const operators = JSON.parse((await readTofuVersion({ tofuPath: fakeTofu, env: { PATH: nodePath, DEPLOY_CACHE_DIR: cache, GOGC: '150' } })).version);
    expect([operators.gogc, operators.gogcSet]).toEqual(['150', null]);
  });

  it('gets the cache mirror as TF_CLI_CONFIG_FILE when the caller has none', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'tofu-env-'));
    writeFileSync(join(cache, 'tofu-patched.rc'), '');
    writeFileSync(join(cache, 'tofu.rc'), '');
    const seen = JSON.parse((await readTofuVersion({ tofuPath: fakeTofu, env: { PATH: nodePath, DEPLOY_CACHE_DIR: cache } })).version);
    expect(seen.rc).toBe(join(cache, 'tofu-patched.rc'));
    const stock = JSON.parse((await readTofuVersion({ tofuPath: fakeTofu, env: { PATH: nodePath, DEPLOY_CACHE_DIR: cache, DEPLOY_PROVIDER_PATCHES: 'none' } })).version);
    expect(stock.rc).toBe(join(cache, 'tofu.rc'));
  });
});

describe('a read of tofu cut by the run\'s interrupt', () => {
  it('says that it only reads and changed nothing', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'tofu-env-'));
    const err = await readTofuVersion({ tofuPath: fakeTofu, env: { PATH: nodePath, DEPLOY_CACHE_DIR: cache }, signal: AbortSignal.abort(), dir: cache }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InterruptedError);
    expect((err as Error).message).toBe(`tofu version was interrupted in ${cache}: it only reads, so it changed nothing`);
  });
});
