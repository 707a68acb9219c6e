import { describe, expect, it } from 'vitest';
import type { Inventory } from '../../src/tools/inventory.js';
import { runCli } from '../support/cli.js';

describe('deploy doctor with the tools built by `npm run tools`', () => {
  it('lists tofu 1.12.6 and the pinned providers from the offline mirror', async () => {
    const r = await runCli(['doctor', '--json'], { ...process.env });
    const inv = JSON.parse(r.stdout) as Inventory;
    expect(inv.tools.find((t) => t.name === 'tofu')).toMatchObject({ status: 'ok', version: '1.12.6' });
    expect(inv.providerConfig.kind).not.toBe('online');
    expect(inv.providers.map((p) => `${p.name} ${p.version} ${p.status}`)).toEqual([
      'kubernetes 2.38.0 ok',
      'null 3.2.4 ok',
      'random 3.7.2 ok',
      'external 2.3.5 ok',
    ]);
    const human = await runCli(['doctor'], { ...process.env });
    expect(human.stdout).toMatch(/^tofu +1\.12\.6 /m);
  });
});
