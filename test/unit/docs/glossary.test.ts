/**
 * Issue 46: the code cites FR-nnn, SC-nnn, user stories, edge cases and the design's laws, which
 * are written in documents outside the repository; docs/glossary.md says each in a sentence of
 * its own. Every id that src/, stacks/, test/, toolchain/, nix/, bench/, .forgejo/, docs/ or the
 * README cites is defined there, once, in one sentence.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { citedIds, glossaryEntries, isOneSentence, type CitedId } from './cited-ids.js';

const repo = resolve(import.meta.dirname, '../../..');
const GLOSSARY = join(repo, 'docs', 'glossary.md');
const CITING = ['src', 'stacks', 'test', 'toolchain', 'nix', 'bench', '.forgejo', 'docs'];

/**
 * Whether a file is read for ids. Not: the glossary (it defines them), this test (its examples
 * cite ids on purpose), checksums and pictures (`go.sum` hashes hold `US44`), and a benchmark's
 * JSON results (data, not prose).
 */
function isCitingFile(file: string): boolean {
  const rel = relative(repo, file);
  if (file === GLOSSARY || file === import.meta.filename) return false;
  if (/(^|\/)go\.sum$|\.svg$/.test(rel)) return false;
  return !(rel.startsWith('bench/results/') && rel.endsWith('.json'));
}

async function citingFiles(): Promise<string[]> {
  const files = [join(repo, 'README.md')];
  for (const top of CITING) {
    if (!existsSync(join(repo, top))) continue;
    for (const entry of await readdir(join(repo, top), { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) files.push(join(entry.parentPath, entry.name));
    }
  }
  return files.filter(isCitingFile).sort();
}

async function everyCitation(): Promise<CitedId[]> {
  const out: CitedId[] = [];
  for (const file of await citingFiles()) out.push(...citedIds(relative(repo, file), await readFile(file, 'utf8')));
  return out;
}

describe('docs/glossary.md', () => {
  it('GIVEN every id the tree cites WHEN looked up in the glossary THEN each is defined there', async () => {
    const defined = new Set(glossaryEntries(await readFile(GLOSSARY, 'utf8')).map((e) => e.id));
    const cited = await everyCitation();
    // (the scan is only as good as what it saw: ids of every kind, each where it is cited)
    expect(cited.length).toBeGreaterThan(200);
    for (const kind of [/^FR-/, /^SC-/, /^US\d+$/, /^US\d+ AS\d+$/, /^edge case /, /^law /]) {
      expect(cited.some((c) => kind.test(c.id)), `no id of the form ${kind} was found`).toBe(true);
    }
    expect(cited).toContainEqual({ file: 'src/workflow/guard/claim-guard.ts', line: 2, id: 'law 10' });
    expect(cited).toContainEqual({ file: 'test/e2e/deploy-runtime-handler.test.ts', line: 2, id: 'edge case 1' });
    const undefinedIds = cited.filter((c) => !defined.has(c.id)).map((c) => `${c.file}:${c.line}: ${c.id}`);
    expect(undefinedIds, 'ids cited but not defined in docs/glossary.md (file:line: id): add a sentence for each').toEqual([]);
  });

  it('GIVEN the glossary WHEN its entries are read THEN each id is defined once, in one sentence', async () => {
    const entries = glossaryEntries(await readFile(GLOSSARY, 'utf8'));
    expect(entries.length).toBeGreaterThan(60);
    const ids = entries.map((e) => e.id);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i), 'ids defined twice').toEqual([]);
    expect(entries.filter((e) => !isOneSentence(e.text)).map((e) => e.id), 'entries of more than one sentence').toEqual([]);
  });
});

describe('the id reader itself', () => {
  it('GIVEN text citing ids in every form WHEN read THEN each is found in its normal form, on its line', () => {
    const text = [
      '// FR-006 and SC-002; US2 AS3, US1 and AS4 alone',
      ' * the rule (DESIGN law',
      ' * 10) and Law 18; edge 5, Edge case 1, edge case 12',
      '# FR-015..017 is a range',
    ].join('\n');
    expect(citedIds('f.ts', text).map((c) => `${c.line}: ${c.id}`)).toEqual([
      '1: FR-006',
      '1: SC-002',
      '1: US2 AS3',
      '1: US1',
      '2: law 10',
      '3: law 18',
      '3: edge case 5',
      '3: edge case 1',
      '3: edge case 12',
      '4: FR-015',
    ]);
    expect(citedIds('f.ts', 'knowledge 1, lawful 3, FR-1234, hashes like nlUS6BCq')).toEqual([]);
  });

  it('GIVEN a glossary WHEN read THEN its id items are entries, their wrapped lines joined, and its terms are not', () => {
    const markdown = [
      '## The ids',
      '',
      '- **FR-005**: A node\'s pod is ready only when systemd in it is',
      '  `running`.',
      '- **Edge case 4**: A failed unit. Makes two sentences.',
      '- **Law 2**: Every wait has a deadline.',
      '',
      '## Terms',
      '',
      '- **Group plan**: the JSON file.',
    ].join('\n');
    const entries = glossaryEntries(markdown);
    expect(entries).toEqual([
      { id: 'FR-005', text: "A node's pod is ready only when systemd in it is `running`." },
      { id: 'edge case 4', text: 'A failed unit. Makes two sentences.' },
      { id: 'law 2', text: 'Every wait has a deadline.' },
    ]);
    expect(entries.map((e) => isOneSentence(e.text))).toEqual([true, false, true]);
    expect(isOneSentence('Run `bin/deploy.js`. Then more.')).toBe(false);
    expect(isOneSentence('Read `a. B` here.')).toBe(true);
  });
});
