/**
 * `deploy status --namespace` and `deploy history --namespace` (or K8S_NAMESPACE): the
 * namespace the operator means, checked against the one the state holds. The state key is
 * `<group>-<target>` whatever the namespace, so a state applied in another namespace would be
 * read as if it were the one meant: said instead, exit 2.
 */
import { ConfigError } from '../../errors.js';
import { names } from '../../config/names.js';

/** The namespace to check and where it was given (`--namespace`, `K8S_NAMESPACE`). */
export interface NamespaceCheck {
  readonly name: string;
  readonly from: string;
}

/** The namespace `target` runs in for `check`, as plan computes it: all -> name, an app -> name-app. */
export function expectedNamespace(check: NamespaceCheck, target: string): string {
  return target === 'all' ? check.name : names.appNamespace(check.name, target);
}

/** Throws (exit 2) when the state of `target` holds a namespace other than the one `check` means. */
export function requireStateNamespace(check: NamespaceCheck | undefined, target: string, stateKey: string, held: string | undefined, where: string): void {
  if (!check || held === undefined) return;
  const expected = expectedNamespace(check, target);
  if (held === expected) return;
  throw new ConfigError(`the state ${stateKey} in ${where} is of another namespace`, [
    { where: check.from, message: `target ${target} means namespace "${expected}", but ${stateKey} holds namespace "${held}"` },
  ], {
    hint: `one state per target, whatever the namespace: leave ${check.from} out to read the deployment in "${held}", or point TF_HTTP_ADDRESS (or DEPLOY_STATE_DIR) at the backend the "${expected}" deployment was applied with`,
  });
}
