/**
 * The class of an API failure and its advice, from the real answers of a cluster
 * (test/fixtures/api-answers/, captured by test/support/capture-api-answers.ts): the status
 * and reason decide, never the words of the message (issue 45).
 */
import { describe, expect, it } from 'vitest';
import {
  adviseApiFailure,
  apiFailureOf,
  apiFailuresRelayed,
  apiNoAnswer,
  classifyApiFailure,
  editsAtCauses,
  type ApiFailure,
  type ApiFailureClass,
  type EditedField,
} from '../../../../src/contract/api/api-status.js';
import { capturedAnswer, capturedNoAnswer, capturedRelay } from '../../../support/api-answers.js';

const PERMISSION_ADVICE = /deploy rbac|refused deploy's identity|grant the verb/;

function failureOf(name: string): ApiFailure {
  const a = capturedAnswer(name);
  return apiFailureOf(a.status, a.body, a.headers['retry-after']);
}

describe('an answer of the API server, classified by its status and reason', () => {
  const cases: [file: string, cls: ApiFailureClass, what: string[], hint: string[]][] = [
    ['invalid', 'invalid', ['refused Deployment recreate as invalid (422 Invalid)', "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"], ['field named above is wrong as written', '`deploy plan` names the edit and its writer']],
    ['invalid-patch-test', 'invalid', ['as invalid, naming no field (422 Invalid)', 'the server rejected our request'], ['a JSON patch whose test failed', 'run the command again']],
    ['conflict', 'conflict', ['another writer changed configmaps stale while deploy wrote it (409 Conflict)'], ['run the command again: it reads the object anew']],
    ['conflict-already-exists', 'conflict', ['configmaps stale exists already, and deploy did not create it (409 AlreadyExists)'], ['if it is a leftover, delete it']],
    ['not-found', 'not-found', ['deployments absent does not exist (404 NotFound)'], ['K8S_NAMESPACE', 'kubeconfig\'s context']],
    ['forbidden', 'forbidden', ["the cluster refused a permission deploy's identity (system:serviceaccount:api-corpus:api-corpus-nobody) lacks: list deployments (API group apps) in namespace api-corpus"], ['`deploy rbac`']],
    ['unauthorized', 'unauthorized', ["did not accept deploy's credentials (401 Unauthorized)"], ['auth whoami', 'renew them']],
    ['quota', 'quota', ["the namespace's ResourceQuota refused pods over-quota (403 Forbidden)", 'exceeded quota: api-corpus-no-pods'], ['raise the quota', 'describe resourcequota']],
    ['server-error', 'server-error', ['the API server failed (500 InternalError)', 'failed calling webhook'], ['a failure of the cluster, not of the object', 'admission webhook', '/readyz']],
    ['timeout', 'timeout', ['did not finish the request in time (504 Timeout)'], ['slow or overloaded', 'run the command again']],
    ['too-many-requests', 'too-many-requests', ['turned the request away under load (HTTP 429), asking to try again after 1s', 'Too many requests'], ['API Priority and Fairness', 'run the command again']],
  ];

  it.each(cases)('GIVEN the captured %s answer WHEN classified THEN it is %s, and the advice says what happened and what to do', (file, cls, what, hint) => {
    const f = failureOf(file);
    expect(classifyApiFailure(f)).toBe(cls);
    const advice = adviseApiFailure(f);
    expect(advice.class).toBe(cls);
    for (const w of what) expect(advice.what).toContain(w);
    for (const h of hint) expect(advice.hint).toContain(h);
    if (cls !== 'forbidden') expect(advice.hint).not.toMatch(PERMISSION_ADVICE);
  });

  it('GIVEN the captured 422 THEN its Status is read whole: reason, object, each cause with its field', () => {
    expect(failureOf('invalid')).toEqual({
      code: 422,
      reason: 'Invalid',
      message: 'Deployment.apps "recreate" is invalid: spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is \'Recreate\'',
      kind: 'Deployment',
      group: 'apps',
      name: 'recreate',
      causes: [{ field: 'spec.strategy.rollingUpdate', reason: 'FieldValueForbidden', message: "Forbidden: may not be specified when strategy `type` is 'Recreate'" }],
      retryAfterSeconds: undefined,
      noAnswer: false,
    });
  });

  it('GIVEN the captured 429 (a text body, no Status) THEN the code classifies it and the delay comes from Retry-After', () => {
    const f = failureOf('too-many-requests');
    expect(f).toMatchObject({ code: 429, reason: undefined, retryAfterSeconds: 1, message: 'Too many requests, please try again later.' });
  });

  it('GIVEN the captured 504 (a Status without kind) THEN its reason is read', () => {
    expect(failureOf('timeout')).toMatchObject({ code: 504, reason: 'Timeout', message: 'Timeout: request did not complete within the allotted timeout' });
  });

  it("GIVEN what deploy's client saw when no answer came in time THEN it is a timeout with the client's words", () => {
    const seen = capturedNoAnswer();
    const advice = adviseApiFailure(apiNoAnswer(seen.message));
    expect(advice.class).toBe('timeout');
    expect(advice.what).toBe('no answer from the API server in time: create ConfigMap api-corpus/client-timeout: no answer within 2s');
  });

  it('GIVEN a status and a message that say different things THEN the status wins, both ways', () => {
    // the words of a 403 in a 422, and of a 422 in a 403: the rule reads the status
    const invalid = apiFailureOf(422, { kind: 'Status', reason: 'Invalid', message: 'x is forbidden: User "u" cannot get resource "y"; 403 Unauthorized' });
    expect(classifyApiFailure(invalid)).toBe('invalid');
    expect(adviseApiFailure(invalid).hint).not.toMatch(PERMISSION_ADVICE);
    const forbidden = apiFailureOf(403, { kind: 'Status', reason: 'Forbidden', message: 'Deployment.apps "web" is invalid: Conflict, not found, timeout' });
    expect(classifyApiFailure(forbidden)).toBe('forbidden');
  });

  it('GIVEN a reason without a known code, or a code without a reason THEN each decides alone', () => {
    expect(classifyApiFailure(apiFailureOf(500, { reason: 'ServerTimeout' }))).toBe('timeout');
    expect(classifyApiFailure(apiFailureOf(503, '<html>Service Unavailable</html>'))).toBe('server-error');
    expect(classifyApiFailure(apiFailureOf(410, { reason: 'Expired' }))).toBe('other');
    expect(classifyApiFailure(apiFailureOf(undefined, { reason: 'AlreadyExists' }))).toBe('conflict');
  });

  it("GIVEN a 403 whose message does not carry the quota admission's words after 'is forbidden: ' THEN it is no quota, even naming one", () => {
    const rbac = apiFailureOf(403, { reason: 'Forbidden', message: 'resourcequotas "exceeded-quota" is forbidden: User "u" cannot get resource "resourcequotas" in API group "" in the namespace "n"' });
    expect(classifyApiFailure(rbac)).toBe('forbidden');
    const admission = apiFailureOf(403, { reason: 'Forbidden', message: 'pods "p" is forbidden: violates PodSecurity "restricted:latest": privileged', details: { name: 'p', kind: 'pods' } });
    expect(adviseApiFailure(admission)).toMatchObject({ class: 'forbidden', what: expect.stringContaining("the cluster's admission refused pods p (403 Forbidden), for no missing permission") });
    expect(adviseApiFailure(admission).hint).not.toMatch(PERMISSION_ADVICE);
    // a quota not yet counted refuses too, in the same plugin's words
    expect(classifyApiFailure(apiFailureOf(403, { reason: 'Forbidden', message: 'pods "p" is forbidden: status unknown for quota: q, resources: pods' }))).toBe('quota');
  });
});

