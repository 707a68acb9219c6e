#!/usr/bin/env node
// The `deploy` entry. The program needs Node.js >= 22.12 (execa, commander and vitest do).
// When the node on PATH is older (these machines ship Node 20), re-run this file once on the
// Node 24 that the project installs as the npm package `node` (devDependencies), so that
// `deploy` works the same inside and outside npm scripts.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
  let node24;
  try {
    node24 = join(dirname(createRequire(import.meta.url).resolve('node/package.json')), 'bin', 'node');
  } catch {
    node24 = undefined;
  }
  if (!node24 || !existsSync(node24) || process.env.DEPLOY_REEXEC === '1') {
    process.stderr.write(
      `deploy: needs Node.js >= 22.12, found ${process.versions.node}.\n` +
        `  Run 'npm ci' in the project (it installs Node 24 as the npm package 'node'), or put Node >= 22.12 on PATH.\n`,
    );
    process.exit(2);
  }
  const r = spawnSync(node24, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, DEPLOY_REEXEC: '1' },
  });
  if (r.signal) process.kill(process.pid, r.signal);
  process.exit(r.status ?? 1);
}

// CDKTF 0.21 calls util.isArray (DEP0044) on every synth; the warning tells an operator nothing.
const emitWarning = process.emitWarning;
process.emitWarning = function (warning, ...rest) {
  const code = typeof rest[0] === 'object' ? rest[0]?.code : rest[1];
  if (code === 'DEP0044') return;
  return emitWarning.call(process, warning, ...rest);
};

const main = join(here, '..', 'dist', 'src', 'cli', 'main.js');
if (!existsSync(main)) {
  process.stderr.write(`deploy: ${main} is missing: run 'npm ci' (or 'npm run build') in the project first.\n`);
  process.exit(2);
}
const { runMain } = await import(main);
await runMain(process.argv);
