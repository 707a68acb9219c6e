/**
 * How tofu finds its providers: TF_CLI_CONFIG_FILE from the environment wins when it names an
 * existing file (some machines export it pointing at a file that is not there; tofu only warns
 * about that, so it is ignored here too); else, unless DEPLOY_PROVIDERS=download, the cache's
 * `tofu.rc` (an offline filesystem mirror written by `npm run tools`); else none, i.e. an
 * ordinary online `tofu init` that downloads the pinned providers.
 *
 * Only file-system look-ups here (no process is started), in the environment the caller passes.
 */
import { join } from 'node:path';
import { cacheDir } from '../paths.js';
import { isExecutableFile, isFile, listDir } from './file-checks.js';
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

export function findProviderConfig(env: Env): ProviderConfig {
  if (env.TF_CLI_CONFIG_FILE && isFile(env.TF_CLI_CONFIG_FILE)) return { kind: 'env', cliConfigFile: env.TF_CLI_CONFIG_FILE };
  const rc = join(cacheDir(env), 'tofu.rc');
  if (env.DEPLOY_PROVIDERS !== 'download' && isFile(rc)) return { kind: 'cache', cliConfigFile: rc, mirrorDir: join(cacheDir(env), 'mirror') };
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
 * The pinned providers as found in the cache's mirror
 * (`<cache>/mirror/<registry host>/hashicorp/<name>/<version>/linux_amd64/terraform-provider-<name>_v<version>`).
 */
export function listMirroredProviders(env: Env): MirroredProvider[] {
  const mirror = join(cacheDir(env), 'mirror');
  const hosts = listDir(mirror);
  return PINNED_PROVIDERS.map((p) => {
    for (const host of hosts) {
      const bin = join(mirror, host, 'hashicorp', p.name, p.version, MIRROR_PLATFORM, `terraform-provider-${p.name}_v${p.version}`);
      if (isExecutableFile(bin)) return { ...p, path: bin };
    }
    return { ...p, path: undefined };
  });
}
