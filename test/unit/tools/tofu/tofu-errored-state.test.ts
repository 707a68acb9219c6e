import { mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { salvageState } from '../../../../src/tools/tofu/tofu-errored-state.js';

const graphDir = () => mkdtempSync(join(tmpdir(), 'errored-state-'));

describe('salvageState (the state tofu could not save)', () => {
  it('says nothing when tofu left no state behind, or only an old errored.tfstate', () => {
    const dir = graphDir();
    expect(salvageState(dir, Date.now(), undefined)).toEqual([]);
    writeFileSync(join(dir, 'errored.tfstate'), '{}');
    expect(salvageState(dir, Date.now() + 60_000, undefined)).toEqual([]);
  });

  it('makes a fresh errored.tfstate private (0600) and says how to push it', () => {
    const dir = graphDir();
    const errored = join(dir, 'errored.tfstate');
    writeFileSync(errored, '{"secret":"s3cr3t"}', { mode: 0o644 });
    const [note, ...rest] = salvageState(dir, Date.now(), undefined);
    expect(rest).toEqual([]);
    expect(statSync(errored).mode & 0o777).toBe(0o600);
    expect(note).toContain(`wrote it to ${errored} (mode 0600;`);
    expect(note).toContain(`tofu -chdir=${dir} state push ${errored}`);
    expect(note).not.toContain('s3cr3t');
  });

  it('keeps a state dump in a new 0600 file of the graph directory, never in the note', () => {
    const dir = graphDir();
    const [note] = salvageState(dir, Date.now(), { lineage: 'lineage-1', secret: 's3cr3t' });
    const [dump] = readdirSync(dir).filter((f) => f.startsWith('errored-dump-'));
    const path = join(dir, dump!);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ lineage: 'lineage-1', secret: 's3cr3t' });
    expect(note).toContain(`state push ${path}`);
    expect(note).not.toContain('s3cr3t');
  });

  it('says what to do when the errored state cannot be made private, instead of failing as an unexpected error', () => {
    // a file even root may not chmod: procfs
    const dir = graphDir();
    symlinkSync('/proc/self/comm', join(dir, 'errored.tfstate'));
    const [note] = salvageState(dir, 0, undefined);
    expect(note).toContain('could not be made private (EPERM)');
    expect(note).toContain(`run \`chmod 600 ${join(dir, 'errored.tfstate')}\` now`);
    expect(note).not.toContain('mode 0600');
  });
});
