import { describe, expect, it } from 'vitest';
import { buildTargets, loadCoordinates, parseGroupPlan } from '../../../../src/config/load.js';
import { DeployError } from '../../../../src/errors.js';
import { describeClaimLoss, findClaimLosses, refuseClaimLosses } from '../../../../src/workflow/guard/claim-guard.js';
import type { PlannedChange } from '../../../../src/contract/graph/planned-change.js';
import { formatTargetSummary, summarizePlan } from '../../../../src/workflow/summary/plan-summary.js';
import { samplePlan } from '../../../support/cli.js';

const plan = parseGroupPlan(JSON.stringify(samplePlan()), '/p/g.json');
const [all] = buildTargets(plan, loadCoordinates({}, { K8S_REGISTRY: 'reg', K8S_STORAGE_CLASS: 'fast' }, process.cwd()), '/p/g.json', ['all']);
const claim = (node: string, actions: string[], extra: Partial<PlannedChange> = {}): PlannedChange => ({
  address: `kubernetes_persistent_volume_claim_v1.node-${node}_state_26D7464E`,
  name: `node-${node}_state_26D7464E`,
  actions,
  actionReason: undefined,
  ...extra,
});
const byStorageClass = claim('alpha', ['delete', 'create'], { actionReason: 'replace_because_cannot_update', replacePaths: ['spec[0].storage_class_name'] });
const none = { destroy: false, allowed: new Set<string>() };

describe('findClaimLosses', () => {
  it('GIVEN a claim of a node that stays, replaced by a new StorageClass THEN it is refused, naming the attribute and the coordinate', () => {
    const [loss, ...rest] = findClaimLosses(all!, [byStorageClass], none);
    expect(rest).toEqual([]);
    expect(loss).toMatchObject({ node: 'alpha', claim: 'alpha-state', change: 'replace', cause: 'forced', allowed: false });
    expect(loss!.forcedBy).toEqual(['spec[0].storage_class_name: the StorageClass (K8S_STORAGE_CLASS or --storage-class, now "fast")']);
    expect(describeClaimLoss(loss!)).toBe(
      'replaces /var/lib of node alpha (claim alpha-state), forced by spec[0].storage_class_name: the StorageClass (K8S_STORAGE_CLASS or --storage-class, now "fast"): apply refuses this without --allow-volume-replacement alpha',
    );
  });

  it('GIVEN the flag names the node THEN the replacement is allowed and the line says the data is lost', () => {
    const [loss] = findClaimLosses(all!, [byStorageClass], { destroy: false, allowed: new Set(['alpha']) });
    expect(loss!.allowed).toBe(true);
    expect(describeClaimLoss(loss!)).toMatch(/: allowed by --allow-volume-replacement alpha, the data on it is lost$/);
  });

  it('GIVEN the flag names another node THEN it does not allow this one', () => {
    expect(findClaimLosses(all!, [byStorageClass], { destroy: false, allowed: new Set(['beta']) })[0]!.allowed).toBe(false);
  });

  it('GIVEN a smaller size THEN the size is named, and that a claim only grows in place', () => {
    const [loss] = findClaimLosses(all!, [claim('beta', ['create', 'delete'], { replacePaths: ['spec[0].resources[0].requests'] })], none);
    expect(loss!.forcedBy[0]).toBe('spec[0].resources[0].requests: the size (K8S_STATE_SIZE or --state-size, now "1Gi"): smaller than the claim, and a claim only grows in place');
  });

  it('GIVEN a delete of a staying node\'s claim without paths THEN tofu\'s reason is said in words', () => {
    const [loss] = findClaimLosses(all!, [claim('alpha', ['delete'], { actionReason: 'delete_because_no_resource_config' })], none);
    expect(loss).toMatchObject({ change: 'delete', cause: 'forced', allowed: false, forcedBy: ['the graph has no claim of this node at this address any more'] });
  });

  it('GIVEN a node that left the target THEN its claim goes without the flag, on a line of its own', () => {
    const s = summarizePlan(all!, [claim('old', ['delete']), { address: 'kubernetes_manifest.node-old_deployment_11111111', name: 'node-old_deployment_11111111', actions: ['delete'], actionReason: undefined }], true, none);
    expect(s.claimLosses).toEqual([expect.objectContaining({ node: 'old', cause: 'node-removed', allowed: true })]);
    expect(formatTargetSummary(s).split('\n')).toContain('  deletes /var/lib of node old (claim old-state): the node left the target');
    expect(() => refuseClaimLosses(all!, s.claimLosses)).not.toThrow();
  });

  it('GIVEN a destroy THEN every claim goes, each said on its line', () => {
    const s = summarizePlan(all!, [claim('alpha', ['delete']), claim('beta', ['delete'])], true, { destroy: true, allowed: new Set() });
    expect(s.claimLosses.map((l) => [l.node, l.cause, l.allowed])).toEqual([['alpha', 'destroy', true], ['beta', 'destroy', true]]);
    expect(formatTargetSummary(s)).toContain('  deletes /var/lib of node beta (claim beta-state): the target is destroyed');
  });

  it('ignores claims that are created or updated in place (a larger size)', () => {
    expect(findClaimLosses(all!, [claim('alpha', ['create']), claim('beta', ['update'])], none)).toEqual([]);
  });
});

describe('refuseClaimLosses', () => {
  it('throws exit 2 naming every refused node, its claim and what forces it, with the flag to give', () => {
    const losses = findClaimLosses(all!, [byStorageClass, claim('beta', ['delete', 'create'], { replacePaths: ['spec[0].storage_class_name'] })], none);
    const err = (() => {
      try {
        refuseClaimLosses(all!, losses);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(DeployError);
    expect((err as DeployError).exitCode).toBe(2);
    expect((err as DeployError).message).toContain('apply refused before changing anything: the plan of target all (namespace fediversity) takes the /var/lib claim of 2 nodes that stay in the target');
    expect((err as DeployError).message).toContain('  - node alpha: claim alpha-state would be replaced, forced by spec[0].storage_class_name: the StorageClass');
    expect((err as DeployError).message).toContain('  - node beta: claim beta-state would be replaced');
    expect((err as DeployError).hint).toContain('--allow-volume-replacement alpha --allow-volume-replacement beta');
  });
});
