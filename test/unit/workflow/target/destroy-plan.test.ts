import { describe, expect, it } from 'vitest';
import { TofuError, type PlanResult } from '../../../../src/tools/tofu/tofu.js';
import type { TofuDiagnostic } from '../../../../src/tools/tofu/tofu-events.js';
import { failedOnlyAtDigests, planDestroy } from '../../../../src/workflow/target/destroy-plan.js';

const diag = (address: string | undefined, severity: 'error' | 'warning' = 'error'): TofuDiagnostic =>
  ({ severity, summary: 'External Program Execution Failed', detail: '', address, where: undefined });
const tofuError = (...d: TofuDiagnostic[]) => new TofuError('tofu plan failed', d, []);
const digestOf = (node: string) => `data.external.image-${node}_digest_0A1B2C3D`;
const planned = { hasChanges: true, planFile: '/g/tfplan', changes: [], summary: undefined, warnings: [] } satisfies PlanResult;

describe('failedOnlyAtDigests', () => {
  it('GIVEN errors only at digest reads THEN names them', () => {
    expect(failedOnlyAtDigests(tofuError(diag(digestOf('web')), diag(digestOf('db')), diag('data.kubernetes_resources.runtime-class', 'warning')))).toEqual([digestOf('web'), digestOf('db')]);
  });
  it.each([
    ['an error elsewhere too', tofuError(diag(digestOf('web')), diag('data.external.spire_machine-id_0A1B2C3D'))],
    ['an error without an address', tofuError(diag(undefined))],
    ['no error, only warnings', tofuError(diag(digestOf('web'), 'warning'))],
    ['not a tofu error', new Error('boom')],
  ])('GIVEN %s THEN undefined', (_, err) => {
    expect(failedOnlyAtDigests(err)).toBeUndefined();
  });
});

describe('planDestroy', () => {
  it('GIVEN the refresh fails at the digests THEN plans again without refresh and says why', async () => {
    const calls: boolean[] = [];
    const lines: string[] = [];
    const r = await planDestroy(async (refresh) => {
      calls.push(refresh);
      if (refresh) throw tofuError(diag(digestOf('web')));
      return planned;
    }, (l) => lines.push(l));
    expect(r).toBe(planned);
    expect(calls).toEqual([true, false]);
    expect(lines[0]).toContain('the registry did not give the digest of web (registry stopped or tag deleted)');
  });
  it('GIVEN another failure THEN it is thrown as is, with no second plan', async () => {
    const calls: boolean[] = [];
    const err = tofuError(diag('data.external.spire_bundle_0A1B2C3D'));
    await expect(planDestroy(async (refresh) => {
      calls.push(refresh);
      throw err;
    }, () => {})).rejects.toBe(err);
    expect(calls).toEqual([true]);
  });
  it('GIVEN the refresh works THEN one plan', async () => {
    const calls: boolean[] = [];
    await planDestroy(async (refresh) => (calls.push(refresh), planned), () => {});
    expect(calls).toEqual([true]);
  });
});
