/**
 * The files the documentation names by path (a module, a script, a test) are there: after a
 * file moves, the prose that sends a reader to it moves with it. Paths are recognised when
 * they start at a top folder of the repository (src/, stacks/, toolchain/, test/, bench/,
 * nix/, examples/, .forgejo/) or at a test project (unit/, integration/, e2e/, support/, read
 * under test/), and end in a source or script extension.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const repo = resolve(import.meta.dirname, '../../..');

const PATH = /(?<![\w/.@-])((?:src|stacks|toolchain|test|bench|nix|examples|\.forgejo|unit|integration|e2e|support)\/[\w./-]*\.(?:ts|mjs|sh|nix|json|yml))(?![\w/-])/g;

/** The repository paths a Markdown text names; a test project's paths are read under test/. */
export function namedPaths(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(PATH)) {
    const p = m[1]!.replace(/\.$/, '');
    if (p.includes('*') || p.includes('<')) continue;
    out.add(/^(unit|integration|e2e|support)\//.test(p) ? `test/${p}` : p);
  }
  return [...out].sort();
}

async function documentation(): Promise<string[]> {
  const docs = (await readdir(join(repo, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => join('docs', f));
  // Not bench/results/: a run's record names the files as they were on its day.
  return ['README.md', ...docs, 'toolchain/README.md', 'test/cluster/README.md'].filter((f) => existsSync(join(repo, f)));
}

describe('paths named in the documentation', () => {
  it('GIVEN README.md, docs/ and the READMEs of toolchain/ and test/cluster/ WHEN every path they name is looked up THEN each is there', async () => {
    const missing: string[] = [];
    let seen = 0;
    for (const file of await documentation()) {
      for (const p of namedPaths(await readFile(join(repo, file), 'utf8'))) {
        seen++;
        if (!existsSync(join(repo, p))) missing.push(`${file}: ${p}`);
      }
    }
    expect(seen).toBeGreaterThan(100);
    expect(missing, 'paths the documentation names that are not in the tree').toEqual([]);
  });

  it('GIVEN prose with paths WHEN read THEN test projects are read under test/ and a longer path is not cut', () => {
    expect(namedPaths('see `unit/stacks/target-stack.test.ts` and src/cli/main.ts, or test/support/cli.ts.')).toEqual([
      'src/cli/main.ts',
      'test/support/cli.ts',
      'test/unit/stacks/target-stack.test.ts',
    ]);
    expect(namedPaths('toolchain/tofu/patches/<name>-<version>/*.patch and dist/cli/main.js')).toEqual([]);
  });
});
