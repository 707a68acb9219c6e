import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { requirePushArchives } from '../../../../src/workflow/target/push-archives.js';

const node = (name: string, archive: string, build: string | false = false, dir = '/') => ({ name, archive, tag: 't', repository: `r/ns/${name}`, tagRef: `r/ns/${name}:t`, ...(build ? { build: { argv: [build, 'image'], dir } } : {}) });
const summary = (pushes: Record<string, string>) => ({ nodes: Object.entries(pushes).map(([n, push]) => ({ node: n, push }) as any) });

describe('requirePushArchives (preflight of an apply)', () => {
  it('GIVEN a node the plan pushes whose archive is gone THEN one exit-2 error names the node and the file; nodes not pushed, or built, are not read', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'archives-'));
    await writeFile(join(dir, 'ok.tar'), 'x');
    const model = { target: 'all', nodes: [node('web', join(dir, 'gone.tar')), node('mail', join(dir, 'ok.tar')), node('db', join(dir, 'gone2.tar')), node('built', join(dir, 'later.tar'), 'sh')] } as any;
    const err = await requirePushArchives(model, summary({ web: 'replace', mail: 'create', db: 'none', built: 'create' }), '/usr/bin:/bin').catch((e) => e);
    expect(err.exitCode).toBe(2);
    expect(err.message).toContain('deploy apply of target all stopped before changing anything: an image archive is missing');
    expect(err.message).toContain(`node web: image.archive: ${join(dir, 'gone.tar')} cannot be read, and this apply pushes it`);
    expect(err.message).not.toContain('node db');
    expect(err.message).not.toContain('node built');
  });

  it('GIVEN a pushed node whose image.build command is not on PATH, or not executable by its path THEN each is named; one on PATH or by a relative path is not', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'archives-'));
    await writeFile(join(dir, 'build.sh'), '#!/bin/sh\n', { mode: 0o755 });
    await writeFile(join(dir, 'not-exec.sh'), '#!/bin/sh\n', { mode: 0o644 });
    const model = { target: 'all', nodes: [node('a', '/x.tar', 'nix-build-nope'), node('b', '/x.tar', './not-exec.sh', dir), node('c', '/x.tar', './build.sh', dir), node('d', '/x.tar', 'sh')] } as any;
    const err = await requirePushArchives(model, summary({ a: 'create', b: 'replace', c: 'create', d: 'create' }), '/usr/bin:/bin').catch((e) => e);
    expect(err.exitCode).toBe(2);
    expect(err.message).toContain('stopped before changing anything: what builds or holds the images is missing');
    expect(err.message).toContain('node a: image.build[0]: nix-build-nope is not an executable on PATH');
    expect(err.message).toContain(`node b: image.build[0]: ./not-exec.sh is not an executable file (from ${dir})`);
    expect(err.message).not.toContain('node c');
    expect(err.message).not.toContain('node d');
  });

  it('GIVEN every pushed archive readable THEN nothing is said', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'archives-'));
    await writeFile(join(dir, 'ok.tar'), 'x');
    await expect(requirePushArchives({ target: 'all', nodes: [node('web', join(dir, 'ok.tar'))] } as any, summary({ web: 'create' }))).resolves.toBeUndefined();
  });
});
