import { describe, expect, it } from 'vitest';
import { groupValues, nodesOfDeployments, withImage, type GroupSettings, type HelmNode } from '../../../../bench/lib/helm-values.ts';
import { LIVENESS_PERIOD_FACTOR, MAX_ROLLOUT_TIMEOUT_SECONDS, STARTUP_FAILURE_THRESHOLD } from '../../../../src/contract/probes.js';

const nodes = (n: number): HelmNode[] => Array.from({ length: n }, (_, i) => ({ name: `n${String(i).padStart(2, '0')}`, image: `reg/ns/n${i}@sha256:old`, machineId: `m${i}` }));
const settings: GroupSettings = { group: 'bench', networkPolicyName: 'same-namespace-only', probePeriodSeconds: 60, stopTimeoutSeconds: 30 };

describe("the Helm side's values: the same nodes and pod as deploy's group (bench/lib/helm-values.ts)", () => {
  it('GIVEN 50 nodes WHEN 1 (then 10) of them are given a new image THEN exactly those name it, the others keep theirs, and the list given is not changed', () => {
    const before = nodes(50);
    const one = withImage(before, ['n00'], 'reg/helm/node@sha256:new');
    expect(one.filter((n) => n.image === 'reg/helm/node@sha256:new').map((n) => n.name)).toEqual(['n00']);
    const changed = before.slice(1, 11).map((n) => n.name);
    const ten = withImage(one, changed, 'reg/helm/node@sha256:newer');
    expect(ten.filter((n) => n.image === 'reg/helm/node@sha256:newer').map((n) => n.name)).toEqual(changed);
    expect(ten[0]!.image).toBe('reg/helm/node@sha256:new');
    expect(ten.slice(11)).toEqual(before.slice(11));
    expect(ten.map((n) => [n.name, n.machineId])).toEqual(before.map((n) => [n.name, n.machineId]));
    expect(before.every((n) => n.image.endsWith('@sha256:old'))).toBe(true);
  });

  it('GIVEN a name that is not a node of the release WHEN given an image THEN it is refused by name', () => {
    expect(() => withImage(nodes(5), ['n01', 'm001'], 'x')).toThrow('not nodes of the release: m001');
  });

  it("GIVEN a probe period of 60 s WHEN the values are made THEN the pod's timings are deploy's: its ceilings, readiness every 60 s, liveness 3x that, its grace period", () => {
    const v = groupValues(nodes(2), settings);
    expect(v).toEqual({
      nodes: nodes(2),
      group: 'bench',
      networkPolicy: true,
      networkPolicyName: 'same-namespace-only',
      progressDeadlineSeconds: MAX_ROLLOUT_TIMEOUT_SECONDS,
      startupFailureThreshold: STARTUP_FAILURE_THRESHOLD,
      readinessPeriodSeconds: 60,
      livenessPeriodSeconds: LIVENESS_PERIOD_FACTOR * 60,
      terminationGracePeriodSeconds: 30,
    });
    expect(v.livenessPeriodSeconds).toBe(180);
  });

  it("GIVEN deploy's Deployments as the API lists them WHEN read THEN each gives its name, pinned image and machine ID; one without a machine ID is refused", () => {
    const deployment = (name: string, env: { name: string; value: string }[]) => ({ metadata: { name }, spec: { template: { spec: { containers: [{ image: `reg/ns/${name}@sha256:1`, env }] } } } });
    const items = [deployment('n00', [{ name: 'container', value: 'docker' }, { name: 'container_uuid', value: 'u0' }]), deployment('n01', [{ name: 'container_uuid', value: 'u1' }])];
    expect(nodesOfDeployments(items)).toEqual([
      { name: 'n00', image: 'reg/ns/n00@sha256:1', machineId: 'u0' },
      { name: 'n01', image: 'reg/ns/n01@sha256:1', machineId: 'u1' },
    ]);
    expect(() => nodesOfDeployments([deployment('n02', [])])).toThrow('the Deployment n02 has no image or no container_uuid');
  });
});
