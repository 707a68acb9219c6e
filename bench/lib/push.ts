/** A node image pushed by skopeo to the local registry, as deploy's graph does it (one copy for the benchmarks). */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import type { ClusterEnv } from './bench-env.ts';

/** Copies the archive to `ref` (`<registry>/<repo>:<tag>`) and returns the digest the registry gave it. */
export async function pushImage(cluster: ClusterEnv, archive: string, ref: string, work: string): Promise<string> {
  const digestFile = join(work, `digest-${randomUUID()}`);
  await execa('skopeo', ['copy', '--quiet', `--dest-tls-verify=${cluster.K8S_REGISTRY_TLS_VERIFY}`, '--digestfile', digestFile, `docker-archive:${archive}`, `docker://${ref}`], { timeout: 300_000 });
  return readFileSync(digestFile, 'utf8').trim();
}
