/**
 * A missing program stops plan/apply/destroy before anything happens (issue: the fresh
 * machine). With a PATH that has every program of this machine but skopeo, `deploy apply`
 * exits 3 at once, names skopeo and how to get it, and leaves the cluster and the state
 * untouched: no namespace, no state, no graph run.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeployHarness, filesUnder, images } from './harness.js';

let h: DeployHarness;
let plan: string;
let pathWithoutSkopeo: string;

/** A directory of links to every program on PATH except skopeo (the first of each name wins, as on PATH). */
async function linkFarmWithout(dir: string, left: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const seen = new Set<string>();
  for (const d of (process.env.PATH ?? '').split(':')) {
    if (!d) continue;
    for (const name of await readdir(d).catch(() => [] as string[])) {
      if (name === left || seen.has(name)) continue;
      seen.add(name);
      await symlink(join(d, name), join(dir, name));
    }
  }
  return dir;
}

beforeAll(async () => {
  h = await DeployHarness.create('preflight');
  plan = await h.writePlan('group', { solo: { image: await images.good() } });
  pathWithoutSkopeo = await linkFarmWithout(join(h.dir, 'path'), 'skopeo');
});

afterAll(async () => {
  await h?.cleanup();
});

describe('deploy apply without skopeo', () => {
  it('GIVEN no skopeo on PATH WHEN apply runs THEN it exits 3 naming skopeo, before any lock or cluster read, and changes nothing', async () => {
    expect(existsSync(join(pathWithoutSkopeo, 'skopeo'))).toBe(false);
    const t0 = Date.now();
    const r = await h.deploy('apply', plan, [], { PATH: pathWithoutSkopeo, DEPLOY_SKOPEO: '' }, { json: false });
    const seconds = (Date.now() - t0) / 1000;
    expect(r.exitCode, r.stderr).toBe(3);
    expect(r.stderr).toContain('deploy apply cannot run');
    expect(r.stderr).toContain('skopeo was not found');
    expect(r.stderr).toContain('apt-get install skopeo');
    expect(r.stderr).not.toContain('tofu init');
    // no tofu ran: a run takes seconds of init alone
    expect(seconds).toBeLessThan(15);
    // untouched: no namespace, no state, no graph
    const ns = await h.kubectl(['get', 'namespace', h.namespace], { namespace: null });
    expect(ns.exitCode).not.toBe(0);
    expect(ns.stderr).toContain('NotFound');
    expect(await filesUnder(join(h.dir, 'state'))).toEqual([]);
  });

  it('GIVEN the same PATH with skopeo back WHEN plan runs THEN it proceeds (the check is what stopped it)', async () => {
    const r = await h.deploy('plan', plan);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.json.targets[0].nodes.map((n: { node: string }) => n.node)).toEqual(['solo']);
  });
});
