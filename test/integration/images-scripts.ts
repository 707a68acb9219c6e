/**
 * Drives the node-image and registry scripts of test/cluster for the images-* tests: each
 * prints KEY=VALUE lines (or `export KEY=VALUE`) on stdout, parsed here.
 */
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
export const buildScript = `${repoRoot}test/cluster/images/build.sh`;
export const bootCheckScript = `${repoRoot}test/cluster/images/boot-check.sh`;
export const registryScript = `${repoRoot}test/cluster/registry.sh`;

/** `KEY=VALUE` and `export KEY=VALUE` lines to a record; other lines are ignored. */
export function parseKeyValues(stdout: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const m = /^(?:export )?([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (m?.[1] !== undefined && m[2] !== undefined) out[m[1]] = m[2];
  }
  return out;
}

export interface BuiltImage {
  archive: string;
  tag: string;
  imageId: string;
  /** Wall time of the build.sh call, in milliseconds. */
  ms: number;
}

/** Runs build.sh <variant> [--config K=V]... and returns what it printed. */
export async function buildImage(variant: 'good' | 'broken' | 'hang' | 'late-fail' | 'slow-stop' | 'spire', configs: string[] = []): Promise<BuiltImage> {
  const t0 = performance.now();
  const args = [variant, ...configs.flatMap((c) => ['--config', c])];
  const { stdout } = await execa(buildScript, args, { timeout: 1_500_000, stderr: 'inherit' });
  const kv = parseKeyValues(stdout);
  const { ARCHIVE: archive, TAG: tag, IMAGE_ID: imageId } = kv;
  if (archive === undefined || tag === undefined || imageId === undefined) {
    throw new Error(`build.sh ${args.join(' ')} printed no ARCHIVE/TAG/IMAGE_ID:\n${stdout}`);
  }
  return { archive, tag, imageId, ms: performance.now() - t0 };
}

export interface ScriptResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Runs registry.sh with the given arguments (env: e.g. a test's DEPLOY_STATE_DIR; input: stdin). */
export async function registry(args: string[], options: { env?: NodeJS.ProcessEnv; input?: string } = {}): Promise<ScriptResult> {
  const r = await execa(registryScript, args, {
    timeout: 60_000,
    reject: false,
    env: options.env ?? process.env,
    input: options.input ?? '',
  });
  return { exitCode: r.exitCode ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** A TCP port on loopback that nothing listens on right now. */
export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port'));
      });
    });
  });
}
