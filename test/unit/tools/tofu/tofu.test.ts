import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { InterruptedError } from '../../../../src/errors.js';
import { applyPlan, type TofuEvent } from '../../../../src/tools/tofu/tofu.js';

const stuck = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'tofu-stuck.mjs');

describe('applyPlan when tofu does not stop after the interrupt', () => {
  it('kills it after the grace period and says the lock may still be held', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tofu-unit-'));
    const ac = new AbortController();
    const events: TofuEvent[] = [];
    const err = await applyPlan({
      dir,
      planFile: 'tfplan',
      tofuPath: stuck,
      signal: ac.signal,
      interruptGraceMs: 300,
      env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` },
      onEvent: (e) => {
        events.push(e);
        if (e.kind === 'version') ac.abort();
      },
    }).catch((e: unknown) => e);
    expect(events.filter((e) => e.kind === 'log' && e.message.includes('Interrupt received'))).toHaveLength(1);
    expect(err).toBeInstanceOf(InterruptedError);
    expect((err as Error).message).toContain('did not stop within 300ms, so it was killed');
    expect((err as InterruptedError).hint).toContain('deploy state unlock');
  });
});

describe('formatAttributePath', () => {
  it('writes a replace path as tofu does', async () => {
    const { formatAttributePath } = await import('../../../../src/tools/tofu/tofu.js');
    expect(formatAttributePath(['spec', 0, 'resources', 0, 'requests'])).toBe('spec[0].resources[0].requests');
    expect(formatAttributePath(['metadata', 0, 'namespace'])).toBe('metadata[0].namespace');
  });
});
