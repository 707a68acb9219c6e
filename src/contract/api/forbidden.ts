/**
 * A 403 of the API server in deploy's words: which permission the identity lacks (verb,
 * resource, API group, namespace), said as one the role from `deploy rbac` does not grant.
 * Shared by tofu's diagnostics (src/tools/tofu/tofu-failure.ts) and deploy's own requests
 * (src/kube/api-error.ts), which both only have the Status message to go by.
 *
 * The message is the RBAC authorizer's, the one stable text a 403 carries (the Status details
 * name the object, not the verb): `<resource> "<name>" is forbidden: User "<user>" cannot
 * <verb> resource "<resource>" in API group "<group>" in the namespace "<ns>"` (or `at the
 * cluster scope`), staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go
 * (forbiddenMessage).
 */

/** The permission a 403 names. */
export interface Forbidden {
  readonly user: string;
  readonly verb: string;
  /** `pods`, `pods/log`, ... */
  readonly resource: string;
  /** The API group, '' for the core group. */
  readonly group: string;
  /** Absent: cluster-wide. */
  readonly namespace?: string;
}

const FORBIDDEN = /User "([^"]*)" cannot ([a-z]+) resource "([^"]+)" in API group "([^"]*)"(?: in the namespace "([^"]+)")?/g;

/** Every distinct permission the text names as refused, in order. */
export function forbiddenIn(text: string): Forbidden[] {
  const out: Forbidden[] = [];
  for (const m of text.matchAll(FORBIDDEN)) {
    const f: Forbidden = { user: m[1]!, verb: m[2]!, resource: m[3]!, group: m[4]!, ...(m[5] !== undefined ? { namespace: m[5] } : {}) };
    if (!out.some((o) => o.verb === f.verb && o.resource === f.resource && o.group === f.group && o.namespace === f.namespace)) out.push(f);
  }
  return out;
}

/** `may not list namespaces (API group core) cluster-wide`, as a permission the role lacks. */
export function forbiddenWords(f: Forbidden): string {
  const where = f.namespace !== undefined ? `in namespace ${f.namespace}` : 'cluster-wide';
  return `the cluster refused a permission deploy's identity (${f.user}) lacks: ${f.verb} ${f.resource} (API group ${f.group || 'core'}) ${where}; the role from \`deploy rbac\` does not grant it`;
}

/** What to do about a refused permission. */
export const FORBIDDEN_HINT =
  "the cluster refused deploy's identity the permission named above: if the namespace is one of the group's, have the cluster's admin apply `deploy rbac` of this group plan and these coordinates (`deploy rbac --plan <plan> --target <target> --service-account <ns>/<name> | kubectl apply -f -`); if it is not (K8S_NAMESPACE or --namespace names another), the role is right to refuse it: name the group's namespace. docs/running-on-your-cluster.md";
