import { describe, expect, it } from 'vitest';
import type { TargetModel } from '../../../../src/config/target-model.js';
import type { RolloutReport } from '../../../../src/rollout/report.js';
import { heldBackLine, markHeldBack, waitWords } from '../../../../src/workflow/summary/held-back-nodes.js';
import type { PlannedChange } from '../../../../src/contract/graph/planned-change.js';
import { summarizePlan } from '../../../../src/workflow/summary/plan-summary.js';

const node = (name: string, after?: string[]) => ({ name, archive: `/a/${name}.tar`, tag: 't2', repository: `r/ns/${name}`, tagRef: `r/ns/${name}:t2`, ...(after ? { after } : {}) });
const model = { target: 'all', namespace: 'ns', stateKey: 'g-all', nodes: [node('app', ['db']), node('db'), node('other'), node('web', ['app'])], degrade: [] } as unknown as TargetModel;
/** Every node's Deployment updated and its rollout step replaced (a new image for all). */
const planned: PlannedChange[] = model.nodes.flatMap((n) => [
  { address: `kubernetes_manifest.node-${n.name}_deployment_A2CE01B5`, name: `node-${n.name}_deployment_A2CE01B5`, actions: ['update'], actionReason: undefined },
  { address: `null_resource.node-${n.name}_rollout_B2CE01B6`, name: `node-${n.name}_rollout_B2CE01B6`, actions: ['delete', 'create'], actionReason: undefined },
]);
const report = (n: string, outcome: RolloutReport['outcome']) => ({ node: n, namespace: 'ns', outcome }) as RolloutReport;

describe('after in the plan and after a failed apply', () => {
  const summary = summarizePlan(model, planned, true);

  it('the plan says which node waits for which', () => {
    const words = Object.fromEntries(summary.nodes.map((n) => [n.node, n.words]));
    expect(words.app).toMatch(/; only once db is ready \(after\)$/);
    expect(words.web).toMatch(/; only once app is ready \(after\)$/);
    expect(words.db).not.toContain('after');
    expect(summary.nodes.find((n) => n.node === 'web')!.after).toEqual(['app']);
  });

  it('GIVEN db rolled back THEN app and web (through app) are held back by db; other and db are not', () => {
    const marked = markHeldBack(model, summary, [report('db', 'rolled-back'), report('other', 'ready')]);
    expect(Object.fromEntries(marked.nodes.map((n) => [n.node, n.heldBackBy]))).toEqual({ app: 'db', db: undefined, other: undefined, web: 'db' });
    expect(heldBackLine('ns', 'web', 'db')).toBe('ns/web: not changed: it comes after db, whose rollout failed; its Deployment and pod are as they were, and the next apply makes its change once db is ready');
  });

  it('GIVEN every rollout ready THEN nothing is held back', () => {
    const marked = markHeldBack(model, summary, model.nodes.map((n) => report(n.name, 'ready')));
    expect(marked.nodes.every((n) => n.heldBackBy === undefined)).toBe(true);
  });

  it('the live view says what a node waits for', () => {
    expect(waitWords({ after: ['db'] })).toBe('db (after)');
    expect(waitWords({ wave: { n: 2, of: 3 } })).toBe('wave 1 of 3');
    expect(waitWords({ wave: { n: 1, of: 3 } })).toBeUndefined();
    expect(waitWords({ after: ['a', 'b'], wave: { n: 3, of: 3 } })).toBe('a and b (after) and wave 2 of 3');
  });
});
