/** The plan says when a push step builds the image first (image.build, FR-002). */
import { describe, expect, it } from 'vitest';
import { buildTargets, loadCoordinates, parseGroupPlan } from '../../../../src/config/load.js';
import { summarizePlan } from '../../../../src/workflow/summary/plan-summary.js';
import { samplePlan } from '../../../support/cli.js';

const plan = samplePlan();
plan.nodes.alpha.image.build = ['nix', 'build', '--out-link', 'images/alpha.tar'];
const [all] = buildTargets(parseGroupPlan(JSON.stringify(plan), '/p/g.json'), loadCoordinates({}, { K8S_REGISTRY: 'reg' }, process.cwd()), '/p/g.json', ['all']);
const push = (node: string) => ({ address: `null_resource.image-${node}_push_832904CE`, name: `image-${node}_push_832904CE`, actions: ['delete', 'create'], actionReason: undefined });

describe('the plan of a node with image.build', () => {
  it('GIVEN its push replaced THEN the plan says the image is built and pushed; a node without a build is only pushed', () => {
    const s = summarizePlan(all!, [push('alpha'), push('beta')], true);
    expect(s.nodes.find((n) => n.node === 'alpha')!.words).toBe('build and push reg/fediversity/alpha:a1');
    expect(s.nodes.find((n) => n.node === 'beta')!.words).toBe('push reg/fediversity/beta:b1');
  });

  it('GIVEN its tag gone from the registry THEN it is built and pushed again', () => {
    const s = summarizePlan(all!, [push('alpha')], true, undefined, { pushedAgain: new Set(['alpha']) });
    expect(s.nodes.find((n) => n.node === 'alpha')!.words).toMatch(/^build and push reg\/fediversity\/alpha:a1 again \(the registry no longer has it\)/);
  });
});
