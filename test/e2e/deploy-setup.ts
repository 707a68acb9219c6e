/**
 * Second global setup of the e2e project: what the deploy tests run. They start the real
 * CLI (bin/deploy.js -> dist/), so compile it, and build tofu and the providers (skipped in
 * seconds when the cache has them). Last, it provides when the files start (`e2eFilesFrom`,
 * run-slots.ts: the files vitest starts at once wait for each other's place in the queue).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { runTool } from '../../src/tools/run.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export default async function setup(project: TestProject): Promise<void> {
  const log = (line: string) => process.stderr.write(`[e2e setup] ${line}\n`);
  await runTool(process.execPath, [join(repo, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(repo, 'tsconfig.build.json')], { cwd: repo, timeoutMs: 600_000, onStdoutLine: log, onStderrLine: log });
  await runTool('bash', [join(repo, 'toolchain', 'build-tools.sh')], { cwd: repo, timeoutMs: 3_600_000, onStdoutLine: log, onStderrLine: log });
  project.provide('e2eFilesFrom', Date.now());
}
