/** toolchain/lib/paths.sh and src/paths.ts: one directory formula, in each language. */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cacheDir, stateDir } from '../../../../src/paths.js';
import { runTool } from '../../../../src/tools/run.js';

const pathsSh = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'toolchain', 'lib', 'paths.sh');

describe('toolchain/lib/paths.sh', () => {
  it.each([
    { HOME: '/h' },
    { HOME: '/h', XDG_CACHE_HOME: '/xc', XDG_STATE_HOME: '/xs' },
    { HOME: '/h', XDG_CACHE_HOME: '', XDG_STATE_HOME: '' },
    { HOME: '/h', DEPLOY_CACHE_DIR: '/c', DEPLOY_STATE_DIR: '/s', XDG_CACHE_HOME: '/xc' },
    { HOME: '/h', DEPLOY_CACHE_DIR: '', DEPLOY_STATE_DIR: '' },
  ])('resolves the cache and state directories as src/paths.ts does: %o', async (env) => {
    const full = { DEPLOY_CACHE_DIR: undefined, DEPLOY_STATE_DIR: undefined, XDG_CACHE_HOME: undefined, XDG_STATE_HOME: undefined, ...env };
    const r = await runTool('bash', ['-c', `. "${pathsSh}"; echo "$DEPLOY_CACHE_DIR"; echo "$DEPLOY_STATE_DIR"`], { env: full, timeoutMs: 10_000 });
    expect(r.stdout).toBe(`${cacheDir(env)}\n${stateDir(env)}`);
  });
});
