/**
 * No folder of src/ holds more than 20 files of its own (issue 46): past that a folder is split
 * into rooms by capability (docs/architecture.md, "The folders"), so a newcomer can name each
 * room from its files.
 */
import { readdir } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const repo = resolve(import.meta.dirname, '../../..');
const MOST = 20;

async function folders(dir: string, out: { folder: string; files: number }[] = []): Promise<{ folder: string; files: number }[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  out.push({ folder: relative(repo, dir), files: entries.filter((e) => e.isFile()).length });
  for (const e of entries) if (e.isDirectory()) await folders(join(dir, e.name), out);
  return out;
}

describe('the folders of src/', () => {
  it(`GIVEN every folder of src/ WHEN its own files are counted THEN none holds more than ${MOST}`, async () => {
    const all = await folders(join(repo, 'src'));
    expect(all.length).toBeGreaterThan(10);
    const big = all.filter((f) => f.files > MOST).map((f) => `${f.folder}: ${f.files} files`);
    expect(big, 'split these folders into rooms by capability (docs/architecture.md)').toEqual([]);
  });
});
