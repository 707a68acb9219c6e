/**
 * Issue 49: the table of docs/requirements.md names, for each row of the specification, the
 * tests that prove it; a test renamed or moved must not leave a row pointing at nothing. Every
 * file the "where it is tested" column names is there, and every test it quotes is a title of
 * that file:
 *   - `file`: "title", "another title" (quotes outside parentheses; `\"` is a quote in a title);
 *   - "..." shortens a title: the parts around it appear in that order in ONE title;
 *   - a title is the first string argument of it/test/describe (with .each and the like); in a
 *     template string, `${NAME}` is read as the value of `const NAME = <number or string>` (or
 *     its `?? <number>` default) of the same file, any other `${...}` stays as written;
 *   - a bare AS1..AS4 after a file (`e2e/deploy-us2.test.ts` AS1) names that file's test whose
 *     title has that label;
 *   - a Nix test file's subtests are quoted in parentheses: (subtest "US2: ...").
 * Files are under test/ unless they start with nix/ (as the table's header says).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const repo = resolve(import.meta.dirname, '../../..');

/** One test the table cites: the row, the file (repository path) and the title (undefined: the file only). */
export interface Citation {
  readonly row: string;
  readonly file: string;
  readonly title?: string;
  /** A bare label (AS1) instead of a quoted title. */
  readonly label?: string;
}

/** The cells of a Markdown table line (`|` inside backticks or escaped does not split). */
function cells(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let code = false;
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i]!;
    if (c === '\\' && line[i + 1] === '|') {
      cur += '|';
      i += 1;
    } else if (c === '`') {
      code = !code;
      cur += c;
    } else if (c === '|' && !code) {
      out.push(cur.trim());
      cur = '';
    } else cur += c;
  }
  return out.slice(1);
}

/** The quoted strings of `text`, each with the parenthesis it sits in (undefined: none). */
function quotedStrings(text: string): { text: string; paren?: string }[] {
  const out: { text: string; paren?: string }[] = [];
  const parens: number[] = [];
  let quote: string | undefined;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (quote !== undefined) {
      if (c === '\\' && i + 1 < text.length) {
        quote += text[i + 1];
        i += 1;
      } else if (c === '"') {
        const open = parens.at(-1);
        out.push(open === undefined ? { text: quote } : { text: quote, paren: text.slice(open + 1, i) });
        quote = undefined;
      } else quote += c;
    } else if (c === '"') quote = '';
    else if (c === '(') parens.push(i);
    else if (c === ')') parens.pop();
  }
  return out;
}

/** `text` without its quoted strings (for the bare labels). */
function unquoted(text: string): string {
  return text.replace(/"(?:\\.|[^"\\])*"/g, '""');
}

/** Every test the requirements table cites. */
export function citations(markdown: string): Citation[] {
  const out: Citation[] = [];
  for (const line of markdown.split('\n')) {
    if (!line.startsWith('| ')) continue;
    const [row, , where] = cells(line);
    if (row === undefined || where === undefined || row === 'row' || /^-+$/.test(row)) continue;
    const parts = where.split(/`([^`\s]+\.(?:ts|nix|sh))`/);
    for (let i = 1; i < parts.length; i += 2) {
      const named = parts[i]!;
      const file = named.startsWith('nix/') ? named : `test/${named}`;
      const after = parts[i + 1] ?? '';
      const titles = quotedStrings(after)
        .filter((q) => q.paren === undefined || (file.endsWith('.nix') && /^subtests?\b/.test(q.paren)))
        .map((q) => q.text);
      const labels = [...new Set(unquoted(after).match(/\bAS[1-4]\b/g) ?? [])];
      if (titles.length === 0 && labels.length === 0) out.push({ row, file });
      for (const title of titles) out.push({ row, file, title });
      for (const label of labels) out.push({ row, file, label });
    }
  }
  return out;
}

/** The value of `const NAME = 40`, `= 'x'` or `= Number(process.env.X ?? 20)` in `source`. */
function constValue(source: string, name: string): string | undefined {
  const m = new RegExp(`\\bconst ${name}\\s*=\\s*(?:(\\d[\\d_]*)|'([^']*)'|"([^"]*)"|Number\\([^)]*\\?\\?\\s*(\\d[\\d_]*)\\))\\s*;`).exec(source);
  if (!m) return undefined;
  const v = m[1] ?? m[2] ?? m[3] ?? m[4];
  return m[1] !== undefined || m[4] !== undefined ? String(Number(v!.replaceAll('_', ''))) : v;
}

