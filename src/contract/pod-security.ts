/**
 * Pod Security Admission (issue 29): the level the namespace of a target enforces, and the
 * security context of a node's pod that passes it.
 *
 * Baseline, not restricted, measured on this project's cluster (Kubernetes 1.36): `kubectl
 * label --dry-run=server ns <ns> pod-security.kubernetes.io/enforce=restricted` over running
 * node pods names "allowPrivilegeEscalation != false, unrestricted capabilities,
 * seccompProfile". The first and the last are set below (systemd boots to `running` with
 * them); runAsNonRoot is not asked of a pod with `hostUsers: false` (user namespaces relax
 * it). What stays is the capabilities: restricted allows only NET_BIND_SERVICE after dropping
 * ALL, and systemd as PID 1 needs the container defaults (CHOWN, SETUID, SETGID, KILL, ... for
 * its units). So the namespace enforces baseline, and warns and audits at restricted, so that
 * the cluster's own tools show what a stricter level would refuse.
 * https://kubernetes.io/docs/concepts/security/pod-security-standards/
 */
export const POD_SECURITY_LEVEL = 'baseline';

/** The namespace's labels for Pod Security Admission. */
export const POD_SECURITY_LABELS: Readonly<Record<string, string>> = {
  'pod-security.kubernetes.io/enforce': POD_SECURITY_LEVEL,
  'pod-security.kubernetes.io/enforce-version': 'latest',
  'pod-security.kubernetes.io/audit': 'restricted',
  'pod-security.kubernetes.io/audit-version': 'latest',
};

/** The pod's security context: the container runtime's default seccomp profile. */
export const POD_SECURITY_CONTEXT = { seccompProfile: { type: 'RuntimeDefault' } } as const;

/** The node container's: no privilege escalation (no_new_privs; systemd itself runs as root in its user namespace). */
export const CONTAINER_SECURITY_CONTEXT = { allowPrivilegeEscalation: false } as const;
