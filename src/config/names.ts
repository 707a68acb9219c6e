/**
 * Every name derived from a node, an app or the namespace, in one place, with the limits
 * that make all of them valid Kubernetes names.
 *
 * Kubernetes object names used here are DNS-1123 labels: at most 63 characters of [a-z0-9-],
 * starting and ending alphanumeric (https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#dns-label-names).
 * A Deployment's pod is named `<deployment>-<10-char template hash>-<5 chars>` and its
 * hostname is that name cut at 63 characters, so a node name of at most 46 characters keeps
 * the pod name (and so the node's hostname) whole: 46 + 1 + 10 + 1 + 5 = 63.
 */
import { nodeServiceAccount } from '../contract/service-accounts.js';

export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const DNS_LABEL_MAX = 63;
/** 46 + `-` + 10-char template hash + `-` + 5-char suffix = 63: the pod name stays a label. */
export const NODE_NAME_MAX = 46;

export const names = {
  deployment: (node: string) => node,
  stateClaim: (node: string) => `${node}-state`,
  serviceAccount: nodeServiceAccount,
  appNamespace: (namespace: string, app: string) => `${namespace}-${app}`,
  stateKey: (group: string, target: string) => `${group}-${target}`,
  imageRepository: (registry: string, namespace: string, node: string) => `${registry}/${namespace}/${node}`,
  networkPolicy: () => 'same-namespace-only',
} as const;

/** Why `name` is not a DNS-1123 label of at most `max` characters, or undefined when it is. */
export function labelProblem(name: string, max = DNS_LABEL_MAX): string | undefined {
  if (name.length === 0) return 'is empty';
  if (name.length > max) return `is ${name.length} characters long; at most ${max} are allowed`;
  if (!DNS_LABEL.test(name)) {
    return 'is not a DNS-1123 label: use lower-case letters, digits and "-", starting and ending with a letter or digit';
  }
  return undefined;
}