/** The titles of a test file's it/test/describe calls, with constants put into template strings. */
export function testTitles(source: string): string[] {
  const call = /\b(?:it|test|describe|suite)(?:\.(?:each|for)\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)|\.(?:concurrent|sequential|fails))*\(\s*(?:'((?:\\.|[^'\\])*)'|"((?:\\.|[^"\\])*)"|`((?:\\.|[^`\\])*)`)/g;
  const titles: string[] = [];
  for (const m of source.matchAll(call)) {
    let title = (m[1] ?? m[2] ?? m[3]!).replace(/\\(.)/g, '$1');
    if (m[3] !== undefined) title = title.replace(/\$\{\s*([A-Za-z_]\w*)\s*\}/g, (whole, name: string) => constValue(source, name) ?? whole);
    titles.push(title);
  }
  return titles;
}

/** Whether `cited` (parts around "..." in order) is one of `titles`, or shortens one. */
export function isTitleOf(cited: string, titles: readonly string[]): boolean {
  const parts = cited.split(/\.\.\.|…/).map((p) => p.trim()).filter((p) => p !== '');
  return titles.some((title) => {
    let from = 0;
    for (const part of parts) {
      const at = title.indexOf(part, from);
      if (at < 0) return false;
      from = at + part.length;
    }
    return parts.length > 0;
  });
}

/** What is wrong with one citation, or undefined. */
function problem(c: Citation, read: (file: string) => string | undefined): string | undefined {
  const source = read(c.file);
  if (source === undefined) return `${c.row}: ${c.file} is not there`;
  if (c.file.endsWith('.nix') || c.file.endsWith('.sh')) {
    return c.title === undefined || isTitleOf(c.title, [source]) ? undefined : `${c.row}: ${c.file} has no subtest "${c.title}"`;
  }
  const titles = testTitles(source);
  if (c.title !== undefined && !isTitleOf(c.title, titles)) return `${c.row}: ${c.file} has no test "${c.title}"`;
  if (c.label !== undefined && !titles.some((t) => new RegExp(`\\b${c.label}\\b`).test(t))) return `${c.row}: ${c.file} has no test titled with ${c.label}`;
  return undefined;
}

const fromRepo = (file: string) => (existsSync(join(repo, file)) ? readFileSync(join(repo, file), 'utf8') : undefined);

