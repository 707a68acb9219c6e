import { describe, expect, it } from 'vitest';
import { planJsonSchema, readShownPlan, readShownPriorState } from '../../../../src/tools/planfile/tofu-plan-json.js';

/** The part of `tofu show -json <planfile>` that readShownPlan reads (shape of OpenTofu 1.12). */
const shown = {
  format_version: '1.2',
  prior_state: {
    values: {
      root_module: {
        resources: [
          { address: 'null_resource.node-web_rollout_9910F9FD', mode: 'managed', type: 'null_resource', name: 'node-web_rollout_9910F9FD', tainted: true, values: {} },
          { address: 'null_resource.node-mail_rollout_D3D4E6A2', mode: 'managed', type: 'null_resource', name: 'node-mail_rollout_D3D4E6A2', values: {} },
        ],
      },
    },
  },
  resource_changes: [
    {
      address: 'null_resource.node-web_rollout_9910F9FD',
      mode: 'managed',
      type: 'null_resource',
      name: 'node-web_rollout_9910F9FD',
      action_reason: 'replace_by_triggers',
      change: { actions: ['delete', 'create'], before: { triggers: { image: 'a' } }, after: { triggers: { image: 'a' } }, after_unknown: { id: true } },
    },
    {
      address: 'null_resource.node-mail_rollout_D3D4E6A2',
      mode: 'managed',
      type: 'null_resource',
      name: 'node-mail_rollout_D3D4E6A2',
      action_reason: 'replace_by_triggers',
      change: { actions: ['delete', 'create'], before: { triggers: { image: 'a' } }, after: { triggers: {} }, after_unknown: { triggers: { image: true } } },
    },
    { address: 'random_uuid.x', mode: 'managed', type: 'random_uuid', name: 'x', change: { actions: ['no-op'] } },
  ],
};

describe('readShownPlan', () => {
  it('GIVEN a tainted instance in the prior state THEN its change says so, whatever reason tofu gives', () => {
    const plan = readShownPlan(planJsonSchema.parse(shown));
    expect(plan.changes.map((c) => c.address)).toEqual(['null_resource.node-web_rollout_9910F9FD', 'null_resource.node-mail_rollout_D3D4E6A2']);
    expect(plan.changes[0]).toMatchObject({ actionReason: 'replace_by_triggers', wasTainted: true, changedKeys: [] });
    expect(plan.changes[1]!.wasTainted).toBeUndefined();
    // a trigger known only after the apply counts as changed
    expect(plan.changes[1]!.changedKeys).toEqual(['image']);
  });
});

describe('readShownPriorState', () => {
  it('GIVEN a shown prior state THEN the resources as a state file has them: instances grouped, index as index_key, tainted as status, terraform_data dynamics as {value, type}', () => {
    const read = readShownPriorState;
    const plan = {
      prior_state: {
        values: {
          root_module: {
            resources: [
              { address: 'terraform_data.k["a"]', mode: 'managed', type: 'terraform_data', name: 'k', index: 'a', values: { id: '1', input: null, output: { digest: 'sha256:x', n: [1, true] } } },
              { address: 'terraform_data.k["b"]', mode: 'managed', type: 'terraform_data', name: 'k', index: 'b', tainted: true, values: { id: '2' } },
              { address: 'data.external.d', mode: 'data', type: 'external', name: 'd', values: { result: { digest: 'sha256:y' } } },
            ],
            child_modules: [{ address: 'module.m', resources: [{ address: 'module.m.null_resource.n', mode: 'managed', type: 'null_resource', name: 'n', values: { id: '3' } }] }],
          },
        },
      },
    };
    expect(read(planJsonSchema.parse(plan))).toEqual([
      {
        mode: 'managed',
        type: 'terraform_data',
        name: 'k',
        instances: [
          { index_key: 'a', attributes: { id: '1', input: null, output: { value: { digest: 'sha256:x', n: [1, true] }, type: ['object', { digest: 'string', n: ['tuple', ['number', 'bool']] }] } } },
          { index_key: 'b', status: 'tainted', attributes: { id: '2' } },
        ],
      },
      { mode: 'data', type: 'external', name: 'd', instances: [{ attributes: { result: { digest: 'sha256:y' } } }] },
      { module: 'module.m', mode: 'managed', type: 'null_resource', name: 'n', instances: [{ attributes: { id: '3' } }] },
    ]);
    expect(read({})).toEqual([]);
  });
});
