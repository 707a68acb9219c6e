/** Runs the real CLI (bin/deploy, like an operator) and times it with the local clock. */
import { symlinkSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { root, type NodeImage } from './bench-env.ts';

export interface Timed {
  ms: number;
  exitCode: number;
  stdout: string;
  stderr: string;
  json: any;
}

export async function runDeploy(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 1_800_000): Promise<Timed> {
  const t0 = performance.now();
  const r = await execa(join(root, 'bin', 'deploy'), args, { env, reject: false, timeout: timeoutMs, extendEnv: false });
  const ms = performance.now() - t0;
  let json: any;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    json = undefined;
  }
  return { ms, exitCode: r.exitCode ?? -1, stdout: r.stdout, stderr: r.stderr, json };
}

/** Writes a group plan of the given nodes (name -> image) beside symlinks to the archives. */
export function writePlan(dir: string, name: string, group: string, nodes: Record<string, NodeImage>): string {
  mkdirSync(join(dir, 'images'), { recursive: true });
  const planNodes: Record<string, unknown> = {};
  for (const [n, image] of Object.entries(nodes)) {
    const link = join(dir, 'images', `${image.tag}.tar`);
    if (!existsSync(link)) symlinkSync(image.archive, link);
    planNodes[n] = { image: { archive: `images/${image.tag}.tar`, tag: image.tag }, apps: [] };
  }
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ version: 1, group, nodes: planNodes }, null, 2));
  return file;
}

/** What an apply did, from `--json`: pushes and rollout steps per target. */
export function countApply(json: any): { pushes: number; rollouts: number; outcomes: string[] } {
  let pushes = 0;
  let rollouts = 0;
  const outcomes: string[] = [];
  for (const t of json?.targets ?? []) {
    for (const n of t.nodes ?? []) if (n.push === 'create' || n.push === 'replace') pushes++;
    for (const r of t.rollouts ?? []) {
      rollouts++;
      outcomes.push(r.outcome);
    }
  }
  return { pushes, rollouts, outcomes };
}
