import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeEach, describe, expect, it } from 'vitest';
import { fakeProgram } from '../../support/fake-program.js';
import { ConfigError, ToolError } from '../../../src/errors.js';
import { cacheDir } from '../../../src/paths.js';
import { compareVersionsDesc, findTool, requireTool } from '../../../src/tools/discover.js';
import { COMPUTED_FIELDS_PATCH, findProviderConfig, listMirroredProviders, mirroredPatchesFile, providerEnv, whyNoComputedFieldsPatch } from '../../../src/tools/providers.js';
import { PINNED_PROVIDERS, TOFU_VERSION } from '../../../src/tools/versions.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

const exe = fakeProgram;

let root: string;
let cache: string;
let bin: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'discover-'));
  cache = join(root, 'cache');
  bin = join(root, 'bin');
  mkdirSync(bin);
});

describe('cacheDir', () => {
  it('follows DEPLOY_CACHE_DIR, then XDG_CACHE_HOME, then HOME like toolchain/cache.sh', () => {
    expect(cacheDir({ DEPLOY_CACHE_DIR: '/c', XDG_CACHE_HOME: '/x', HOME: '/h' })).toBe('/c');
    expect(cacheDir({ XDG_CACHE_HOME: '/x', HOME: '/h' })).toBe('/x/k8s-deployer');
    expect(cacheDir({ HOME: '/h' })).toBe('/h/.cache/k8s-deployer');
  });
});

