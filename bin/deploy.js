#!/usr/bin/env node
// The program's entry. It needs Node.js >= 22.12 (execa, commander and vitest do). The
// `deploy` command (bin/deploy, a shell script) runs it on the Node 24 that `npm ci`
// installs as the npm package `node`, or on PATH's node; run directly, it says what to do
// when that node is too old.
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// A signal before the program has loaded: nothing has started, so leave at once as the shell
// would (128 + the signal's number). src/cli/shutdown.ts takes over once it is loaded.
// These listeners stay: removing the last listener of a signal stops Node's watcher of it, and
// a signal caught while the program loaded (the loop busy compiling) but not yet dispatched
// was then dropped: the run went on as if there had been no Ctrl-C.
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];
let loaded = false;
const leaveEarly = (sig) => {
  if (!loaded) process.exit(128 + constants.signals[sig]);
};
for (const sig of STOP_SIGNALS) process.on(sig, leaveEarly);

const here = dirname(fileURLToPath(import.meta.url));
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
  process.stderr.write(
    `deploy: needs Node.js >= 22.12, found ${process.versions.node}.\n` +
      `  Run 'npm ci' in the project (it installs Node 24 as the npm package 'node') and use bin/deploy,\n` +
      `  or put Node >= 22.12 on PATH.\n`,
  );
  process.exit(2);
}

// A shell may sit in a directory that was removed meanwhile: say so, instead of a stack trace
// from the first process.cwd() (relative paths in flags are read against it).
try {
  process.cwd();
} catch (err) {
  process.stderr.write(`deploy: the current directory no longer exists (${err.code ?? err.message}): cd to an existing directory and run the command again.\n`);
  process.exit(2);
}

// Cache the compiled code of the program and its dependencies (CDKTF is large) on disk:
// later starts skip most of the parsing and compiling. Node's own cache directory under the
// OS temp dir; NODE_COMPILE_CACHE overrides it, NODE_DISABLE_COMPILE_CACHE=1 turns it off.
const { enableCompileCache } = await import('node:module');
enableCompileCache?.();

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
// (no await between these two: runMain installs its listeners before it awaits anything, so a
// signal still to be dispatched reaches them)
loaded = true;
await runMain(process.argv);
