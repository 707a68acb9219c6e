/**
 * What `deploy doctor` reports: each program deploy needs (where it was found, its version),
 * each pinned provider (in the offline mirror, or left to an online `tofu init`), and what is
 * missing with how to get it.
 */
import { DeployError } from '../errors.js';
import { cacheDir } from '../paths.js';
import { findTool, INSTALL_HINTS, type FoundTool, type ToolName } from './discover.js';
import { readProgramVersion } from './program-version.js';
import { cacheMirror, findProviderConfig, listMirroredProviders, type ProviderConfig } from './providers.js';
import { TOFU_VERSION } from './versions.js';
import { readRegistryCa, REGISTRY_CA_ENV } from '../config/registry-ca.js';

type Env = Readonly<Record<string, string | undefined>>;

export interface ToolStatus {
  readonly name: ToolName;
  readonly status: 'ok' | 'missing' | 'broken';
  readonly path?: string;
  readonly source?: FoundTool['source'];
  readonly version?: string;
  /** For tofu: the version this project is tested with. */
  readonly expectedVersion?: string;
  /** What is wrong (missing, fails to run, unexpected version). */
  readonly problem?: string;
  /** How to fix it. */
  readonly hint?: string;
}

export interface ProviderStatus {
  readonly name: string;
  readonly version: string;
  /** ok: in the mirror; missing: the mirror lacks it; online: `tofu init` will download it. */
  readonly status: 'ok' | 'missing' | 'online';
  readonly path?: string;
  readonly hint?: string;
}

export interface Inventory {
  readonly ok: boolean;
  readonly cacheDir: string;
  readonly tools: readonly ToolStatus[];
  readonly providerConfig: ProviderConfig;
  readonly providers: readonly ProviderStatus[];
  /** K8S_REGISTRY_CA_FILE when set: the CA skopeo and the tag reads trust (docs/registry-tls.md). */
  readonly registryCa?: RegistryCaStatus;
  /** Names of what is missing or broken, e.g. ["kubectl", "provider kubernetes 2.38.0"]. */
  readonly missing: readonly string[];
}

export interface RegistryCaStatus {
  readonly file: string;
  readonly status: 'ok' | 'broken';
  /** ok: how many certificates the file holds */
  readonly certificates?: number;
  readonly problem?: string;
}

/** K8S_REGISTRY_CA_FILE checked as a run checks it (src/config/registry-ca.ts); undefined when unset. */
function inspectRegistryCa(env: Env): RegistryCaStatus | undefined {
  const file = env[REGISTRY_CA_ENV];
  if (file === undefined || file === '') return undefined;
  const read = readRegistryCa(file);
  return read.ok ? { file, status: 'ok', certificates: read.count } : { file, status: 'broken', problem: `${REGISTRY_CA_ENV}: ${file} ${read.problem}` };
}

export async function collectInventory(env: Env, signal?: AbortSignal): Promise<Inventory> {
  const tools = await Promise.all((['tofu', 'skopeo', 'kubectl'] as const).map((name) => inspectTool(name, env, signal)));
  const providerConfig = findProviderConfig(env);
  const cacheRc = cacheMirror(env).cliConfigFile;
  // A TF_CLI_CONFIG_FILE that is the cache's own config is the mirror too.
  const usesCacheMirror = providerConfig.kind === 'cache' || (providerConfig.kind === 'env' && providerConfig.cliConfigFile === cacheRc);
  const providers: ProviderStatus[] = listMirroredProviders(env).map((p) => {
    if (p.path) return { name: p.name, version: p.version, status: 'ok', path: p.path };
    if (providerConfig.kind === 'online') {
      return { name: p.name, version: p.version, status: 'online', hint: 'no offline mirror: `tofu init` downloads it (needs network)' };
    }
    if (!usesCacheMirror) {
      return { name: p.name, version: p.version, status: 'online', hint: `resolved by your TF_CLI_CONFIG_FILE (${providerConfig.kind === 'env' ? providerConfig.cliConfigFile : ''}); not checked` };
    }
    return { name: p.name, version: p.version, status: 'missing', hint: 'run `npm run tools` (builds it from the provider sources, DEPLOY_PROVIDER_SOURCES)' };
  });
  const registryCa = inspectRegistryCa(env);
  const missing = [
    ...tools.filter((t) => t.status !== 'ok').map((t) => t.name),
    ...providers.filter((p) => p.status === 'missing').map((p) => `provider ${p.name} ${p.version}`),
    ...(registryCa?.status === 'broken' ? [REGISTRY_CA_ENV] : []),
  ];
  return { ok: missing.length === 0, cacheDir: cacheDir(env), tools, providerConfig, providers, ...(registryCa ? { registryCa } : {}), missing };
}

async function inspectTool(name: ToolName, env: Env, signal?: AbortSignal): Promise<ToolStatus> {
  let found: FoundTool | undefined;
  try {
    found = findTool(name, env);
  } catch (err) {
    // a wrong DEPLOY_<TOOL> override
    return { name, status: 'broken', problem: (err as Error).message, hint: INSTALL_HINTS[name] };
  }
  const expectedVersion = name === 'tofu' ? TOFU_VERSION : undefined;
  if (!found) return { name, status: 'missing', expectedVersion, problem: `${name} was not found`, hint: INSTALL_HINTS[name] };
  const where = { path: found.path, source: found.source, expectedVersion };
  try {
    const version = await readProgramVersion(name, found.path, env, signal);
    if (expectedVersion && version !== expectedVersion) {
      return { name, status: 'ok', version, ...where, problem: `this project is tested with ${name} ${expectedVersion}` };
    }
    return { name, status: 'ok', version, ...where };
  } catch (err) {
    const message = err instanceof DeployError ? err.message.split('\n')[0] : String(err);
    return { name, status: 'broken', ...where, problem: `${found.path} does not run: ${message}`, hint: INSTALL_HINTS[name] };
  }
}
