import { describe, expect, it } from 'vitest';
import { UNKNOWN } from '../../../../src/tools/planfile/cty-msgpack.js';
import { jsonLike, unknownMarks } from '../../../../src/tools/planfile/cty-json.js';
import { changedAttributesOf, templateChangesOf } from '../../../../src/tools/planfile/template-changes.js';

const deployment = (spec: object, containers: object[]) => ({ manifest: { kind: 'Deployment', spec: { replicas: 1, template: { metadata: { labels: { a: 'b' } }, spec: { ...spec, containers } } } } });
const probe = (period: number) => ({ exec: { command: ['sh', '-c', 'x'] }, periodSeconds: period });

describe('templateChangesOf', () => {
  it('GIVEN the same template THEN no change (an empty list: the pod stays)', () => {
    const d = deployment({ terminationGracePeriodSeconds: 30 }, [{ image: 'r/a@sha256:1', readinessProbe: probe(10) }]);
    expect(templateChangesOf(d, structuredClone(d), {})).toEqual({ templateChanges: [] });
  });

  it('GIVEN numbers, a string and a field added and removed THEN each leaf is named by its path, with numbers as values and strings without', () => {
    const before = deployment({ terminationGracePeriodSeconds: 30, hostUsers: false }, [{ image: 'r/a@sha256:1', readinessProbe: probe(10) }]);
    const after = deployment({ terminationGracePeriodSeconds: 60, runtimeClassName: 'other' }, [{ image: 'r/a@sha256:2', readinessProbe: probe(20) }]);
    expect(templateChangesOf(before, after, {}).templateChanges).toEqual([
      { path: 'spec.containers[0].image' },
      { path: 'spec.containers[0].readinessProbe.periodSeconds', before: 10, after: 20 },
      { path: 'spec.hostUsers', before: false },
      { path: 'spec.runtimeClassName' },
      { path: 'spec.terminationGracePeriodSeconds', before: 30, after: 60 },
    ]);
  });

  it('GIVEN a change outside the template (progressDeadlineSeconds) THEN no template change', () => {
    const before = deployment({}, [{ image: 'i' }]);
    const after = { manifest: { ...before.manifest, spec: { ...before.manifest.spec, progressDeadlineSeconds: 21600 } } };
    expect(templateChangesOf(before, after, {})).toEqual({ templateChanges: [] });
  });

  it('GIVEN the image known only after the apply, in a plan file (cty unknown inside a list) THEN the same change as from tofu show -json marks', () => {
    const before = deployment({}, [{ image: 'r/a@sha256:1', name: 'node' }]);
    const raw = deployment({}, [{ image: UNKNOWN, name: 'node' }]);
    const fromPlanFile = templateChangesOf(jsonLike(before), jsonLike(raw), unknownMarks(raw));
    const shown = templateChangesOf(before, deployment({}, [{ name: 'node' }]), { manifest: { spec: { template: { spec: { containers: [{ image: true }] } } } } });
    expect(fromPlanFile).toEqual({ templateChanges: [{ path: 'spec.containers[0].image', afterApply: true }] });
    expect(shown).toEqual(fromPlanFile);
  });

  it('GIVEN a resource without a template on both sides (a create, a claim) THEN nothing', () => {
    expect(templateChangesOf(undefined, deployment({}, []), {})).toEqual({});
    expect(templateChangesOf({ metadata: [{}] }, { metadata: [{}] }, {})).toEqual({});
  });
});

describe('changedAttributesOf', () => {
  const claim = (annotations: Record<string, string>, storage: string) => ({ id: 'ns/web-state', metadata: [{ name: 'web-state', annotations, resource_version: '7' }], spec: [{ resources: [{ requests: { storage } }] }] });

  it('GIVEN an annotation someone added to a claim THEN the update names that attribute, not the size; computed values known after the apply are left out', () => {
    const before = claim({ team: 'x' }, '1Gi');
    const after = claim({}, '1Gi');
    expect(changedAttributesOf('kubernetes_persistent_volume_claim_v1', ['update'], before, after, { metadata: [{ resource_version: true }] })).toEqual({ changedAttributes: ['metadata[0].annotations.team'] });
    expect(changedAttributesOf('kubernetes_persistent_volume_claim_v1', ['update'], claim({}, '1Gi'), claim({}, '2Gi'), {})).toEqual({ changedAttributes: ['spec[0].resources[0].requests.storage'] });
  });

  it('GIVEN a manifest, another provider\'s resource or a create THEN nothing', () => {
    expect(changedAttributesOf('kubernetes_manifest', ['update'], {}, { a: 1 }, {})).toEqual({});
    expect(changedAttributesOf('null_resource', ['update'], {}, { a: 1 }, {})).toEqual({});
    expect(changedAttributesOf('kubernetes_namespace_v1', ['create'], undefined, { a: 1 }, {})).toEqual({});
  });
});
