import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const deployBin = join(repo, 'bin', 'deploy.js');

/**
 * The child-process tests run `bin/deploy.js`, which loads dist/: compile when a source of
 * the state backend is newer than its output (tsc emits even when another module of the tree
 * does not type-check, which is not this test's business).
 */
export function ensureBuilt(): void {
  const out = join(repo, 'dist', 'src', 'state', 'server', 'serve.js');
  // (every file under them, rooms included: src/state/server/, store/, source/, src/cli/report/, ...)
  const newest = Math.max(
    ...['src/state', 'src/cli'].flatMap((d) =>
      readdirSync(join(repo, d), { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => statSync(join(e.parentPath, e.name)).mtimeMs),
    ),
  );
  if (existsSync(out) && statSync(out).mtimeMs >= newest) return;
  const r = spawnSync(process.execPath, [join(repo, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(repo, 'tsconfig.build.json')], {
    cwd: repo,
    encoding: 'utf8',
    timeout: 300_000,
  });
  if (!existsSync(out)) throw new Error(`build failed: ${r.stdout}${r.stderr}`);
}

export interface ServerProcess {
  readonly url: string;
  readonly child: ChildProcess;
  stderr(): string;
  /** SIGKILL, and wait for the exit. */
  kill9(): Promise<void>;
  /** SIGTERM (clean stop), and wait for the exit code. */
  stop(): Promise<number | null>;
}

/** `deploy state serve` as its own process (Node 24: the test runner's), on a free port. */
export async function startServerProcess(dataDir: string, env: NodeJS.ProcessEnv = {}, listen = '127.0.0.1:0'): Promise<ServerProcess> {
  const child = spawn(process.execPath, [deployBin, 'state', 'serve', '--listen', listen, '--data', dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DEPLOY_LOG_LEVEL: 'info', ...env },
  });
  let err = '';
  child.stderr!.on('data', (d) => (err += String(d)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start within 20 s: ${err}`)), 20_000);
    let out = '';
    child.stdout!.on('data', (d) => {
      out += String(d);
      const m = /^(http:\/\/\S+)\n/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${code}) before serving: ${err}`));
    });
  });
  return {
    url,
    child,
    stderr: () => err,
    kill9: async () => {
      child.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}
