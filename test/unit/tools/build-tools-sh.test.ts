/**
 * toolchain/build-tools.sh (the demo's and the tests' toolchain step) checks what it can build
 * before it builds anything: a clone with no provider sources beside it and an empty cache
 * stops in seconds, naming the providers and both ways out, instead of after a long tofu build.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runTool } from '../../../src/tools/run.js';

const toolchain = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'toolchain');

/** The script and what it sources, in a clone-like layout with nothing beside it (no ../shared/upstream). */
function lonelyClone(): { script: string; cache: string } {
  const root = mkdtempSync(join(tmpdir(), 'build-tools-'));
  mkdirSync(join(root, 'clone', 'toolchain'), { recursive: true });
  for (const f of ['build-tools.sh', 'versions.env', 'lib']) cpSync(join(toolchain, f), join(root, 'clone', 'toolchain', f), { recursive: true });
  return { script: join(root, 'clone', 'toolchain', 'build-tools.sh'), cache: join(root, 'cache') };
}

function run(script: string, env: Record<string, string>) {
  return runTool('bash', [script], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, timeoutMs: 60_000, reject: false });
}

describe('toolchain/build-tools.sh without provider sources', () => {
  it('GIVEN an empty cache and no ../shared/upstream WHEN it runs THEN exit 3 in seconds, one line naming every provider and both ways out, nothing built', async () => {
    const { script, cache } = lonelyClone();
    const t0 = Date.now();
    const r = await run(script, { DEPLOY_CACHE_DIR: cache });
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(r.exitCode).toBe(3);
    const lines = r.stderr.split('\n').filter((l) => l.includes('no source for the providers'));
    expect(lines).toHaveLength(1);
    for (const p of ['kubernetes 2.38.0', 'null 3.2.4', 'random 3.7.2', 'external 2.3.5']) expect(lines[0]).toContain(p);
    expect(lines[0]).toContain('DEPLOY_PROVIDER_SOURCES');
    expect(lines[0]).toContain('DEPLOY_PROVIDERS=download');
    expect(lines[0]).toContain('nothing was built');
    expect(existsSync(join(cache, 'tofu'))).toBe(false);
  });

  it('GIVEN DEPLOY_PROVIDER_SOURCES naming a directory without the trees THEN the same early stop names that directory', async () => {
    const { script, cache } = lonelyClone();
    const empty = mkdtempSync(join(tmpdir(), 'no-sources-'));
    const r = await run(script, { DEPLOY_CACHE_DIR: cache, DEPLOY_PROVIDER_SOURCES: empty });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toContain(`in ${empty}:`);
    expect(existsSync(cache) ? readdirSync(cache).filter((f) => !f.startsWith('.')) : []).toEqual([]);
  });

  it('GIVEN DEPLOY_PROVIDERS=other THEN exit 2 naming the variable and its values', async () => {
    const { script, cache } = lonelyClone();
    const r = await run(script, { DEPLOY_CACHE_DIR: cache, DEPLOY_PROVIDERS: 'other' });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("DEPLOY_PROVIDERS must be 'build' or 'download'");
  });
});
