/**
 * The programs check of plan/apply/destroy (src/tools/preflight.ts): what it asks for per run,
 * how a missing one is named, and which paths go to tofu's environment. File-system look-ups
 * only; the e2e test test/e2e/deploy-preflight.test.ts runs it through bin/deploy against the
 * cluster.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { fakeProgram } from '../../support/fake-program.js';
import { ExitCode, ToolError } from '../../../src/errors.js';
import { requireRunTools, toolsFor } from '../../../src/tools/preflight.js';
import { MIRROR_PLATFORM, PINNED_PROVIDERS, TOFU_VERSION } from '../../../src/tools/versions.js';

const exe = fakeProgram;

let cache: string;
let bin: string;
beforeEach(() => {
  const root = mkdtempSync(join(tmpdir(), 'preflight-'));
  cache = join(root, 'cache');
  bin = join(root, 'bin');
  mkdirSync(bin);
});

const envOf = (extra: Record<string, string> = {}) => ({ DEPLOY_CACHE_DIR: cache, PATH: bin, ...extra });

describe('toolsFor', () => {
  it('asks for tofu and skopeo, and ssh and kubectl only with SPIRE', () => {
    expect(toolsFor(false)).toEqual(['tofu', 'skopeo']);
    expect(toolsFor(true)).toEqual(['tofu', 'skopeo', 'ssh', 'kubectl']);
  });
});

describe('requireRunTools', () => {
  it('GIVEN tofu in the cache and skopeo on PATH THEN returns their paths and hands skopeo to tofu', () => {
    const tofu = exe(join(cache, 'tofu', TOFU_VERSION, 'tofu'));
    const skopeo = exe(join(bin, 'skopeo'));
    const tools = requireRunTools('apply', { spire: false, env: envOf() });
    expect(tools.tofu).toBe(tofu);
    expect(tools.env).toEqual({ DEPLOY_SKOPEO: skopeo });
  });

  it('GIVEN no skopeo anywhere THEN one exit-3 error names it, where it looked, and how to get it', () => {
    exe(join(cache, 'tofu', TOFU_VERSION, 'tofu'));
    let err: unknown;
    try {
      requireRunTools('apply', { spire: false, env: envOf() });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ToolError);
    const e = err as ToolError;
    expect(e.exitCode).toBe(ExitCode.tool);
    expect(e.message).toContain('deploy apply cannot run');
    expect(e.message).toContain('skopeo was not found (looked at DEPLOY_SKOPEO');
    expect(e.message).toContain('apt-get install skopeo');
    expect(e.message).not.toContain('tofu was not found');
    expect(e.hint).toContain('deploy doctor');
  });

  it('GIVEN nothing and SPIRE on THEN every missing program is named at once', () => {
    const e = (() => {
      try {
        requireRunTools('plan', { spire: true, env: envOf() });
      } catch (x) {
        return x as Error;
      }
      throw new Error('no error');
    })();
    for (const name of ['tofu', 'skopeo', 'ssh', 'kubectl']) expect(e.message).toContain(`${name} was not found`);
  });

  it('GIVEN a DEPLOY_SKOPEO that is not a program THEN names the variable, never falls back to PATH', () => {
    exe(join(cache, 'tofu', TOFU_VERSION, 'tofu'));
    exe(join(bin, 'skopeo'));
    expect(() => requireRunTools('plan', { spire: false, env: envOf({ DEPLOY_SKOPEO: join(bin, 'nope') }) })).toThrow(/DEPLOY_SKOPEO does not name an executable file/);
  });

  it("GIVEN the cache's stock mirror without a provider AND DEPLOY_PROVIDER_PATCHES=none THEN names the provider, the mirror and the build with that setting", () => {
    exe(join(cache, 'tofu', TOFU_VERSION, 'tofu'));
    exe(join(bin, 'skopeo'));
    writeFileSync(join(cache, 'tofu.rc'), 'provider_installation {}\n');
    const [first, ...rest] = PINNED_PROVIDERS;
    for (const p of rest) exe(join(cache, 'mirror', 'registry.example', 'hashicorp', p.name, p.version, MIRROR_PLATFORM, `terraform-provider-${p.name}_v${p.version}`));
    expect(() => requireRunTools('plan', { spire: false, env: envOf({ DEPLOY_PROVIDER_PATCHES: 'none' }) })).toThrow(
      new RegExp(`provider ${first!.name} ${first!.version} is not in the offline mirror ${join(cache, 'mirror')}: run \`DEPLOY_PROVIDER_PATCHES=none npm run tools\``),
    );
  });

  it('GIVEN a cache built before the provider patch (only the stock mirror) THEN the default run names the patched mirror and `npm run tools`, and does not go online', () => {
    exe(join(cache, 'tofu', TOFU_VERSION, 'tofu'));
    exe(join(bin, 'skopeo'));
    writeFileSync(join(cache, 'tofu.rc'), 'provider_installation {}\n');
    for (const p of PINNED_PROVIDERS) exe(join(cache, 'mirror', 'registry.example', 'hashicorp', p.name, p.version, MIRROR_PLATFORM, `terraform-provider-${p.name}_v${p.version}`));
    expect(() => requireRunTools('plan', { spire: false, env: envOf() })).toThrow(new RegExp(`provider kubernetes 2.38.0 is not in the offline mirror ${join(cache, 'mirror-patched')}: run \`npm run tools\``));
    expect(requireRunTools('plan', { spire: false, env: envOf({ DEPLOY_PROVIDER_PATCHES: 'none' }) }).tofu).toContain(cache);
  });

  it('GIVEN the patched mirror complete but its tofu-patched.rc missing THEN names the config file', () => {
    exe(join(cache, 'tofu', TOFU_VERSION, 'tofu'));
    exe(join(bin, 'skopeo'));
    writeFileSync(join(cache, 'tofu.rc'), 'provider_installation {}\n');
    for (const p of PINNED_PROVIDERS) exe(join(cache, 'mirror-patched', 'registry.example', 'hashicorp', p.name, p.version, MIRROR_PLATFORM, `terraform-provider-${p.name}_v${p.version}`));
    expect(() => requireRunTools('plan', { spire: false, env: envOf() })).toThrow(/the provider mirror's config .*tofu-patched\.rc is missing: run `npm run tools`/);
  });
});
