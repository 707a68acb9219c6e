/**
 * toolchain/build-tools.sh (the demo's and the tests' toolchain step) checks what it can build
 * before it builds anything: a clone with no provider sources beside it and an empty cache
 * stops in seconds, naming the providers and both ways out, instead of after a long tofu build.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
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

/**
 * The provider patches (toolchain/tofu/patches/<name>-<version>/*.patch) are part of the
 * patched build's cache key: a warm cache skips the patched build, a changed patch (or a cache
 * with only the stock builds) needs it, and DEPLOY_PROVIDER_PATCHES=none never does.
 */
describe('toolchain/build-tools.sh and the provider patches', () => {
  const host = 'registry.opentofu.org';
  const bin = (name: string, version: string) => `terraform-provider-${name}_v${version}`;
  const stockKey = (name: string, version: string) => join('mirror', host, 'hashicorp', name, version, 'linux_amd64', bin(name, version));

  /** A clone with the patches, and a cache holding tofu and every stock provider (fakes). */
  function warmStockClone(): { script: string; cache: string; patches: string } {
    const { script, cache } = lonelyClone();
    cpSync(join(toolchain, 'tofu'), join(dirname(script), 'tofu'), { recursive: true });
    fake(join(cache, 'tofu', '1.12.6', 'tofu'));
    for (const [name, version] of PROVIDERS) fake(join(cache, stockKey(name, version)));
    return { script, cache, patches: join(dirname(script), 'tofu', 'patches', 'kubernetes-2.38.0') };
  }
  const PROVIDERS = [['kubernetes', '2.38.0'], ['null', '3.2.4'], ['random', '3.7.2'], ['external', '2.3.5']] as const;
  function fake(p: string): void {
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, `#!/bin/sh\necho ${p}\n`, { mode: 0o755 });
  }
  /** The documented key: sha256 over each patch's name and contents in name order, 12 hex digits. */
  function patchedKey(patches: string): string {
    const h = createHash('sha256');
    for (const f of readdirSync(patches).filter((f) => f.endsWith('.patch')).sort()) h.update(`${f}\n`).update(readFileSync(join(patches, f)));
    return join('providers', 'kubernetes', '2.38.0', `patched-${h.digest('hex').slice(0, 12)}`, bin('kubernetes', '2.38.0'));
  }
  const noSources = () => mkdtempSync(join(tmpdir(), 'no-sources-'));

  it('GIVEN only the stock builds in the cache WHEN the default run THEN the patched kubernetes provider is needed (exit 3 without sources, naming only it)', async () => {
    const { script, cache } = warmStockClone();
    const r = await run(script, { DEPLOY_CACHE_DIR: cache, DEPLOY_PROVIDER_SOURCES: noSources() });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toMatch(/no source for the providers kubernetes 2\.38\.0 in /);
  });

  it('GIVEN the same cache WHEN DEPLOY_PROVIDER_PATCHES=none THEN everything is skipped and tofu.rc serves the stock mirror', async () => {
    const { script, cache } = warmStockClone();
    const r = await run(script, { DEPLOY_CACHE_DIR: cache, DEPLOY_PROVIDER_SOURCES: noSources(), DEPLOY_PROVIDER_PATCHES: 'none' });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain(`skipped ${stockKey('kubernetes', '2.38.0')} (present)`);
    expect(readFileSync(join(cache, 'tofu.rc'), 'utf8')).toContain(`path    = "${join(cache, 'mirror')}"`);
    expect(existsSync(join(cache, 'mirror-patched'))).toBe(false);
  });

  it('GIVEN the patched build under the key of the current patches THEN it is skipped, linked into mirror-patched with the stock others, and tofu-patched.rc serves it; a changed patch needs a new build', async () => {
    const { script, cache, patches } = warmStockClone();
    const key = patchedKey(patches);
    fake(join(cache, key));
    const r = await run(script, { DEPLOY_CACHE_DIR: cache, DEPLOY_PROVIDER_SOURCES: noSources() });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain(`skipped ${key} (present)`);
    const linked = (name: string, version: string) => statSync(join(cache, 'mirror-patched', host, 'hashicorp', name, version, 'linux_amd64', bin(name, version))).ino;
    expect(linked('kubernetes', '2.38.0')).toBe(statSync(join(cache, key)).ino);
    expect(linked('null', '3.2.4')).toBe(statSync(join(cache, stockKey('null', '3.2.4'))).ino);
    expect(readFileSync(join(cache, 'tofu-patched.rc'), 'utf8')).toContain(`path    = "${join(cache, 'mirror-patched')}"`);

    writeFileSync(join(patches, '0001-gvk-type-cache.patch'), '\n', { flag: 'a' });
    expect(patchedKey(patches)).not.toBe(key);
    const changed = await run(script, { DEPLOY_CACHE_DIR: cache, DEPLOY_PROVIDER_SOURCES: noSources() });
    expect(changed.exitCode).toBe(3);
    expect(changed.stderr).toMatch(/no source for the providers kubernetes 2\.38\.0 in /);
  });

  it('GIVEN DEPLOY_PROVIDER_PATCHES=some THEN exit 2 naming the variable and its values', async () => {
    const { script, cache } = warmStockClone();
    const r = await run(script, { DEPLOY_CACHE_DIR: cache, DEPLOY_PROVIDER_PATCHES: 'some' });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("DEPLOY_PROVIDER_PATCHES must be 'all' or 'none'");
  });
});
