/**
 * Issue 33, item 7: a README that fits on a screen, and documentation whose links resolve.
 * The README stays at most 400 lines (the rest is in docs/ and bench/results/), links to
 * every file of docs/, and every relative link of README.md, docs/*.md and bench/results/*.md
 * names a file that is there and, with an `#anchor` into a Markdown file, one of its headings.
 */
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { brokenLinks, headingSlug, lineCount, markdownAnchors, markdownLinks } from './markdown-links.js';

const repo = resolve(import.meta.dirname, '../../..');
const README_MAX_LINES = 400;

/** The Markdown files of `folder` (relative to the repository), sorted. */
async function markdownIn(folder: string): Promise<string[]> {
  const entries = await readdir(join(repo, folder));
  return entries.filter((e) => e.endsWith('.md')).sort().map((e) => join(repo, folder, e));
}

/** README.md, docs/*.md and bench/results/*.md: the files whose links must resolve. */
async function documentation(): Promise<string[]> {
  return [join(repo, 'README.md'), ...(await markdownIn('docs')), ...(await markdownIn('bench/results'))];
}

describe('the README', () => {
  it(`GIVEN README.md WHEN its lines are counted THEN there are at most ${README_MAX_LINES}`, async () => {
    const lines = lineCount(await readFile(join(repo, 'README.md'), 'utf8'));
    expect(lines, `README.md has ${lines} lines; move a section to docs/ and link it`).toBeLessThanOrEqual(README_MAX_LINES);
    // (the count is of a real file: a README of a few lines would mean it was lost)
    expect(lines).toBeGreaterThan(50);
  });

  it('GIVEN docs/ WHEN the README is read THEN it links to every file there', async () => {
    const linked = new Set(
      markdownLinks(join(repo, 'README.md'))
        .map((l) => l.target.split('#')[0]!)
        .filter((t) => t !== '')
        .map((t) => resolve(repo, t)),
    );
    const docs = await markdownIn('docs');
    expect(docs.length).toBeGreaterThan(5);
    expect(docs.filter((d) => !linked.has(d)).map((d) => d.slice(repo.length + 1))).toEqual([]);
  });
});

describe('the links of README.md, docs/ and bench/results/', () => {
  it('GIVEN every relative link WHEN resolved THEN each names a file that is there, and a heading of it for an #anchor', async () => {
    const files = await documentation();
    expect(files.length).toBeGreaterThan(10);
    // (the check is only as good as what it saw: the README's links to docs/ are among them)
    expect(files.flatMap((f) => markdownLinks(f)).filter((l) => !/^[a-z]+:/.test(l.target)).length).toBeGreaterThan(30);
    expect(brokenLinks(repo, files), 'links that do not resolve (file:line: target (why))').toEqual([]);
  });
});

describe('the link check itself', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  /** A scratch tree: file -> content. */
  async function tree(files: Record<string, string>): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'deploy-docs-links-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    for (const [file, text] of Object.entries(files)) {
      await mkdir(dirname(join(dir, file)), { recursive: true });
      await writeFile(join(dir, file), text);
    }
    return dir;
  }

  it('GIVEN headings WHEN slugged THEN the anchors are GitHub\'s', () => {
    expect(headingSlug('Hand edits and drift')).toBe('hand-edits-and-drift');
    expect(headingSlug('The image build on the deployer (`image.build`, FR-002)')).toBe('the-image-build-on-the-deployer-imagebuild-fr-002');
    expect(headingSlug('/var/lib is never lost by surprise')).toBe('varlib-is-never-lost-by-surprise');
    expect(headingSlug('One laptop -> a shared backend')).toBe('one-laptop---a-shared-backend');
    expect(headingSlug('`deploy status` on 50 nodes')).toBe('deploy-status-on-50-nodes');
    expect(headingSlug('What runs now: [status](x.md) and DEPLOY_STATE')).toBe('what-runs-now-status-and-deploy_state');
  });

  it('GIVEN a file whose links break in every way WHEN checked THEN each broken one is named with its line, and nothing else', async () => {
    const dir = await tree({
      'README.md': [
        '# Top',
        '',
        '## Same',
        '## Same',
        'Good: [a](docs/a.md), [a part](docs/a.md#part-two), [here](#top), [again](#same-1), [folder](docs),',
        '[web](https://example.org/x.md#nothing), ![picture](docs/p.svg).',
        'Bad: [gone](docs/gone.md), [no part](docs/a.md#part-three), [no here](#bottom).',
        'In code, not links: `[x](nowhere.md)`',
        '```',
        '[y](nowhere-either.md)',
        '```',
        '[def]: docs/missing.md',
        '',
      ].join('\n'),
      'docs/a.md': '# A\n\n## Part two\n',
      'docs/p.svg': '<svg/>',
    });
    expect(brokenLinks(dir, [join(dir, 'README.md')])).toEqual([
      'README.md:7: docs/gone.md (no such file: docs/gone.md)',
      'README.md:7: docs/a.md#part-three (no heading #part-three in docs/a.md)',
      'README.md:7: #bottom (no heading #bottom in README.md)',
      'README.md:12: docs/missing.md (no such file: docs/missing.md)',
    ]);
    expect([...markdownAnchors(join(dir, 'README.md'))]).toEqual(['top', 'same', 'same-1']);
  });

  it('GIVEN the repository\'s README with one link and one anchor broken WHEN checked THEN exactly those two are named', async () => {
    const readmePath = join(repo, 'README.md');
    const readme = await readFile(readmePath, 'utf8');
    const edited = readme
      .replace('[docs/architecture.md](docs/architecture.md)', '[docs/architecture.md](docs/architecture-gone.md)')
      .replace('(#more)', '(#less)');
    expect(edited).not.toBe(readme);
    const read = (file: string) => (file === readmePath ? edited : readFileSync(file, 'utf8'));
    expect(brokenLinks(repo, [readmePath], read)).toEqual([
      expect.stringMatching(/^README\.md:\d+: #less \(no heading #less in README\.md\)$/),
      expect.stringMatching(/^README\.md:\d+: docs\/architecture-gone\.md \(no such file: docs\/architecture-gone\.md\)$/),
    ]);
  });
});
