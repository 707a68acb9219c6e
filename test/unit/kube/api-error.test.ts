/**
 * deploy's own failed requests in deploy's words: the captured answers of a cluster
 * (test/fixtures/api-answers/) thrown as deploy's clients throw them, and no answer at all.
 */
import { describe, expect, it } from 'vitest';
import { DeadlineError } from '../../../src/deadline.js';
import { adviseApiError, apiFailureOfError, apiToolError, describeApiError } from '../../../src/kube/api-error.js';
import type { HandEdit } from '../../../src/workflow/drift/hand-edits.js';
import { capturedNoAnswer, thrownAnswer } from '../../support/api-answers.js';

const SERVER = 'https://k:6443';

describe("a failed request of deploy's own", () => {
  it.each([
    ['invalid', 'the API server refused Deployment recreate as invalid (422 Invalid): spec.strategy.rollingUpdate', '`deploy plan` names the edit'],
    ['conflict', 'another writer changed configmaps stale while deploy wrote it (409 Conflict)', 'it reads the object anew'],
    ['not-found', 'deployments absent does not exist (404 NotFound)', 'K8S_NAMESPACE'],
    ['forbidden', 'lacks: list deployments (API group apps) in namespace api-corpus', '`deploy rbac`'],
    ['unauthorized', "did not accept deploy's credentials (401 Unauthorized)", 'auth whoami'],
    ['quota', "the namespace's ResourceQuota refused pods over-quota (403 Forbidden)", 'raise the quota'],
    ['server-error', 'the API server failed (500 InternalError): Internal error occurred: failed calling webhook', 'admission webhook'],
    ['timeout', 'did not finish the request in time (504 Timeout)', 'slow or overloaded'],
    ['too-many-requests', 'turned the request away under load (HTTP 429), asking to try again after 1s', 'API Priority and Fairness'],
  ])('GIVEN the captured %s answer WHEN it fails a request THEN the ToolError says it and what to do', (name, what, hint) => {
    const err = apiToolError('Reading Deployment api-corpus/web', SERVER, thrownAnswer(name));
    expect(err.message).toContain(`Reading Deployment api-corpus/web failed against the API server ${SERVER}: `);
    expect(err.message).toContain(what);
    expect(err.hint).toContain(hint);
    expect(err.exitCode).toBe(3);
  });

  it("GIVEN no answer within deploy's deadline (as captured) THEN it is a timeout, not the cluster being down", () => {
    const seen = capturedNoAnswer();
    const late = new DeadlineError('create ConfigMap api-corpus/client-timeout', 2000);
    expect(late).toMatchObject(seen);
    expect(apiFailureOfError(late)).toMatchObject({ noAnswer: true, code: undefined });
    expect(apiToolError('Watching', SERVER, late).message).toBe(`Watching failed against the API server ${SERVER}: no answer from the API server in time: ${seen.message}`);
    // the watch's own idle end is a TimeoutError too
    expect(adviseApiError(Object.assign(new Error('the watch sent nothing for 30 s'), { name: 'TimeoutError' }))?.class).toBe('timeout');
  });

  it('GIVEN no answer at all (a refused connection) THEN it is no API failure, and the hint is to check the cluster', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:6443'), { code: 'ECONNREFUSED' });
    expect(apiFailureOfError(refused)).toBeUndefined();
    expect(apiToolError('Reading', SERVER, refused).hint).toContain('Check that the cluster is up');
  });

  it('GIVEN the captured 422 WHEN described briefly THEN it is the status and the Status message, one line', () => {
    expect(describeApiError(thrownAnswer('invalid'))).toBe('HTTP 422: Deployment.apps "recreate" is invalid: spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is \'Recreate\'');
    expect(describeApiError(thrownAnswer('too-many-requests'))).toBe('HTTP 429: Too many requests, please try again later.');
  });

  it("GIVEN the client's ApiException (a parsed Status body, headers) THEN it is read the same", () => {
    const e = thrownAnswer('invalid');
    const parsed = Object.assign(new Error('HTTP-Code: 422'), { code: 422, body: JSON.parse(e.body) as unknown, headers: {} });
    expect(apiFailureOfError(parsed)).toEqual(apiFailureOfError(e));
  });

  it('GIVEN the hand edits deploy found WHEN the 422 names the field one of them wrote THEN the advice names the edit and its writer', () => {
    const edits: HandEdit[] = [
      { kind: 'Deployment', name: 'recreate', node: 'recreate', field: 'spec.strategy.rollingUpdate.maxSurge', writer: 'kubectl-edit', action: 'remove', inTemplate: false },
      { kind: 'Deployment', name: 'recreate', node: 'recreate', field: 'spec.template.spec.containers[recreate].env[FOO]', writer: 'kubectl-set', action: 'remove', inTemplate: true },
    ];
    const advice = adviseApiError(thrownAnswer('invalid'), edits)!;
    expect(advice.class).toBe('invalid');
    expect(advice.what).toContain('spec.strategy.rollingUpdate.maxSurge of Deployment recreate is a hand edit by kubectl-edit');
    expect(advice.what).not.toContain('kubectl-set');
    expect(advice.hint).toContain('undo it');
  });
});
