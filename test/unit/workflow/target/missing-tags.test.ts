import { describe, expect, it } from 'vitest';
import { TofuError } from '../../../../src/tools/tofu/tofu.js';
import type { TofuDiagnostic } from '../../../../src/tools/tofu/tofu-events.js';
import { goneTags, planPushingGoneTags } from '../../../../src/workflow/target/missing-tags.js';

/** What tofu says when the digest read's skopeo fails (the detail carries skopeo's stderr). */
const diag = (node: string, why: string): TofuDiagnostic => ({
  severity: 'error',
  summary: 'External Program Execution Failed',
  detail: `The data source received an unexpected error while attempting to execute the program.\n\nProgram: /bin/sh\nError Message: time="2026-12-01T19:00:00Z" level=fatal msg="Error parsing image name \\"docker://reg/ns/${node}:t1\\": ${why}"\n\nState: exit status 1`,
  address: `data.external.image-${node}_digest_0A1B2C3D`,
  where: undefined,
});
const gone = (node: string) => diag(node, 'reading manifest t1 in reg/ns/' + node + ': manifest unknown');
const down = (node: string) => diag(node, 'pinging container registry reg: Get "http://reg/v2/": dial tcp 127.0.0.1:5000: connect: connection refused');
const tofuError = (...d: TofuDiagnostic[]) => new TofuError('tofu plan failed', d, []);
const graph = {
  resource: {
    null_resource: { 'image-web_push_11111111': {}, 'image-db_push_22222222': {}, 'node-web_rollout_33333333': {} },
  },
};

describe('goneTags', () => {
  it('GIVEN digest reads that fail because the tags are gone THEN names the nodes and their push steps', () => {
    expect(goneTags(tofuError(gone('web'), gone('db')), graph)).toEqual([
      { node: 'db', pushAddress: 'null_resource.image-db_push_22222222' },
      { node: 'web', pushAddress: 'null_resource.image-web_push_11111111' },
    ]);
  });
  it.each([
    ['a registry that cannot be reached (a push would fail the same way)', tofuError(down('web'))],
    ['one tag gone and the registry down for another', tofuError(gone('web'), down('db'))],
    ['an error elsewhere too', tofuError(gone('web'), { ...gone('web'), address: 'data.external.spire_machine-id_0A1B2C3D' })],
    ['a node whose push step is not in the graph', tofuError(gone('mail'))],
    ['not a tofu error', new Error('manifest unknown')],
  ])('GIVEN %s THEN undefined (the failure stands)', (_, err) => {
    expect(goneTags(err, graph)).toBeUndefined();
  });
});

describe('planPushingGoneTags', () => {
  it('GIVEN a plan that fails because a tag is gone THEN plans again replacing its push, and says so naming node and tag', async () => {
    const calls: (readonly string[])[] = [];
    const lines: string[] = [];
    const r = await planPushingGoneTags(
      async (replace) => {
        calls.push(replace);
        if (replace.length === 0) throw tofuError(gone('web'));
        return 'plan';
      },
      async () => graph,
      (node) => `reg/ns/${node}:t1`,
      (l) => lines.push(l),
    );
    expect(r.plan).toBe('plan');
    expect([...r.pushedAgain]).toEqual(['web']);
    expect(calls).toEqual([[], ['null_resource.image-web_push_11111111']]);
    expect(lines).toEqual(['the registry no longer has the image of node web (reg/ns/web:t1): its push is planned again (tofu plan -replace=null_resource.image-web_push_11111111)']);
  });
  it('GIVEN a registry that cannot be reached THEN the error is thrown as is, with no second plan', async () => {
    const calls: (readonly string[])[] = [];
    const err = tofuError(down('web'));
    await expect(planPushingGoneTags(async (replace) => (calls.push(replace), Promise.reject(err)), async () => graph, () => undefined, () => {})).rejects.toBe(err);
    expect(calls).toEqual([[]]);
  });
});
