/**
 * What the pod of a node gets when the SPIRE coordinates are set (FR-015): the projected token
 * of its service account `node-<node>` for the audience spire-server, readable by root only,
 * and the server's trust bundle from the ConfigMap `spire-agent`. In the API form of
 * stacks/pod-template.ts (the Deployment is a kubernetes_manifest). Pure.
 *
 * The agent does not read the projected token itself: a root service of the node image copies
 * it for the agent within the token's life (FR-015); kubelet refreshes the projected file at
 * 80% of its life (https://kubernetes.io/docs/concepts/storage/projected-volumes/#serviceaccounttoken).
 * The life is the coordinate K8S_SPIRE_TOKEN_SECONDS (src/contract/spire/spire-token-life.ts): a
 * short one lets a test see a renewal (test/e2e/deploy-spire.test.ts).
 */
import { SPIRE_AGENT_CONFIG_MAP, SPIRE_AUDIENCE } from '../src/contract/spire/spire-names.js';

/** Where the node finds the projected token (`token`) and the bundle (`bundle.crt`). */
export const SPIRE_TOKEN_DIR = '/etc/spire-agent/k8s-token';
export const SPIRE_BUNDLE_DIR = '/etc/spire-agent/bundle';
const TOKEN_VOLUME = 'spire-token';
const BUNDLE_VOLUME = 'spire-bundle';

/** What the pod's SPIRE volumes depend on. */
export interface SpireVolumeProps {
  /** `expirationSeconds` of the projected token (validated at the boundary: 600..86400). */
  readonly tokenSeconds: number;
}

export function spireVolumes(props: SpireVolumeProps) {
  return [
    {
      name: TOKEN_VOLUME,
      projected: {
        // root only (0400); with hostUsers: false kubelet gives the files to the pod's root
        defaultMode: 0o400,
        sources: [{ serviceAccountToken: { audience: SPIRE_AUDIENCE, expirationSeconds: props.tokenSeconds, path: 'token' } }],
      },
    },
    { name: BUNDLE_VOLUME, configMap: { name: SPIRE_AGENT_CONFIG_MAP, defaultMode: 0o444 } },
  ];
}

export function spireVolumeMounts() {
  return [
    { name: TOKEN_VOLUME, mountPath: SPIRE_TOKEN_DIR, readOnly: true },
    // not subPath: kubelet updates a ConfigMap volume in place, so a rotated CA reaches the pod
    { name: BUNDLE_VOLUME, mountPath: SPIRE_BUNDLE_DIR, readOnly: true },
  ];
}

interface PodSpecLike {
  readonly volumes: readonly unknown[];
  readonly containers: readonly { readonly volumeMounts: readonly unknown[] }[];
}

/**
 * A copy of a Deployment manifest whose pod has the SPIRE volumes (every container mounts
 * them). The input is left as it is.
 */
export function withSpireVolumes<M extends { spec: { template: { spec: PodSpecLike } } }>(manifest: M, props: SpireVolumeProps): M {
  const pod = manifest.spec.template.spec;
  return {
    ...manifest,
    spec: {
      ...manifest.spec,
      template: {
        ...manifest.spec.template,
        spec: {
          ...pod,
          volumes: [...pod.volumes, ...spireVolumes(props)],
          containers: pod.containers.map((c) => ({ ...c, volumeMounts: [...c.volumeMounts, ...spireVolumeMounts()] })),
        },
      },
    },
  };
}
