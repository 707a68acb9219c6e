/**
 * The unit tests mirror the tree they test, so a newcomer finds a module's tests where the
 * module is: test/unit/<path under src>/<module>.test.ts, or <module>-<aspect>.test.ts for a
 * second file of one module (e.g. migrate-interrupt.test.ts beside migrate.test.ts). A folder
 * of tests may also be named after a folder (test/unit/workflow/view/ for src/workflow/view/).
 * Outside src: test/unit/stacks/ mirrors stacks/, test/unit/toolchain/ the toolchain's shell
 * scripts, test/unit/forgejo/ the CD workflow's scripts (.forgejo/), test/unit/bench/ the
 * benchmarks' pure helpers (bench/lib/), test/unit/docs/ the README and
 * docs/, test/unit/architecture/ the rules of the tree itself. Helpers shared by several test
 * files live in test/support/.
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const repo = resolve(import.meta.dirname, '../../..');

/** Where the tests of each top folder of test/unit/ look for their subject. */
const SUBJECT_ROOTS: Record<string, { root: string; exts: string[] }> = {
  stacks: { root: 'stacks', exts: ['.ts'] },
  toolchain: { root: 'toolchain', exts: ['.sh'] },
  forgejo: { root: '.forgejo', exts: ['.sh', '.mjs', '.yml'] },
  bench: { root: 'bench', exts: ['.ts'] },
};
/** Folders whose tests check the tree or its prose as a whole, not one module. */
const WHOLE_TREE = new Set(['architecture', 'docs']);

/** The module a test file tests, by its path; undefined when the tree has no such module. */
export function subjectOf(testPath: string, exists: (p: string) => boolean): string | undefined {
  const parts = testPath.split('/');
  const base = parts.pop()!.replace(/\.test\.ts$/, '');
  const top = parts[0] ?? '';
  if (WHOLE_TREE.has(top)) return testPath;
  const where = SUBJECT_ROOTS[top];
  const dir = where ? [where.root, ...parts.slice(1)] : ['src', ...parts];
  const exts = where?.exts ?? ['.ts'];
  // migrate-interrupt -> migrate-interrupt, migrate: the longest name that is a module.
  const words = base.split('-');
  for (let n = words.length; n > 0; n--) {
    const name = words.slice(0, n).join('-');
    for (const candidate of [...exts.map((e) => join(...dir, name + e)), join(...dir, name)]) {
      if (exists(candidate)) return candidate;
    }
  }
  return undefined;
}

async function unitTests(): Promise<string[]> {
  const all = await readdir(join(repo, 'test', 'unit'), { recursive: true });
  return all.filter((f) => f.endsWith('.test.ts')).sort();
}

describe('the unit tests mirror the tree', () => {
  it('GIVEN every file under test/unit/ WHEN matched to the module it is named after THEN each has one', async () => {
    const tests = await unitTests();
    expect(tests.length).toBeGreaterThan(80);
    const orphans = tests.filter((t) => subjectOf(t, (p) => existsSync(join(repo, p))) === undefined);
    expect(orphans, 'unit tests named after no module of src/, stacks/, toolchain/, .forgejo/ or bench/: rename or move them').toEqual([]);
  });

  it('GIVEN a test named after no module, or a module of another folder THEN it is an orphan', () => {
    const tree = new Set(['src/state/migrate.ts', 'src/cli/main.ts', 'src/workflow/view', 'toolchain/lib/cache.sh', 'bench/lib/stats.ts']);
    const exists = (p: string) => tree.has(p);
    expect(subjectOf('state/migrate-interrupt.test.ts', exists)).toBe('src/state/migrate.ts');
    expect(subjectOf('workflow/view.test.ts', exists)).toBe('src/workflow/view');
    expect(subjectOf('toolchain/lib/cache.test.ts', exists)).toBe('toolchain/lib/cache.sh');
    expect(subjectOf('bench/lib/stats.test.ts', exists)).toBe('bench/lib/stats.ts');
    expect(subjectOf('bench/lib/helm-values.test.ts', exists)).toBeUndefined();
    expect(subjectOf('cli/migrate.test.ts', exists)).toBeUndefined();
    expect(subjectOf('state/stale-locks.test.ts', exists)).toBeUndefined();
  });
});
