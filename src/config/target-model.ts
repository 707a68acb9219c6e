import type { Duration } from './duration.js';
import type { SpireGraphCoordinates } from './spire-coordinates.js';

/** The normalised input of one graph: everything the stack needs, nothing it must look up. */
export interface NodeModel {
  readonly name: string;
  /** Absolute path of the docker archive on the deployer. */
  readonly archive: string;
  readonly tag: string;
  /** `<registry>/<ns>/<node>` */
  readonly repository: string;
  /** `<registry>/<ns>/<node>:<tag>`: the push trigger. */
  readonly tagRef: string;
  /** `image.build`: the command that writes the archive, run in `dir` (the plan file's). */
  readonly build?: ImageBuild;
  /**
   * `after` in the plan: the nodes of this target whose rollout this node's Deployment waits
   * for (config/order-rules.ts). Only when set, so that a graph without an order is as it was.
   */
  readonly after?: readonly string[];
}

export interface ImageBuild {
  readonly argv: readonly string[];
  /** The working directory: the plan file's directory, which relative archives are read from. */
  readonly dir: string;
}

/** Something the method cannot honour for a node: reported by `plan`, never dropped silently. */
export interface DegradeNote {
  readonly node: string;
  readonly kind: 'persistent-path-outside-var-lib' | 'host-firewall-sources';
  readonly message: string;
}

export interface TargetModel {
  readonly group: string;
  /** `all` or an app name. */
  readonly target: string;
  readonly namespace: string;
  readonly stateKey: string;
  readonly registry: string;
  readonly registryTlsVerify: boolean;
  /**
   * K8S_REGISTRY_CA_FILE (absolute), only when set: the graph's skopeo steps then take the
   * copy the run stages (DEPLOY_REGISTRY_CERT_DIR); the path itself never enters the graph.
   */
  readonly registryCaFile?: string;
  readonly runtimeClass: string;
  readonly storageClass: string | undefined;
  readonly stateSize: string;
  /** How long a node may take to become ready: the rollout step's deadline and the Deployment's progress deadline. */
  readonly rolloutTimeout: Duration;
  /** The pod's terminationGracePeriodSeconds: how long systemd may take to stop. */
  readonly stopTimeout: Duration;
  /** The readiness probe's period (liveness: LIVENESS_PERIOD_FACTOR x); the startup probe keeps 1 s. */
  readonly probePeriod: Duration;
  readonly submissionId: string | undefined;
  /** Sorted by name; a node's `after` names only nodes of this list. */
  readonly nodes: readonly NodeModel[];
  /**
   * --max-unavailable as a number of this target's nodes, when it cuts them into several waves
   * (config/order-rules.ts `waves`); absent: one wave, and the graph is as it was without it.
   */
  readonly waveSize?: number;
  /**
   * --soak, when above 0: how long each changed node must stay `running` once Ready before its
   * rollout step exits 0 (rollout/soak.ts). A value of the run: it reaches the step through
   * tofu's environment (DEPLOY_SOAK), never the graph. Absent: no soak.
   */
  readonly soak?: Duration;
  /**
   * --on-failure group: a failed rollout also sets back every node this run changed
   * (workflow/target/group-rollback.ts). Absent: `node`, the failed node alone.
   */
  readonly onFailure?: 'group';
  readonly degrade: readonly DegradeNote[];
  /**
   * The SPIRE coordinates when set (K8S_SPIRE_NODE), without the key's path: the run stages
   * the key and hands tofu its path in the environment (FR-017). Absent: no SPIRE at all.
   */
  readonly spire?: SpireGraphCoordinates;
  /**
   * `namespaceManagedBy: "admin"` in the plan: the namespace is the cluster admin's, so the
   * graph reads it instead of making it, and destroy leaves it. Absent: deploy's, as before.
   */
  readonly namespaceManagedBy?: 'admin';
}
