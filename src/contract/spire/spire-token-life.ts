/**
 * The life of the projected token a node's SPIRE agent attests with (FR-015): the coordinate
 * K8S_SPIRE_TOKEN_SECONDS (checked in src/config/spire-coordinates.ts), given to the pod as
 * `expirationSeconds` (stacks/spire-pod.ts). kubelet writes a new token into the pod at about
 * 80% of the life, so the node image copies it again within the rest.
 *
 * The bounds: the API server refuses a projected token that lives less than 10 minutes (the
 * Volume reference, `projected.sources.serviceAccountToken.expirationSeconds`: "must be at
 * least 10 minutes", https://kubernetes.io/docs/reference/kubernetes-api/config-and-storage-resources/volume/);
 * 24 h is ours: a copy of the token that leaks from a node is good for at most its life.
 */
export const SPIRE_TOKEN_LIFE = { env: 'K8S_SPIRE_TOKEN_SECONDS', defaultSeconds: 3600, min: 600, max: 86_400 } as const;
