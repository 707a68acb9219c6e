import { describe, expect, it } from 'vitest';
import { buildTargets, loadCoordinates, parseGroupPlan } from '../../../src/config/load.js';
import { deploymentManifest } from '../../../stacks/pod-template.js';
import { SPIRE_BUNDLE_DIR, SPIRE_TOKEN_DIR, withSpireVolumes } from '../../../stacks/spire-pod.js';
import { samplePlan } from '../../support/cli.js';

describe('the pod of a node with SPIRE', () => {
  const [target] = buildTargets(parseGroupPlan(JSON.stringify(samplePlan()), '/p/group.json'), loadCoordinates({}, { K8S_REGISTRY: 'r' }, process.cwd()), '/p/group.json', ['all']);
  const node = target!.nodes[0]!;
  const base = deploymentManifest(target!, node, target!.namespace, 'r/fediversity/alpha@sha256:00', 'uuid');
  const before = JSON.stringify(base);
  const m = withSpireVolumes(base, { tokenSeconds: 3600 });

  it('GIVEN the Deployment WHEN SPIRE is on THEN the pod projects a root-only token of its own account for the audience spire-server', () => {
    const pod = m.spec.template.spec as any;
    expect(pod.serviceAccountName).toBe(`node-${node.name}`);
    const token = pod.volumes.find((v: any) => v.name === 'spire-token');
    expect(token.projected).toEqual({ defaultMode: 0o400, sources: [{ serviceAccountToken: { audience: 'spire-server', expirationSeconds: 3600, path: 'token' } }] });
    expect(pod.volumes.find((v: any) => v.name === 'spire-bundle').configMap).toEqual({ name: 'spire-agent', defaultMode: 0o444 });
    for (const c of pod.containers) {
      expect(c.volumeMounts).toContainEqual({ name: 'spire-token', mountPath: SPIRE_TOKEN_DIR, readOnly: true });
      expect(c.volumeMounts).toContainEqual({ name: 'spire-bundle', mountPath: SPIRE_BUNDLE_DIR, readOnly: true });
      expect(c.volumeMounts.some((v: any) => 'subPath' in v)).toBe(false);
    }
  });

  it('GIVEN a token life WHEN SPIRE is on THEN the projected token has that life, and nothing else differs', () => {
    const short = withSpireVolumes(base, { tokenSeconds: 600 });
    const token = (short.spec.template.spec as any).volumes.find((v: any) => v.name === 'spire-token');
    expect(token.projected.sources).toEqual([{ serviceAccountToken: { audience: 'spire-server', expirationSeconds: 600, path: 'token' } }]);
    expect(JSON.stringify(short).replace('"expirationSeconds":600', '"expirationSeconds":3600')).toBe(JSON.stringify(m));
  });

  it('GIVEN the Deployment THEN everything else stays, and the input is not changed', () => {
    expect(JSON.stringify(base)).toBe(before);
    const pod = m.spec.template.spec as any;
    expect(pod.volumes.slice(0, (base.spec.template.spec as any).volumes.length)).toEqual((base.spec.template.spec as any).volumes);
    expect({ ...m, spec: { ...m.spec, template: undefined } }).toEqual({ ...base, spec: { ...base.spec, template: undefined } });
  });
});
