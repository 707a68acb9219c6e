/** How the graph's rollout step calls this same program back: $DEPLOY_BIN, a wrapper of this installation's bin/deploy.js. */
import { existsSync } from 'node:fs';
import { chmod, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { shq } from '../../contract/shell.js';

/** bin/deploy.js of this installation (the module may run from src/ or from dist/src/). */
export function deployEntry(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = join(dir, 'bin', 'deploy.js');
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new Error('bin/deploy.js not found above ' + fileURLToPath(import.meta.url));
}

/**
 * Writes `<runDir>/deploy`, a script that runs this program on the same Node as this process
 * (no re-exec on an old PATH node), and returns its path: the graph runs it as $DEPLOY_BIN.
 */
export async function writeDeployWrapper(runDir: string): Promise<string> {
  const file = join(runDir, 'deploy');
  await writeFile(file, `#!/bin/sh\nexec ${shq(process.execPath)} ${shq(deployEntry())} "$@"\n`);
  await chmod(file, 0o755);
  return file;
}