describe('the tests docs/requirements.md names', () => {
  it('GIVEN every row of the requirements table WHEN each file and test title it cites is looked up THEN each is there', () => {
    const cited = citations(readFileSync(join(repo, 'docs', 'requirements.md'), 'utf8'));
    // (the check is only as good as what it read: 47 rows, each citing at least one test)
    expect(new Set(cited.map((c) => c.row)).size).toBe(47);
    expect(cited.filter((c) => c.title !== undefined).length).toBeGreaterThan(60);
    expect(cited.filter((c) => c.label !== undefined).length).toBeGreaterThan(5);
    const problems = cited.map((c) => problem(c, fromRepo)).filter((p) => p !== undefined);
    expect(problems, 'rows of docs/requirements.md that cite a test that is not there: name the test that proves the row').toEqual([]);
  });

  it('GIVEN a table row WHEN read THEN its files, quoted titles, labels and Nix subtests are cited, and quotes in other parentheses are not', () => {
    const table = [
      '| row | what it asks | where it is tested | status | CI |',
      '|---|---|---|---|---|',
      '| edge 4 | x | `e2e/a.test.ts`: "fails ..." (event "systemd: degraded"); `unit/b.test.ts`: "edge \\"quoted\\": more", "second"; `e2e/c.test.ts` AS1 (with AS3 around it) | e2e | `npm test` |',
      '| US2 test | y | `nix/tests/vm.nix` (subtest "US2: a node ..."); only parsed; `integration/d.test.ts` | not run | by hand |',
    ].join('\n');
    expect(citations(table)).toEqual([
      { row: 'edge 4', file: 'test/e2e/a.test.ts', title: 'fails ...' },
      { row: 'edge 4', file: 'test/unit/b.test.ts', title: 'edge "quoted": more' },
      { row: 'edge 4', file: 'test/unit/b.test.ts', title: 'second' },
      { row: 'edge 4', file: 'test/e2e/c.test.ts', label: 'AS1' },
      { row: 'edge 4', file: 'test/e2e/c.test.ts', label: 'AS3' },
      { row: 'US2 test', file: 'nix/tests/vm.nix', title: 'US2: a node ...' },
      { row: 'US2 test', file: 'test/integration/d.test.ts' },
    ]);
  });

  it('GIVEN test sources WHEN their titles are read THEN quotes are unescaped, .each is passed over and constants are put into template strings', () => {
    const source = [
      'const TIMEOUT_S = 40;',
      'const RUNS = Number(process.env.DEPLOY_TEST_RUNS ?? 20);',
      "describe('the step', () => {",
      "  it('GIVEN it\\'s down THEN fails', () => {});",
      "  it.each([[['--help']], [['state', '--help']]])('GIVEN %j THEN exit 0', () => {});",
      '  it(`rolls back at the ${TIMEOUT_S}s deadline, ${RUNS} runs, ${other.name}`, () => {});',
      '});',
    ].join('\n');
    expect(testTitles(source)).toEqual(['the step', "GIVEN it's down THEN fails", 'GIVEN %j THEN exit 0', 'rolls back at the 40s deadline, 20 runs, ${other.name}']);
  });

  it('GIVEN a cited title WHEN compared THEN its parts around "..." must come in order in one title', () => {
    const titles = ['AS1: pushes each node and runs it by digest, twice', 'another test'];
    expect(isTitleOf('AS1: pushes each node and runs it by digest, twice', titles)).toBe(true);
    expect(isTitleOf('AS1: pushes each node ... by digest ...', titles)).toBe(true);
    expect(isTitleOf('... by digest ... AS1', titles)).toBe(false);
    expect(isTitleOf('AS1: pushes ... another', titles)).toBe(false);
    expect(isTitleOf('AS2: pushes each node', titles)).toBe(false);
  });

  it('GIVEN a renamed test, a moved file and a missing label WHEN checked THEN each row is named', () => {
    const files: Record<string, string> = { 'test/e2e/a.test.ts': "it('AS2: the new name', () => {});" };
    const read = (file: string) => files[file];
    expect(problem({ row: 'US1 AS1', file: 'test/e2e/a.test.ts', title: 'AS1: the old name' }, read)).toBe('US1 AS1: test/e2e/a.test.ts has no test "AS1: the old name"');
    expect(problem({ row: 'US1 AS1', file: 'test/e2e/gone.test.ts', title: 'x' }, read)).toBe('US1 AS1: test/e2e/gone.test.ts is not there');
    expect(problem({ row: 'FR-010', file: 'test/e2e/a.test.ts', label: 'AS4' }, read)).toBe('FR-010: test/e2e/a.test.ts has no test titled with AS4');
    expect(problem({ row: 'US1 AS2', file: 'test/e2e/a.test.ts', label: 'AS2' }, read)).toBeUndefined();
  });
});
