import { describe, expect, it } from 'vitest';
import { tofuStateHeaderSchema, tofuStateSchema } from '../../../../src/contract/graph/tofu-state.js';

/** A state as tofu writes it (format 4), with the fields deploy does not read. */
const state = {
  version: 4,
  terraform_version: '1.10.0',
  serial: 7,
  lineage: 'c0ffee',
  outputs: { nodes: { value: ['web'], type: ['list', 'string'] } },
  resources: [
    {
      mode: 'managed',
      type: 'terraform_data',
      name: 'k',
      provider: 'provider["terraform.io/builtin/terraform"]',
      instances: [
        { index_key: 'a', schema_version: 0, attributes: { id: '1', output: { value: 'x' } }, sensitive_attributes: [] },
        { index_key: 1, status: 'tainted', attributes: { id: '2' }, dependencies: ['data.external.d'] },
      ],
    },
    { module: 'module.m', mode: 'data', type: 'external', name: 'd', each: 'list', instances: [] },
  ],
  check_results: null,
};

describe('tofuStateSchema (the one model of a state document)', () => {
  it('GIVEN a state as tofu writes it THEN it reads as it is: every field kept, the ones it does not know too', () => {
    expect(tofuStateSchema.parse(state)).toEqual(state);
  });

  it('GIVEN the state inside a saved plan of a target with none yet THEN no serial and no lineage are needed', () => {
    expect(tofuStateSchema.parse({ version: 4 })).toEqual({ version: 4 });
  });

  it('GIVEN a field deploy relies on missing or of another kind THEN refused, with the path', () => {
    const bad = (doc: object) => tofuStateSchema.safeParse(doc).error?.issues.map((i) => i.path.join('.'));
    expect(bad({ serial: 1 })).toEqual(['version']);
    expect(bad({ version: 4, resources: [{ mode: 'managed', type: 't', name: 'n' }] })).toEqual(['resources.0.instances']);
    expect(bad({ version: 4, resources: [{ mode: 'ephemeral', type: 't', name: 'n', instances: [] }] })).toEqual(['resources.0.mode']);
    expect(bad({ version: 4, resources: [{ mode: 'data', type: 't', name: 'n', instances: [{ index_key: true }] }] })).toEqual(['resources.0.instances.0.index_key']);
    expect(bad({ version: 4, resources: [{ mode: 'data', type: 't', name: 'n', instances: [{ attributes: 'x' }] }] })).toEqual(['resources.0.instances.0.attributes']);
    expect(bad({ version: 4, serial: -1 })).toEqual(['serial']);
  });
});

describe('tofuStateHeaderSchema (what the backend judges an update by)', () => {
  it('GIVEN a state THEN serial and lineage are required', () => {
    expect(tofuStateHeaderSchema.safeParse(state).success).toBe(true);
    expect(tofuStateHeaderSchema.safeParse({ version: 4, lineage: 'l' }).error?.issues.map((i) => i.path.join('.'))).toEqual(['serial']);
    expect(tofuStateHeaderSchema.safeParse({ version: 4, serial: 1, lineage: '' }).error?.issues.map((i) => i.path.join('.'))).toEqual(['lineage']);
  });

  it('GIVEN resources it only counts THEN it does not refuse one for a field it never reads', () => {
    expect(tofuStateHeaderSchema.safeParse({ version: 4, serial: 1, lineage: 'l', resources: [{ instances: [{}] }], outputs: { a: 1 } }).success).toBe(true);
  });
});
