import { describe, expect, it } from 'vitest';
import { movedTags } from '../../../../src/workflow/target/moved-tags.js';
import type { TofuResource } from '../../../../src/contract/graph/tofu-state.js';

const A = `sha256:${'a'.repeat(64)}`;
const B = `sha256:${'b'.repeat(64)}`;
const recorded = (node: string, digest: string): TofuResource => ({
  mode: 'managed',
  type: 'terraform_data',
  name: `image-${node}_pushed-digest_0A1B2C3D`,
  instances: [{ attributes: { output: { value: { digest }, type: ['object', { digest: 'string' }] } } }],
});
const read = (node: string, digest: string): TofuResource => ({
  mode: 'data',
  type: 'external',
  name: `image-${node}_digest_0A1B2C3D`,
  instances: [{ attributes: { result: { digest } } }],
});

describe('movedTags', () => {
  it('GIVEN a tag read at another digest than the one recorded at its push THEN it names the node with both; equal ones are not moved', () => {
    const moved = movedTags([recorded('alpha', A), read('alpha', B), recorded('beta', A), read('beta', A)]);
    expect([...moved]).toEqual([['alpha', { recorded: A, current: B }]]);
  });

  it('GIVEN a node with no record yet (a state from before it) or no read THEN nothing is said of it', () => {
    expect(movedTags([read('alpha', B), recorded('beta', A)]).size).toBe(0);
    // values that are no digest (a read not made yet) are not compared
    expect(movedTags([recorded('alpha', A), { ...read('alpha', B), instances: [{ attributes: { result: null } }] }]).size).toBe(0);
  });
});
