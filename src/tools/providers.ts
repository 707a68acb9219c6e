/**
 * How tofu finds its providers: TF_CLI_CONFIG_FILE from the environment wins when it names an
 * existing file (some machines export it pointing at a file that is not there; tofu only warns
 * about that, so it is ignored here too); else, unless DEPLOY_PROVIDERS=download, the cache's
 * offline filesystem mirror written by `npm run tools`; else none, i.e. an ordinary online
 * `tofu init` that downloads the pinned providers.
 *
 * The cache holds two mirrors (toolchain/build-tools.sh): `mirror-patched/` with
 * `tofu-patched.rc` (the providers with toolchain/tofu/patches applied: the default) and
 * `mirror/` with `tofu.rc` (the stock builds: DEPLOY_PROVIDER_PATCHES=none). When the chosen
 * one was not built but the other was, the config still names the chosen one, so that the
 * preflight says what to build instead of tofu going online.
 *
 * Only file-system look-ups here (no process is started), in the environment the caller passes.
 */
import { join } from 'node:path';
import { ConfigError } from '../errors.js';
import { cacheDir } from '../paths.js';
import { isExecutableFile, isFile, listDir, readTextFile } from './file-checks.js';
import { MIRROR_PLATFORM, PINNED_PROVIDERS, type PinnedProvider } from './versions.js';

type Env = Readonly<Record<string, string | undefined>>;

/** How tofu installs providers. */
export type ProviderConfig =
  /** TF_CLI_CONFIG_FILE as the caller's environment sets it. */
  | { readonly kind: 'env'; readonly cliConfigFile: string }
  /** The cache's offline mirror config (`npm run tools`). */
  | { readonly kind: 'cache'; readonly cliConfigFile: string; readonly mirrorDir: string }
  /** No CLI config: `tofu init` downloads providers from the registry (needs network). */
  | { readonly kind: 'online' };

/** DEPLOY_PROVIDER_PATCHES: `all` (unset: the default) or `none`. */
export type ProviderPatches = 'all' | 'none';

export function providerPatches(env: Env): ProviderPatches {
  const v = env.DEPLOY_PROVIDER_PATCHES;
  if (v === undefined || v === '' || v === 'all') return 'all';
  if (v === 'none') return 'none';
  throw new ConfigError('DEPLOY_PROVIDER_PATCHES is not valid', [
    { where: 'DEPLOY_PROVIDER_PATCHES', message: `${JSON.stringify(v)}: use "all" (the default: the patched providers of \`npm run tools\`) or "none" (the stock providers)` },
  ]);
}

/** The cache's CLI config and mirror for one DEPLOY_PROVIDER_PATCHES setting. */
export function cacheMirror(env: Env, patches: ProviderPatches = providerPatches(env)): { readonly cliConfigFile: string; readonly mirrorDir: string } {
  const dir = cacheDir(env);
  return patches === 'none'
    ? { cliConfigFile: join(dir, 'tofu.rc'), mirrorDir: join(dir, 'mirror') }
    : { cliConfigFile: join(dir, 'tofu-patched.rc'), mirrorDir: join(dir, 'mirror-patched') };
}

export function findProviderConfig(env: Env): ProviderConfig {
  if (env.TF_CLI_CONFIG_FILE && isFile(env.TF_CLI_CONFIG_FILE)) return { kind: 'env', cliConfigFile: env.TF_CLI_CONFIG_FILE };
  if (env.DEPLOY_PROVIDERS === 'download') return { kind: 'online' };
  const patches = providerPatches(env);
  const chosen = cacheMirror(env, patches);
  const other = cacheMirror(env, patches === 'all' ? 'none' : 'all');
  if (isFile(chosen.cliConfigFile) || isFile(other.cliConfigFile)) return { kind: 'cache', ...chosen };
  return { kind: 'online' };
}

/** The environment tofu needs for provider installation: TF_CLI_CONFIG_FILE when there is one. */
export function providerEnv(env: Env): Record<string, string> {
  const cfg = findProviderConfig(env);
  return cfg.kind === 'online' ? {} : { TF_CLI_CONFIG_FILE: cfg.cliConfigFile };
}

export interface MirroredProvider extends PinnedProvider {
  /** The provider binary in the mirror, or undefined when this pinned version is not there. */
  readonly path: string | undefined;
}

/**
 * The pinned providers as found in the cache's mirror of the DEPLOY_PROVIDER_PATCHES setting
 * (`<cache>/mirror[-patched]/<registry host>/hashicorp/<name>/<version>/linux_amd64/terraform-provider-<name>_v<version>`).
 */
export function listMirroredProviders(env: Env): MirroredProvider[] {
  const mirror = cacheMirror(env).mirrorDir;
  const hosts = listDir(mirror);
  return PINNED_PROVIDERS.map((p) => {
    for (const host of hosts) {
      const bin = join(mirror, host, 'hashicorp', p.name, p.version, MIRROR_PLATFORM, `terraform-provider-${p.name}_v${p.version}`);
      if (isExecutableFile(bin)) return { ...p, path: bin };
    }
    return { ...p, path: undefined };
  });
}

/**
 * The list of the patches in the cache's patched mirror (toolchain/build-tools.sh writes it
 * beside `mirror-patched/` with the mirror, one line `<name> <version> <patch file>` a patch).
 */
export function mirroredPatchesFile(env: Env): string {
  return `${cacheMirror(env, 'all').mirrorDir}.patches`;
}

/**
 * The kubernetes provider's patch that plans every computed field of a changed manifest as
 * unknown (toolchain/tofu/patches/kubernetes-2.38.0/): with it, a plan without tofu's refresh
 * cannot end in "Provider produced inconsistent result after apply" when another writer
 * changed an annotation since the state was written (docs/provider-patch.md).
 */
export const COMPUTED_FIELDS_PATCH = '0002-computed-fields-unknown-on-update.patch';

/**
 * Why tofu's kubernetes provider may not be the patched build with COMPUTED_FIELDS_PATCH, or
 * undefined when it is: only the cache's patched mirror, as its list of patches says, counts
 * (the operator's TF_CLI_CONFIG_FILE, the downloaded or the stock providers: not known, so a
 * plan refreshes).
 */
export function whyNoComputedFieldsPatch(env: Env): string | undefined {
  const cfg = findProviderConfig(env);
  if (cfg.kind !== 'cache' || providerPatches(env) !== 'all') return 'the kubernetes provider is not the patched build of the cache';
  const list = readTextFile(mirroredPatchesFile(env));
  const kubernetes = PINNED_PROVIDERS.find((p) => p.name === 'kubernetes');
  const listed = list?.split('\n').some((l) => l.trim() === `kubernetes ${kubernetes?.version ?? '?'} ${COMPUTED_FIELDS_PATCH}`) ?? false;
  return listed ? undefined : `the cache's kubernetes provider was built without ${COMPUTED_FIELDS_PATCH} (npm run tools builds it)`;
}
