import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cacheDir } from '../../src/paths.js';
import type { LockInfo } from '../../src/state/lock-info.js';
import { cacheMirror } from '../../src/tools/providers.js';
import { TOFU_VERSION } from '../../src/tools/versions.js';
import { until } from '../support/until.js';
import { type StoreData, withStore } from './state-stores.js';

// The real OpenTofu (built by the integration project's global setup) and the real null and
// random providers from the offline mirror, for the state backend's tests. The mirror's config
// is the one the integration setup builds (DEPLOY_PROVIDER_PATCHES as deploy reads it: by
// default the patched mirror's tofu-patched.rc); the stock tofu.rc exists only once something
// built the stock mirror (e2e/deploy-stock-provider.test.ts), which on a new machine had not
// happened yet: these tests failed there, naming tofu.rc.

export const tofuBin = join(cacheDir(), 'tofu', TOFU_VERSION, 'tofu');
export const tofuRc = cacheMirror(process.env).cliConfigFile;
export const KEY = 'g1-all';

export const MAIN_TF = `
terraform {
  backend "http" {}
  required_providers {
    null   = { source = "hashicorp/null", version = "3.2.4" }
    random = { source = "hashicorp/random", version = "3.7.2" }
  }
}
variable "sleep" {
  type    = number
  default = 0
}
variable "run" {
  type    = string
  default = "1"
}
resource "random_password" "pw" {
  length = 20
}
resource "null_resource" "step" {
  triggers = { run = var.run }
  provisioner "local-exec" {
    command = "sleep \${var.sleep}"
  }
}
output "pw" {
  value     = random_password.pw.result
  sensitive = true
}
`;

export interface TofuRun {
  readonly child: ChildProcess;
  readonly done: Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }>;
  /** What tofu printed so far (stdout and stderr). */
  readonly output: () => string;
  /** Whether tofu has exited. */
  readonly ended: () => boolean;
}

export function tofu(dir: string, args: string[], backendEnv: Record<string, string>, timeoutMs = 240_000): TofuRun {
  const child = spawn(tofuBin, args, {
    cwd: dir,
    // its own process group, so a kill reaches the provider plugins and provisioners too
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TF_CLI_CONFIG_FILE: tofuRc,
      TF_IN_AUTOMATION: '1',
      TF_INPUT: '0',
      ...backendEnv,
    },
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  child.stderr!.on('data', (d) => (out += String(d)));
  const timer = setTimeout(() => killGroup(child), timeoutMs);
  let ended = false;
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }>((resolve) =>
    child.once('exit', (code, signal) => {
      ended = true;
      clearTimeout(timer);
      resolve({ code, signal, out });
    }),
  );
  return { child, done, output: () => out, ended: () => ended };
}

/**
 * Resolves once the null_resource's provisioner runs its `sleep` (tofu prints the command it
 * executes): tofu then holds the lock, has read the state, and writes nothing until the sleep
 * ends. Fails naming it, with tofu's output, when tofu ends first or after `timeoutMs`.
 */
export async function inProvisioner(run: TofuRun, timeoutMs = 60_000): Promise<void> {
  await until('tofu running the provisioner\'s sleep (a line "null_resource.step (local-exec): Executing: ...sleep")', () => /null_resource\.step \(local-exec\): Executing: .*sleep/.test(run.output()), {
    timeoutMs,
    seen: () => `tofu's output:\n${run.output()}`,
    failIf: () => (run.ended() ? 'tofu ended first' : undefined),
  });
}

/** SIGKILL of tofu and everything it started (as a CI runner stopping the job does). */
export function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // already gone
  }
}

export async function tofuOk(dir: string, args: string[], env: Record<string, string>): Promise<string> {
  const r = await tofu(dir, args, env).done;
  if (r.code !== 0) throw new Error(`tofu ${args.join(' ')} exited ${r.code}:\n${r.out}`);
  return r.out;
}

export const APPLY = ['apply', '-auto-approve', '-no-color', '-lock-timeout=0s'];

export async function workDir(root: string, name: string, env: Record<string, string>): Promise<string> {
  const dir = join(root, name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'main.tf'), MAIN_TF);
  await tofuOk(dir, ['init', '-no-color', '-input=false'], env);
  return dir;
}

/** Polls the store until `key` is locked; returns the holder. */
export async function waitForLock(data: StoreData, key: string, timeoutMs = 60_000): Promise<LockInfo> {
  return withStore(data, async (store) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const lock = await store.lockOf(key);
      if (lock) return lock;
      if (Date.now() > deadline) throw new Error(`${key} was not locked within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  });
}

/** The tofu run's failure if tofu or its CLI config is missing. */
export function requireTofu(): void {
  if (!existsSync(tofuBin) || !existsSync(tofuRc)) throw new Error(`${tofuBin} or ${tofuRc} is missing: run npm run tools`);
}
