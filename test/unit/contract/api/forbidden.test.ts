/**
 * A 403 in deploy's words (src/contract/api/forbidden.ts): the permission the identity lacks, from
 * tofu's diagnostics (src/tools/tofu/tofu-failure.ts) and from deploy's own requests
 * (src/kube/api-error.ts), said as one the role from `deploy rbac` does not grant.
 */
import { describe, expect, it } from 'vitest';
import { forbiddenIn, forbiddenWords } from '../../../../src/contract/api/forbidden.js';
import { tofuFailure } from '../../../../src/tools/tofu/tofu-failure.js';
import { apiToolError } from '../../../../src/kube/api-error.js';
import type { TofuDiagnostic } from '../../../../src/tools/tofu/tofu-events.js';

const USER = 'system:serviceaccount:ci:deployer';
// as the API server words them (measured on the local cluster, test/e2e/deploy-rbac.test.ts)
const CLUSTER = `namespaces is forbidden: User "${USER}" cannot list resource "namespaces" in API group "" at the cluster scope`;
const NAMESPACED = `deployments.apps "web" is forbidden: User "${USER}" cannot patch resource "deployments" in API group "apps" in the namespace "other"`;

describe('a refused permission', () => {
  it('GIVEN the API server\'s words THEN the verb, resource, group and namespace, each distinct one once', () => {
    expect(forbiddenIn(`${CLUSTER}\n${NAMESPACED}\n${CLUSTER}`)).toEqual([
      { user: USER, verb: 'list', resource: 'namespaces', group: '' },
      { user: USER, verb: 'patch', resource: 'deployments', group: 'apps', namespace: 'other' },
    ]);
    expect(forbiddenIn('pods "x" is forbidden: exceeded quota: compute')).toEqual([]);
    expect(forbiddenIn(`User "${USER}" cannot get resource "pods/log" in API group "" in the namespace "a"`)[0]).toMatchObject({ verb: 'get', resource: 'pods/log' });
  });

  it('THEN said as a permission the role lacks, with the verb and resource', () => {
    expect(forbiddenWords(forbiddenIn(CLUSTER)[0]!)).toBe(`the cluster refused a permission deploy's identity (${USER}) lacks: list namespaces (API group core) cluster-wide; the role from \`deploy rbac\` does not grant it`);
    expect(forbiddenWords(forbiddenIn(NAMESPACED)[0]!)).toContain(': patch deployments (API group apps) in namespace other;');
  });

  it('GIVEN tofu\'s diagnostic of a 403 THEN the TofuError adds the permission and the hint names deploy rbac', () => {
    const d = { severity: 'error', summary: 'Failed to save resource state', detail: `failed to look up GVK: ${CLUSTER}` } as TofuDiagnostic;
    const err = tofuFailure({ verb: 'plan', dir: '/g', diagnostics: [d], failed: [], interrupts: [], stateNotes: [] }, { exitCode: 1, signal: undefined, tail: [] } as any);
    expect(err.message).toContain("  the cluster refused a permission deploy's identity");
    expect(err.message).toContain('list namespaces (API group core) cluster-wide');
    expect(err.hint).toContain('have the cluster\'s admin apply `deploy rbac`');
  });

  it('GIVEN deploy\'s own request answered 403 THEN the ToolError names the permission; another status is said by its class (api-status.ts)', () => {
    const refused = apiToolError('Reading Deployment other/web', 'https://k:6443', { code: 403, body: JSON.stringify({ kind: 'Status', message: NAMESPACED, reason: 'Forbidden', code: 403 }) });
    expect(refused.message).toBe(`Reading Deployment other/web failed against the API server https://k:6443: the cluster refused a permission deploy's identity (${USER}) lacks: patch deployments (API group apps) in namespace other; the role from \`deploy rbac\` does not grant it`);
    expect(refused.hint).toContain('deploy rbac');
    const gone = apiToolError('Reading Deployment ns/web', 'https://k:6443', { code: 500, body: '{"message":"etcd"}' });
    expect(gone.message).toBe('Reading Deployment ns/web failed against the API server https://k:6443: the API server failed (HTTP 500): etcd');
    expect(gone.hint).toContain('a failure of the cluster, not of the object');
    expect(gone.hint).not.toContain('deploy rbac');
  });
});
