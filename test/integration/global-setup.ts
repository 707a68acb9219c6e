/**
 * Global setup of the `integration` project: builds OpenTofu and the providers into the cache
 * (toolchain/build-tools.sh; idempotent, seconds when they are there). A cold build takes
 * several minutes; it is bounded by the hook timeout in vitest.config.ts.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runTool } from '../../src/tools/run.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export default async function setup(): Promise<void> {
  await runTool('bash', [join(repo, 'toolchain', 'build-tools.sh')], {
    cwd: repo,
    timeoutMs: 60 * 60_000,
    onStderrLine: (line) => process.stderr.write(`[tools] ${line}\n`),
    onStdoutLine: (line) => process.stderr.write(`[tools] ${line}\n`),
  });
}