describe("the kubernetes provider's relay of a Status in tofu's diagnostics", () => {
  it("GIVEN tofu's captured diagnostics of four refused kubernetes_manifest resources THEN each is one failure, of its class", () => {
    // (in the order tofu finished them, which varies: by address)
    const relayed = new Map(apiFailuresRelayed(capturedRelay()).map((r) => [r.diagnostics[0]!.address, r]));
    expect([...relayed].map(([address, r]) => [address, r.diagnostics.length, classifyApiFailure(r.failure)]).sort()).toEqual([
      ['kubernetes_manifest.exists', 1, 'conflict'],
      ['kubernetes_manifest.invalid', 3, 'invalid'],
      ['kubernetes_manifest.quota', 2, 'quota'],
      ['kubernetes_manifest.webhook', 3, 'server-error'],
    ]);
    // every diagnostic of a relay is its resource's
    for (const [address, r] of relayed) expect(r.diagnostics.every((d) => d.address === address)).toBe(true);
    expect(relayed.get('kubernetes_manifest.webhook')!.failure).toMatchObject({ reason: 'InternalError', kind: undefined, name: undefined, causes: [{ field: undefined, message: expect.stringContaining('failed calling webhook') }] });
    expect(relayed.get('kubernetes_manifest.quota')!.failure).toMatchObject({ reason: 'Forbidden', kind: 'pods', group: undefined, name: 'over-quota' });
  });

  it('GIVEN the relayed 422 of issue 45 THEN it is invalid, names spec.strategy.rollingUpdate, and never the permission advice', () => {
    const invalid = apiFailuresRelayed(capturedRelay()).find((r) => r.failure.reason === 'Invalid')!;
    expect(invalid.failure).toMatchObject({ kind: 'Deployment', group: 'apps', name: 'recreate', causes: [{ field: 'spec.strategy.rollingUpdate' }] });
    const advice = adviseApiFailure(invalid.failure);
    expect(advice.class).toBe('invalid');
    expect(advice.what).toBe("the API server refused Deployment recreate as invalid (Invalid): spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'");
    expect(advice.hint).not.toMatch(PERMISSION_ADVICE);
  });

  it("GIVEN the provider's summary of a field-manager conflict (apply.go's format) THEN it is a conflict of that object", () => {
    const d = { summary: 'There was a field manager conflict when trying to apply the manifest for "ns1/web"', detail: 'The API returned the following conflict: "Apply failed with 1 conflict: conflict with \\"kubectl-edit\\": .spec.replicas"\n\nYou can override this conflict by setting "force_conflicts" to true in the "field_manager" block.', address: 'kubernetes_manifest.a' };
    const [r] = apiFailuresRelayed([d]);
    expect(r!.failure).toMatchObject({ code: 409, reason: 'Conflict', name: 'web' });
    expect(adviseApiFailure(r!.failure).what).toContain('another writer changed object web while deploy wrote it (409 Conflict): The API returned the following conflict');
  });

  it('GIVEN a Status relayed without details (one diagnostic, no reason) THEN it is a failure of no class; diagnostics of no relay are none', () => {
    const only = { summary: 'API response status: Failure', detail: 'Unauthorized', address: 'kubernetes_manifest.a' };
    const other = { summary: 'Invalid reference', detail: 'x', address: 'kubernetes_manifest.a' };
    const relayed = apiFailuresRelayed([only, other]);
    expect(relayed).toHaveLength(1);
    expect(relayed[0]!.diagnostics).toEqual([only]);
    expect(classifyApiFailure(relayed[0]!.failure)).toBe('other');
    expect(apiFailuresRelayed([other])).toEqual([]);
  });
});

