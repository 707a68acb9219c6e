import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { requirePushArchives } from '../../../src/workflow/push-archives.js';

const node = (name: string, archive: string, build = false) => ({ name, archive, tag: 't', repository: `r/ns/${name}`, tagRef: `r/ns/${name}:t`, ...(build ? { build: { argv: ['make'], dir: '/' } } : {}) });
const summary = (pushes: Record<string, string>) => ({ nodes: Object.entries(pushes).map(([n, push]) => ({ node: n, push }) as any) });

describe('requirePushArchives (preflight of an apply)', () => {
  it('GIVEN a node the plan pushes whose archive is gone THEN one exit-2 error names the node and the file; nodes not pushed, or built, are not read', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'archives-'));
    await writeFile(join(dir, 'ok.tar'), 'x');
    const model = { target: 'all', nodes: [node('web', join(dir, 'gone.tar')), node('mail', join(dir, 'ok.tar')), node('db', join(dir, 'gone2.tar')), node('built', join(dir, 'later.tar'), true)] } as any;
    const err = await requirePushArchives(model, summary({ web: 'replace', mail: 'create', db: 'none', built: 'create' })).catch((e) => e);
    expect(err.exitCode).toBe(2);
    expect(err.message).toContain('deploy apply of target all stopped before changing anything: an image archive is missing');
    expect(err.message).toContain(`node web: image.archive: ${join(dir, 'gone.tar')} cannot be read, and this apply pushes it`);
    expect(err.message).not.toContain('node db');
    expect(err.message).not.toContain('node built');
  });

  it('GIVEN every pushed archive readable THEN nothing is said', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'archives-'));
    await writeFile(join(dir, 'ok.tar'), 'x');
    await expect(requirePushArchives({ target: 'all', nodes: [node('web', join(dir, 'ok.tar'))] } as any, summary({ web: 'create' }))).resolves.toBeUndefined();
  });
});
