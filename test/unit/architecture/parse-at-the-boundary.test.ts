/**
 * Parse once, at the boundary (house style; issue 46): JSON that deploy reads is checked by a
 * schema (contract/parse-json.ts, or a zod schema's safeParse), never cast. A cast of
 * `JSON.parse(...)` types a value nobody checked: the first wrong field fails far from the read.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../../..');
const CAST = /JSON\.parse\([^;]*\)\s+as\s+[A-Z{[a-z]/;

async function sources(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => join(e.parentPath, e.name));
}

describe('JSON read at the boundary', () => {
  it('GIVEN src/ and stacks/ THEN no JSON.parse(...) is cast to a type', async () => {
    const found: string[] = [];
    for (const file of [...(await sources(join(root, 'src'))), ...(await sources(join(root, 'stacks')))]) {
      (await readFile(file, 'utf8')).split('\n').forEach((line, i) => {
        if (CAST.test(line)) found.push(`${relative(root, file)}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(found).toEqual([]);
  });

  it('GIVEN a cast as written before THEN the pattern finds it (the check can fail)', () => {
    expect(CAST.test('const r = JSON.parse(text) as NoopRecord;')).toBe(true);
    expect(CAST.test("const { version } = JSON.parse(readFileSync(f, 'utf8')) as { version?: string };")).toBe(true);
    expect(CAST.test('const r = schema.safeParse(JSON.parse(text));')).toBe(false);
  });
});
