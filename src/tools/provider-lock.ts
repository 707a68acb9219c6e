/**
 * A graph directory's `.terraform.lock.hcl` records the `h1:` hashes of the providers its
 * `tofu init` installed, and a later init refuses providers that match none of them. With the
 * cache's mirror those are the cache's own builds, and they change on purpose: a switch of
 * DEPLOY_PROVIDER_PATCHES (patched or stock builds), a changed patch, a rebuild with another
 * Go. So beside the lock `deploy` keeps `.deploy-providers`, the identity (path, device, inode,
 * size, modification time) of each mirrored provider the lock was written for; when the
 * mirror serves other builds, or the mark is missing, the lock is dropped before the init and
 * the init records the builds it installs. With TF_CLI_CONFIG_FILE or an online init the lock
 * is tofu's business alone and is left as it is.
 */
import { statSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { findProviderConfig, listMirroredProviders } from './providers.js';

type Env = Readonly<Record<string, string | undefined>>;

export const LOCK_FILE = '.terraform.lock.hcl';
export const PROVIDERS_MARK = '.deploy-providers';

/** The identity of the cache's mirrored providers, or undefined when tofu does not use the cache's mirror. */
export function mirroredBuilds(env: Env): string | undefined {
  if (findProviderConfig(env).kind !== 'cache') return undefined;
  return listMirroredProviders(env)
    .map((p) => {
      if (p.path === undefined) return `${p.name} ${p.version} missing`;
      const s = statSync(p.path, { bigint: true });
      return `${p.name} ${p.version} ${p.path} ${s.dev}:${s.ino} ${s.size} ${s.mtimeNs}`;
    })
    .join('\n') + '\n';
}

/** Before `tofu init` in `dir`: drops a lock written for other builds. Returns whether it did. */
export async function dropStaleProviderLock(dir: string, env: Env): Promise<boolean> {
  const builds = mirroredBuilds(env);
  if (builds === undefined) return false;
  const mark = await readFile(join(dir, PROVIDERS_MARK), 'utf8').catch(() => undefined);
  if (mark === builds) return false;
  await rm(join(dir, LOCK_FILE), { force: true });
  return true;
}

/** After a successful `tofu init` in `dir`: records the builds its lock is for. */
export async function markProviderLock(dir: string, env: Env): Promise<void> {
  const builds = mirroredBuilds(env);
  if (builds === undefined) await rm(join(dir, PROVIDERS_MARK), { force: true });
  else await writeFile(join(dir, PROVIDERS_MARK), builds);
}
