/**
 * K8S_SPIRE_TOKEN_SECONDS: the life of the projected token a node's SPIRE agent attests with
 * (FR-015; stacks/spire-pod.ts gives it to the pod as `expirationSeconds`). One rule, one
 * default, parsed once at the boundary. No zod here: `--help` loads this file (the range).
 *
 * The bounds: the API server refuses a projected token that lives less than 10 minutes
 * (the Volume reference, `projected.sources.serviceAccountToken.expirationSeconds`: "must be at
 * least 10 minutes", https://kubernetes.io/docs/reference/kubernetes-api/config-and-storage-resources/volume/); 24 h is ours: a copy of the token that
 * leaks from a node is good for at most its life. kubelet writes a new token into the pod at
 * about 80% of the life, so the node image copies it again within the rest.
 */

/** The env variable, the default and the range (seconds). */
export const SPIRE_TOKEN_SECONDS = { env: 'K8S_SPIRE_TOKEN_SECONDS', defaultSeconds: 3600, min: 600, max: 86_400 } as const;

/** The whole number of seconds of `text` (blanks around it allowed), or why it is refused. */
export function parseSpireTokenSeconds(text: string): { ok: true; seconds: number } | { ok: false; problem: string } {
  const t = text.trim();
  const seconds = /^\d+$/.test(t) ? Number(t) : Number.NaN;
  const { min, max } = SPIRE_TOKEN_SECONDS;
  if (Number.isInteger(seconds) && seconds >= min && seconds <= max) return { ok: true, seconds };
  const why = Number.isNaN(seconds) ? 'is not a whole number of seconds' : seconds < min ? `is shorter than the API server accepts for a projected token (${min} s)` : `is longer than ${max} s (24 h), the longest life deploy gives a token a node can leak`;
  return { ok: false, problem: `"${text}" ${why}: give a whole number of seconds from ${min} to ${max}, e.g. ${SPIRE_TOKEN_SECONDS.defaultSeconds} (the default)` };
}
