import { describe, expect, it } from 'vitest';
import type { HandEdit } from '../../../../src/workflow/drift/hand-edits.js';
import { describeTemplateChange, podFateOf, secondsText } from '../../../../src/workflow/summary/pod-fate.js';

describe('podFateOf', () => {
  it('GIVEN a Deployment updated without a template change, or not updated THEN the pod is kept (the step only checks it)', () => {
    expect(podFateOf(true, [])).toEqual({ kind: 'kept' });
    expect(podFateOf(false, undefined)).toEqual({ kind: 'kept' });
  });

  it('GIVEN the stop timeout changed THEN the pod is replaced, and the cause is said in the operator\'s words', () => {
    expect(podFateOf(true, [{ path: 'spec.terminationGracePeriodSeconds', before: 30, after: 60 }])).toEqual({
      kind: 'replaced',
      causes: ['the stop timeout (--stop-timeout) changes from 30s to 1m'],
    });
  });

  it('GIVEN the probe period changed THEN the liveness period that follows it is not said again', () => {
    const fate = podFateOf(true, [
      { path: 'spec.containers[0].livenessProbe.periodSeconds', before: 30, after: 60 },
      { path: 'spec.containers[0].readinessProbe.periodSeconds', before: 10, after: 20 },
    ]);
    expect(fate).toEqual({ kind: 'replaced', causes: ['the probe period (--probe-period) changes from 10s to 20s'] });
  });

  it('GIVEN a field deploy has no word for THEN it is named by its path, with its values when they are numbers', () => {
    expect(podFateOf(true, [{ path: 'spec.containers[0].env[3].value' }])).toEqual({ kind: 'replaced', causes: ["the pod template's spec.containers[0].env[3].value changes"] });
    expect(describeTemplateChange({ path: 'spec.foo', after: 2 })).toBe("the pod template's spec.foo is set to 2");
    expect(describeTemplateChange({ path: 'spec.foo', before: true })).toBe("the pod template's spec.foo (true) is removed");
  });

  it('GIVEN a new image THEN the cause is its image, known after the push', () => {
    expect(podFateOf(true, [{ path: 'spec.containers[0].image', afterApply: true }])).toEqual({ kind: 'replaced', causes: ['its image changes to the one this apply pushes'] });
  });

  it('GIVEN a hand edit of the pod template that the apply undoes THEN the pod is replaced even without a planned template change; a kept one does not count', () => {
    const edit = (action: HandEdit['action']): HandEdit => ({ kind: 'Deployment', name: 'a', node: 'a', field: 'spec.template.spec.containers[node].env[X]', writer: 'kubectl-set', action, inTemplate: true });
    expect(podFateOf(true, [], [edit('remove')])).toEqual({ kind: 'replaced', causes: ['a hand edit of its pod template is undone'] });
    expect(podFateOf(true, [], [edit('keep')])).toEqual({ kind: 'kept' });
  });

  it('GIVEN a hand edit of the spec outside the template undone (kubectl scale) THEN the template is kept but the pod is waited for, the field named', () => {
    const scaled: HandEdit = { kind: 'Deployment', name: 'a', node: 'a', field: 'spec.replicas', writer: 'kubectl (scale)', action: 'set-back', inTemplate: false };
    expect(podFateOf(false, undefined, [scaled])).toEqual({ kind: 'waited', fields: ['spec.replicas'] });
    // a label of the Deployment is no write of the spec: nothing moves
    expect(podFateOf(false, undefined, [{ ...scaled, field: 'metadata.labels[x]' }])).toEqual({ kind: 'kept' });
  });

  it('GIVEN no template read from the plan for an updated Deployment THEN unknown', () => {
    expect(podFateOf(true, undefined)).toEqual({ kind: 'unknown' });
  });

  it('GIVEN many changed fields THEN at most four causes, the last counting the rest', () => {
    const many = [1, 2, 3, 4, 5, 6].map((i) => ({ path: `spec.f${i}`, before: i, after: i + 1 }));
    const fate = podFateOf(true, many);
    expect(fate.kind === 'replaced' && fate.causes).toEqual(["the pod template's spec.f1 changes from 1 to 2", "the pod template's spec.f2 changes from 2 to 3", "the pod template's spec.f3 changes from 3 to 4", '3 more fields of its pod template change']);
  });

  it('writes seconds as an operator would', () => {
    expect([secondsText(45), secondsText(90), secondsText(300), secondsText(21600)]).toEqual(['45s', '90s', '5m', '6h']);
  });
});