describe('findTool', () => {
  it('prefers the explicit override, then the cache, then PATH', () => {
    const onPath = exe(join(bin, 'tofu'));
    const inCache = exe(join(cache, 'tofu', TOFU_VERSION, 'tofu'));
    const override = exe(join(root, 'elsewhere', 'tofu'));
    const env = { DEPLOY_CACHE_DIR: cache, PATH: bin };
    expect(findTool('tofu', { ...env, DEPLOY_TOFU: override })).toMatchObject({ path: override, source: 'env' });
    expect(findTool('tofu', env)).toMatchObject({ path: inCache, source: 'cache', cacheVersion: TOFU_VERSION });
    expect(findTool('tofu', { DEPLOY_CACHE_DIR: join(root, 'empty'), PATH: `/nonexistent:${bin}` })).toMatchObject({
      path: onPath,
      source: 'path',
    });
  });

  it('takes the pinned tofu over a newer cached one, and the newest kubectl of any version', () => {
    exe(join(cache, 'tofu', '1.99.0', 'tofu'));
    exe(join(cache, 'tofu', TOFU_VERSION, 'tofu'));
    exe(join(cache, 'kubernetes', 'v1.9.0', 'kubectl'));
    exe(join(cache, 'kubernetes', 'v1.36.3', 'kubectl'));
    mkdirSync(join(cache, 'kubernetes', 'v1.40.0')); // a version directory without kubectl
    const env = { DEPLOY_CACHE_DIR: cache, PATH: '' };
    expect(findTool('tofu', env)?.cacheVersion).toBe(TOFU_VERSION);
    expect(findTool('kubectl', env)?.cacheVersion).toBe('v1.36.3');
  });

  it('ignores files that are not executable', () => {
    const p = join(bin, 'skopeo');
    writeFileSync(p, 'not a program');
    chmodSync(p, 0o644);
    expect(findTool('skopeo', { DEPLOY_CACHE_DIR: cache, PATH: bin })).toBeUndefined();
  });

  it('refuses an override that names no executable instead of falling back', () => {
    exe(join(bin, 'kubectl'));
    const err = (() => {
      try {
        return findTool('kubectl', { DEPLOY_KUBECTL: join(root, 'missing'), PATH: bin });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain('DEPLOY_KUBECTL');
  });

  it('says how to get a missing program', () => {
    let err: unknown;
    try {
      requireTool('tofu', { DEPLOY_CACHE_DIR: cache, PATH: bin });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).message).toContain('tofu was not found');
    expect((err as ToolError).hint).toContain('npm run tools');
  });
});

describe('provider configuration', () => {
  it('uses TF_CLI_CONFIG_FILE from the environment, else the cache mirror of DEPLOY_PROVIDER_PATCHES (patched by default), else online', () => {
    expect(findProviderConfig({ DEPLOY_CACHE_DIR: cache })).toEqual({ kind: 'online' });
    expect(providerEnv({ DEPLOY_CACHE_DIR: cache })).toEqual({});
    mkdirSync(cache, { recursive: true });
    writeFileSync(join(cache, 'tofu-patched.rc'), 'provider_installation {}\n');
    writeFileSync(join(cache, 'tofu.rc'), 'provider_installation {}\n');
    expect(findProviderConfig({ DEPLOY_CACHE_DIR: cache })).toEqual({
      kind: 'cache',
      cliConfigFile: join(cache, 'tofu-patched.rc'),
      mirrorDir: join(cache, 'mirror-patched'),
    });
    expect(findProviderConfig({ DEPLOY_CACHE_DIR: cache, DEPLOY_PROVIDER_PATCHES: 'all' })).toEqual(findProviderConfig({ DEPLOY_CACHE_DIR: cache }));
    expect(findProviderConfig({ DEPLOY_CACHE_DIR: cache, DEPLOY_PROVIDER_PATCHES: 'none' })).toEqual({
      kind: 'cache',
      cliConfigFile: join(cache, 'tofu.rc'),
      mirrorDir: join(cache, 'mirror'),
    });
    const mine = join(root, 'my.rc');
    writeFileSync(mine, 'provider_installation {}\n');
    expect(providerEnv({ DEPLOY_CACHE_DIR: cache, TF_CLI_CONFIG_FILE: mine })).toEqual({ TF_CLI_CONFIG_FILE: mine });
    // a TF_CLI_CONFIG_FILE naming no file (as some machines export) does not hide the mirror
    expect(providerEnv({ DEPLOY_CACHE_DIR: cache, TF_CLI_CONFIG_FILE: join(root, 'absent.rc') })).toEqual({
      TF_CLI_CONFIG_FILE: join(cache, 'tofu-patched.rc'),
    });
  });

  it('GIVEN DEPLOY_PROVIDER_PATCHES=some THEN a ConfigError names the variable and both values', () => {
    expect(() => findProviderConfig({ DEPLOY_CACHE_DIR: cache, DEPLOY_PROVIDER_PATCHES: 'some' })).toThrow(ConfigError);
    expect(() => findProviderConfig({ DEPLOY_CACHE_DIR: cache, DEPLOY_PROVIDER_PATCHES: 'some' })).toThrow(/DEPLOY_PROVIDER_PATCHES: "some": use "all" .* or "none"/);
  });

  it('lists the pinned providers found in the mirror, and which are missing', () => {
    const host = join(cache, 'mirror-patched', 'some.registry.example', 'hashicorp');
    exe(join(host, 'null', '3.2.4', 'linux_amd64', 'terraform-provider-null_v3.2.4'));
    exe(join(host, 'random', '3.7.1', 'linux_amd64', 'terraform-provider-random_v3.7.1')); // not the pinned one
    const found = listMirroredProviders({ DEPLOY_CACHE_DIR: cache });
    expect(found.map((p) => [p.name, p.version, p.path !== undefined])).toEqual([
      ['kubernetes', '2.38.0', false],
      ['null', '3.2.4', true],
      ['random', '3.7.2', false],
      ['external', '2.3.5', false],
    ]);
  });
});

describe('whyNoComputedFieldsPatch (whether a plan may skip tofu\'s refresh)', () => {
  it('GIVEN the patched mirror whose list names the patch THEN none; GIVEN no list, another list, the stock mirror, the operator\'s config or online THEN why not', () => {
    const env = { DEPLOY_CACHE_DIR: cache };
    expect(whyNoComputedFieldsPatch(env)).toMatch(/not the patched build/);
    mkdirSync(cache, { recursive: true });
    writeFileSync(join(cache, 'tofu-patched.rc'), 'provider_installation {}\n');
    expect(whyNoComputedFieldsPatch(env)).toContain(`built without ${COMPUTED_FIELDS_PATCH}`);
    writeFileSync(mirroredPatchesFile(env), 'kubernetes 2.38.0 0001-gvk-type-cache.patch\n');
    expect(whyNoComputedFieldsPatch(env)).toContain(`built without ${COMPUTED_FIELDS_PATCH}`);
    // another version of the provider with the patch is not this one
    writeFileSync(mirroredPatchesFile(env), `kubernetes 2.37.0 ${COMPUTED_FIELDS_PATCH}\n`);
    expect(whyNoComputedFieldsPatch(env)).toContain('built without');
    writeFileSync(mirroredPatchesFile(env), `kubernetes 2.38.0 0001-gvk-type-cache.patch\nkubernetes 2.38.0 ${COMPUTED_FIELDS_PATCH}\n`);
    expect(whyNoComputedFieldsPatch(env)).toBeUndefined();
    expect(whyNoComputedFieldsPatch({ ...env, DEPLOY_PROVIDER_PATCHES: 'none' })).toMatch(/not the patched build/);
    expect(whyNoComputedFieldsPatch({ ...env, DEPLOY_PROVIDERS: 'download' })).toMatch(/not the patched build/);
    const mine = join(root, 'mine.rc');
    writeFileSync(mine, 'provider_installation {}\n');
    expect(whyNoComputedFieldsPatch({ ...env, TF_CLI_CONFIG_FILE: mine })).toMatch(/not the patched build/);
  });

  it('GIVEN the build script THEN it writes the list where deploy reads it, a line per patch of the patched mirror', () => {
    const script = readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'toolchain', 'build-tools.sh'), 'utf8');
    expect(mirroredPatchesFile({ DEPLOY_CACHE_DIR: '/c' })).toBe('/c/mirror-patched.patches');
    expect(script).toContain('patch_list="$DEPLOY_CACHE_DIR/mirror-patched.patches"');
    expect(script).toContain('echo "$name $version $(basename "$p")" >>"$patch_list.tmp.$$"');
  });

  it('GIVEN the patches of the kubernetes provider THEN the computed-fields patch is one of them', () => {
    const dir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'toolchain', 'tofu', 'patches', 'kubernetes-2.38.0');
    expect(readFileSync(join(dir, COMPUTED_FIELDS_PATCH), 'utf8')).toContain('computedUnknownOnChange(updatedObj, priorMan, ppMan, computedFields)');
  });
});

