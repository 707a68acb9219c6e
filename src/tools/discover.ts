/**
 * Where the programs `deploy` runs come from, in this order:
 *   1. an explicit override: DEPLOY_TOFU, DEPLOY_SKOPEO, DEPLOY_KUBECTL, DEPLOY_SSH (a path);
 *   2. the build cache (toolchain/cache.sh): `<cache>/tofu/<version>/tofu`,
 *      `<cache>/kubernetes/<version>/kubectl`, `<cache>/skopeo/<version>/skopeo`;
 *   3. PATH.
 * How tofu finds its providers is providers.ts.
 *
 * Only file-system look-ups here (no process is started), so discovery is cheap and exact;
 * they read the environment the caller passes (its DEPLOY_<TOOL>, cache settings and PATH).
 */
import { delimiter, join } from 'node:path';
import { ConfigError, ToolError } from '../errors.js';
import { cacheDir } from '../paths.js';
import { isExecutableFile, listDir } from './file-checks.js';
import { TOFU_VERSION } from './versions.js';

/** ssh: only a run with the SPIRE coordinates needs it (the graph's steps reach the spire node). */
export type ToolName = 'tofu' | 'skopeo' | 'kubectl' | 'ssh';

export interface FoundTool {
  readonly name: ToolName;
  /** Absolute path (or the override as given). */
  readonly path: string;
  readonly source: 'env' | 'cache' | 'path';
  /** The version directory it was found in, for cache hits. */
  readonly cacheVersion?: string;
}

type Env = Readonly<Record<string, string | undefined>>;

/** The env var that overrides each tool's path. */
export const TOOL_ENV_VARS: Readonly<Record<ToolName, string>> = {
  tofu: 'DEPLOY_TOFU',
  skopeo: 'DEPLOY_SKOPEO',
  kubectl: 'DEPLOY_KUBECTL',
  ssh: 'DEPLOY_SSH',
};

/** Cache subdirectory per tool: `<cache>/<dir>/<version>/<tool>`. */
const CACHE_DIRS: Readonly<Record<ToolName, string>> = {
  tofu: 'tofu',
  skopeo: 'skopeo',
  kubectl: 'kubernetes',
  // nothing builds it into the cache; the look-up there finds nothing and moves on to PATH
  ssh: 'openssh',
};

/** How to get each program, for "missing" messages. */
export const INSTALL_HINTS: Readonly<Record<ToolName, string>> = {
  tofu:
    `run \`npm run tools\` (builds OpenTofu ${TOFU_VERSION} and the providers into the cache), ` +
    'or install OpenTofu and put `tofu` on PATH, or set DEPLOY_TOFU to its path',
  skopeo: 'install skopeo (Debian: `apt-get install skopeo`), or set DEPLOY_SKOPEO to its path',
  kubectl:
    'install kubectl and put it on PATH (the local test cluster builds one into the cache), ' +
    'or set DEPLOY_KUBECTL to its path',
  ssh: 'install the OpenSSH client (Debian: `apt-get install openssh-client`), or set DEPLOY_SSH to its path',
};

/**
 * Finds a program. Returns undefined when it is nowhere; throws a ConfigError when an
 * explicit override names something that is not an executable file (a wrong override must
 * not silently fall back to another program).
 */
export function findTool(name: ToolName, env: Env): FoundTool | undefined {
  const varName = TOOL_ENV_VARS[name];
  const override = env[varName];
  if (override) {
    if (!isExecutableFile(override)) {
      throw new ConfigError(`${varName} does not name an executable file`, [
        { where: varName, message: `${override} is not an executable file` },
      ]);
    }
    return { name, path: override, source: 'env' };
  }
  const cached = findInCache(name, env);
  if (cached) return cached;
  const onPath = findOnPath(name, env.PATH ?? '');
  if (onPath) return { name, path: onPath, source: 'path' };
  return undefined;
}

/** Like findTool, but a missing program is a ToolError saying how to get it. */
export function requireTool(name: ToolName, env: Env): FoundTool {
  const found = findTool(name, env);
  if (!found) {
    throw new ToolError(`${name} was not found (looked at ${TOOL_ENV_VARS[name]}, ${cacheDir(env)}/${CACHE_DIRS[name]}/<version>/${name}, and PATH)`, {
      hint: INSTALL_HINTS[name],
    });
  }
  return found;
}

function findInCache(name: ToolName, env: Env): FoundTool | undefined {
  const root = join(cacheDir(env), CACHE_DIRS[name]);
  const versions = listDir(root)
    .filter((v) => isExecutableFile(join(root, v, name)))
    .sort(compareVersionsDesc);
  // The pinned tofu version first; otherwise the newest version present.
  const chosen = name === 'tofu' && versions.includes(TOFU_VERSION) ? TOFU_VERSION : versions[0];
  if (chosen === undefined) return undefined;
  return { name, path: join(root, chosen, name), source: 'cache', cacheVersion: chosen };
}

function findOnPath(name: string, pathVar: string): string | undefined {
  for (const dir of pathVar.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

/** Newest first; numeric per dot-separated part ("v1.36.3" and "1.36.3" alike), others last. */
export function compareVersionsDesc(a: string, b: string): number {
  const parts = (v: string) => v.replace(/^v/, '').split(/[.-]/).map((x) => (/^\d+$/.test(x) ? Number(x) : x));
  const pa = parts(a);
  const pb = parts(b);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i];
    const y = pb[i];
    if (x === y) continue;
    if (x === undefined) return 1;
    if (y === undefined) return -1;
    if (typeof x === 'number' && typeof y === 'number') return y - x;
    if (typeof x === 'number') return -1;
    if (typeof y === 'number') return 1;
    return String(y).localeCompare(String(x));
  }
  return 0;
}