describe('an invalid field and the hand edit there', () => {
  const edit = (field: string, writer = 'kubectl-edit', name = 'recreate'): EditedField => ({ kind: 'Deployment', name, field, writer });
  const invalid = failureOf('invalid');

  it('GIVEN hand edits under the cause, elsewhere, and of another object THEN only the one under it is named, with its writer', () => {
    const edits = [edit('spec.strategy.rollingUpdate.maxSurge'), edit('spec.replicas', 'kubectl (scale)'), edit('spec.strategy.rollingUpdate', 'x', 'other')];
    const advice = adviseApiFailure(invalid, edits);
    expect(advice.what).toContain('; spec.strategy.rollingUpdate.maxSurge of Deployment recreate is a hand edit by kubectl-edit');
    expect(advice.what).not.toContain('kubectl (scale)');
    expect(advice.what).not.toContain('other');
    expect(advice.hint).toContain('the hand edit named above made the object invalid');
  });

  it('GIVEN fields over, at, under, beside the cause, and list elements by index or key THEN the match is by path', () => {
    const at = (field: string, edited: string) => editsAtCauses({ ...invalid, causes: [{ field, reason: undefined, message: 'm' }] }, [edit(edited)]).length === 1;
    expect(at('spec.strategy.rollingUpdate', 'spec.strategy')).toBe(true);
    expect(at('spec.strategy.rollingUpdate', 'spec.strategy.rollingUpdate')).toBe(true);
    expect(at('spec.strategy.rollingUpdate', 'spec.strategy.type')).toBe(false);
    expect(at('spec.strategy.rollingUpdate', 'spec.strategyX')).toBe(false);
    expect(at('spec.template.spec.containers[0].env[1].value', 'spec.template.spec.containers[node].env[FOO]')).toBe(true);
    expect(at('spec.template.spec.containers[0].image', 'spec.template.spec.containers[node].env[FOO]')).toBe(false);
    expect(at('metadata.annotations[a.b/c]', 'metadata.annotations[a.b/d]')).toBe(false);
  });
});