describe('pinned versions', () => {
  it('are the ones toolchain/build-tools.sh builds (both read toolchain/versions.env; build-tools.sh through lib/go-build.sh)', () => {
    const script = readFileSync(join(repo, 'toolchain', 'build-tools.sh'), 'utf8');
    expect(script).toContain('. "$here/lib/go-build.sh"');
    const sourced = execFileSync('bash', ['-c', '. toolchain/lib/go-build.sh; echo "$TOFU_VERSION $PROVIDERS"'], { cwd: repo, encoding: 'utf8' });
    const list = PINNED_PROVIDERS.map((p) => `${p.name}:${p.version}`).join(',');
    expect(sourced.trim()).toBe(`${TOFU_VERSION} ${list}`);
    expect(PINNED_PROVIDERS.map((p) => `${p.name}:${p.version}`)).toEqual(['kubernetes:2.38.0', 'null:3.2.4', 'random:3.7.2', 'external:2.3.5']);
  });

  it('sort newest first', () => {
    expect(['v1.9.0', '1.36.3', 'v1.36.10', 'x'].sort(compareVersionsDesc)).toEqual(['v1.36.10', '1.36.3', 'v1.9.0', 'x']);
  });
});

describe('DEPLOY_PROVIDERS=download', () => {
  it("GIVEN the cache's tofu-patched.rc WHEN DEPLOY_PROVIDERS=download THEN tofu runs online (no CLI config)", () => {
    mkdirSync(cache, { recursive: true });
    writeFileSync(join(cache, 'tofu-patched.rc'), 'provider_installation {}\n');
    expect(findProviderConfig({ DEPLOY_CACHE_DIR: cache }).kind).toBe('cache');
    expect(findProviderConfig({ DEPLOY_CACHE_DIR: cache, DEPLOY_PROVIDERS: 'download' })).toEqual({ kind: 'online' });
    expect(providerEnv({ DEPLOY_CACHE_DIR: cache, DEPLOY_PROVIDERS: 'download' })).toEqual({});
  });
});
