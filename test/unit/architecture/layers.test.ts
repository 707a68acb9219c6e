import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findLayerViolations, layerViolationLines } from './cruise.js';

const repo = resolve(import.meta.dirname, '../../..');

/** Every source file of ours the rule must see (tests excluded, as the config excludes them). */
async function sourceFiles(root: string, folders: string[]): Promise<string[]> {
  const files: string[] = [];
  for (const folder of folders) {
    for (const entry of await readdir(join(root, folder), { recursive: true })) {
      if (entry.endsWith('.ts') && !entry.endsWith('.test.ts')) files.push(join(folder, entry));
    }
  }
  return files.sort();
}

describe('the layer rule (.dependency-cruiser.cjs)', () => {
  it('GIVEN src/ and stacks/ WHEN cruised THEN no import goes against the flow', async () => {
    const result = await findLayerViolations(repo, ['src', 'stacks']);
    // The check is only as good as what it saw: every source file, with its imports resolved.
    const cruised = result.modules.map((m) => m.source).filter((s) => /^(src|stacks)\//.test(s));
    expect(cruised.sort()).toEqual(await sourceFiles(repo, ['src', 'stacks']));
    expect(result.modules.find((m) => m.source === 'src/cli/main.ts')?.dependencies.length).toBeGreaterThan(5);
    expect(layerViolationLines(result), 'imports against the layer rule (from -> to, rule)').toEqual([]);
  });

  describe('each rule catches the import it forbids', () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterAll(async () => {
      for (const cleanup of cleanups) await cleanup();
    });

    /** A scratch tree with the repo's layer folders: file -> content. */
    async function tree(files: Record<string, string>): Promise<string> {
      // Inside the repository, so that a package import (execa) resolves as it does in src/.
      // (node_modules/.cache does not exist after a fresh `npm ci`)
      await mkdir(join(repo, 'node_modules/.cache'), { recursive: true });
      const dir = await mkdtemp(join(repo, 'node_modules/.cache/deploy-layers-'));
      cleanups.push(() => rm(dir, { recursive: true, force: true }));
      for (const [file, text] of Object.entries(files)) {
        await mkdir(dirname(join(dir, file)), { recursive: true });
        await writeFile(join(dir, file), text);
      }
      await writeFile(join(dir, 'tsconfig.json'), await readFile(join(repo, 'tsconfig.json'), 'utf8'));
      await writeFile(join(dir, 'package.json'), '{"type":"module"}\n');
      return dir;
    }

    const cases: [rule: string, files: Record<string, string>, line: string | RegExp][] = [
      ['nothing-imports-cli', { 'src/state/a.ts': "import type { X } from '../cli/b.js';\nexport type Y = X;\n", 'src/cli/b.ts': 'export type X = 1;\n' },
        'src/state/a.ts -> src/cli/b.ts (nothing-imports-cli)'],
      ['workflow-only-from-cli', { 'src/rollout/a.ts': "export { x } from '../workflow/b.js';\n", 'src/workflow/b.ts': 'export const x = 1;\n' },
        'src/rollout/a.ts -> src/workflow/b.ts (workflow-only-from-cli)'],
      // the rooms of workflow/ are workflow/: a path under one of them is held by the same rule
      ...['target', 'summary', 'guard', 'drift', 'status', 'rbac', 'noop', 'view'].map((room): [string, Record<string, string>, string] => [
        'workflow-only-from-cli', { 'src/state/a.ts': `export { x } from '../workflow/${room}/b.js';\n`, [`src/workflow/${room}/b.ts`]: 'export const x = 1;\n' },
        `src/state/a.ts -> src/workflow/${room}/b.ts (workflow-only-from-cli)`]),
      ['graph-only-from-cli-or-workflow', { 'src/workflow/status/a.ts': "export { x } from '../../rollout/b.js';\nexport { g } from '../../graph/c.js';\n", 'src/rollout/b.ts': "export { g as x } from '../graph/c.js';\n", 'src/graph/c.ts': 'export const g = 1;\n' },
        'src/rollout/b.ts -> src/graph/c.ts (graph-only-from-cli-or-workflow)'],
      ['graph-only-from-cli-or-workflow', { 'src/config/a.ts': "export { x } from '../graph/b.js';\n", 'src/graph/b.ts': 'export const x = 1;\n' },
        'src/config/a.ts -> src/graph/b.ts (graph-only-from-cli-or-workflow)'],
      ['stacks-only-from-graph', { 'src/workflow/a.ts': "export { x } from '../../stacks/b.js';\n", 'stacks/b.ts': 'export const x = 1;\n' },
        'src/workflow/a.ts -> stacks/b.ts (stacks-only-from-graph)'],
      ['stacks-import-config-and-contract', { 'stacks/a.ts': "export { x } from '../src/spire/b.js';\n", 'src/spire/b.ts': 'export const x = 1;\n' },
        'stacks/a.ts -> src/spire/b.ts (stacks-import-config-and-contract)'],
      ['contract-imports-only-errors', { 'src/contract/a.ts': "export { x } from '../config/b.js';\n", 'src/config/b.ts': 'export const x = 1;\n' },
        'src/contract/a.ts -> src/config/b.ts (contract-imports-only-errors)'],
      ['leaf-modules-are-leaves', { 'src/log.ts': "export { x } from './state/b.js';\n", 'src/state/b.ts': 'export const x = 1;\n' },
        'src/log.ts -> src/state/b.ts (leaf-modules-are-leaves)'],
      ['leaf-modules-are-leaves', { 'src/deadline.ts': "export { x } from './config/b.js';\n", 'src/config/b.ts': 'export const x = 1;\n' },
        'src/deadline.ts -> src/config/b.ts (leaf-modules-are-leaves)'],
      ['kube-only-from-cli-workflow-rollout', { 'src/state/a.ts': "export { x } from '../kube/b.js';\n", 'src/kube/b.ts': 'export const x = 1;\n' },
        'src/state/a.ts -> src/kube/b.ts (kube-only-from-cli-workflow-rollout)'],
      ['kube-imports-no-layer-above', { 'src/kube/a.ts': "import type { X } from '../rollout/b.js';\nexport type Y = X;\n", 'src/rollout/b.ts': 'export type X = 1;\n' },
        'src/kube/a.ts -> src/rollout/b.ts (kube-imports-no-layer-above)'],
      ['kube-imports-no-layer-above', { 'src/kube/a.ts': "export { x } from '../state/b.js';\n", 'src/state/b.ts': 'export const x = 1;\n' },
        'src/kube/a.ts -> src/state/b.ts (kube-imports-no-layer-above)'],
      ['only-run-ts-starts-processes', { 'src/tools/kubectl.ts': "export { spawn } from 'node:child_process';\n" },
        'src/tools/kubectl.ts -> child_process (only-run-ts-starts-processes)'],
      ['only-run-ts-starts-processes', { 'stacks/a.ts': "export { execa } from 'execa';\n" },
        /^stacks\/a\.ts -> (\.\.\/)*(node_modules\/)?execa\/index\.js \(only-run-ts-starts-processes\)$/],
      ['imports-resolve', { 'src/cli/a.ts': "export { x } from './missing.js';\n" },
        'src/cli/a.ts -> ./missing.js (imports-resolve)'],
    ];

    it.each(cases)('%s', async (_rule, files, line) => {
      const dir = await tree(files);
      const folders = ['src', 'stacks'].filter((f) => Object.keys(files).some((file) => file.startsWith(`${f}/`)));
      expect(layerViolationLines(await findLayerViolations(dir, folders))).toEqual([typeof line === 'string' ? line : expect.stringMatching(line)]);
    });

    it.each(['kube', 'state', 'state/server', 'state/store', 'state/source', 'tools/tofu', 'tools/planfile', 'rollout/classify', 'contract/graph', 'workflow', 'workflow/target', 'workflow/summary', 'workflow/guard', 'workflow/drift', 'workflow/status', 'workflow/view'])('no-circular (src/%s)', async (folder) => {
      const dir = await tree({ [`src/${folder}/a.ts`]: "export { y } from './b.js';\nexport const x = 1;\n", [`src/${folder}/b.ts`]: "export { x } from './a.js';\nexport const y = 2;\n" });
      const lines = layerViolationLines(await findLayerViolations(dir, ['src']));
      expect(lines).toContain(`src/${folder}/a.ts -> src/${folder}/b.ts (no-circular)`);
      expect(lines.every((l) => l.endsWith('(no-circular)'))).toBe(true);
    });

    it('GIVEN imports along the flow WHEN cruised THEN nothing is reported', async () => {
      const dir = await tree({
        'src/cli/a.ts': "export { w } from '../workflow/b.js';\n",
        'src/workflow/b.ts': "export { g as w } from '../graph/c.js';\n",
        'src/graph/c.ts': "export { s as g } from '../../stacks/d.js';\n",
        'stacks/d.ts': "export { c as s } from '../src/contract/e.js';\n",
        'src/contract/e.ts': "export { e as c } from '../errors.js';\n",
        'src/errors.ts': 'export const e = 1;\n',
        'src/tools/run.ts': "export { spawn } from 'node:child_process';\n",
        // the cluster client under rollout and workflow; the leaf deadline.ts for every layer
        'src/workflow/k.ts': "export { r } from '../rollout/r.js';\n",
        'src/rollout/r.ts': "export { k as r } from '../kube/k.js';\n",
        'src/kube/k.ts': "export { d as k } from '../deadline.js';\nexport const run = () => import('../tools/run.js');\n",
        'src/state/s.ts': "export { d } from '../deadline.js';\n",
        'src/deadline.ts': "export { e as d } from './errors.js';\n",
      });
      expect(layerViolationLines(await findLayerViolations(dir, ['src', 'stacks']))).toEqual([]);
    });
  });
});
