import { describe, expect, it } from 'vitest';
import { planJsonSchema, readShownPlan } from '../../../src/tools/tofu-plan-json.js';

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
