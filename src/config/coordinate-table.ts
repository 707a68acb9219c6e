/**
 * The coordinates: flag, environment variable and meaning of each. Kept apart from the zod
 * schema so that `--help` can list them without loading zod.
 */
import { LIVENESS_PERIOD_FACTOR } from '../contract/probes.js';
import { DURATION_RULES } from './duration.js';
import { SPIRE_TOKEN_LIFE } from '../contract/spire/spire-token-life.js';

/** Command-line flags that set coordinates (camelCase as commander gives them). */
export interface CoordinateFlags {
  registry?: string;
  kubeconfig?: string;
  namespace?: string;
  storageClass?: string;
  stateSize?: string;
  runtimeClass?: string;
  rolloutTimeout?: string;
  stopTimeout?: string;
  probePeriod?: string;
  maxUnavailable?: string;
  soak?: string;
  onFailure?: string;
}

/**
 * What a failed rollout sets back (--on-failure): `node`, the failed node alone (its rollout
 * step does it); `group`, also every node the run changed (workflow/target/group-rollback.ts).
 */
export const ON_FAILURE = ['node', 'group'] as const;
export type OnFailure = (typeof ON_FAILURE)[number];

/** Each coordinate: its flag, its environment variable, and what it is. Shown in --help. */
export const COORDINATES = [
  { key: 'registry', flag: '--registry <host[:port][/path]>', env: 'K8S_REGISTRY', help: 'registry the nodes are pushed to and pulled from (required)' },
  { key: 'kubeconfig', flag: '--kubeconfig <file>', env: 'KUBE_CONFIG_PATH', help: 'kubeconfig of the cluster (read by the tools, never copied into the graph)' },
  { key: 'namespace', flag: '--namespace <name>', env: 'K8S_NAMESPACE', help: 'namespace of the "all" target; per-app targets use <namespace>-<app> (default: fediversity)' },
  { key: 'storageClass', flag: '--storage-class <name>', env: 'K8S_STORAGE_CLASS', help: "StorageClass of each node's /var/lib claim (default: the cluster's default class)" },
  { key: 'stateSize', flag: '--state-size <quantity>', env: 'K8S_STATE_SIZE', help: "size of each node's /var/lib claim (default: 1Gi)" },
  { key: 'runtimeClass', flag: '--runtime-class <name>', env: 'K8S_RUNTIME_CLASS', help: 'RuntimeClass whose handler runs systemd as PID 1 (default: systemd)' },
  { key: 'rolloutTimeout', flag: '--rollout-timeout <duration>', env: 'DEPLOY_ROLLOUT_TIMEOUT', help: `how long a node may take to become ready, e.g. 90s, 5m (default: ${DURATION_RULES.rolloutTimeout.defaultText})` },
  { key: 'stopTimeout', flag: '--stop-timeout <duration>', env: 'DEPLOY_STOP_TIMEOUT', help: `how long a node's systemd may take to stop on SIGRTMIN+3 before it is killed (the pod's terminationGracePeriodSeconds), 1s up to less than the rollout timeout (default: ${DURATION_RULES.stopTimeout.defaultText})` },
  { key: 'probePeriod', flag: '--probe-period <duration>', env: 'DEPLOY_PROBE_PERIOD', help: `how often the kubelet runs the readiness probe (systemctl is-system-running) in a booted node, the liveness probe every ${LIVENESS_PERIOD_FACTOR}x that; every probe is a process started in the pod, so a big group on a small cluster wants it longer; the rollout does not wait on it (default: ${DURATION_RULES.probePeriod.defaultText})` },
  { key: 'maxUnavailable', flag: '--max-unavailable <n|p%>', env: 'DEPLOY_MAX_UNAVAILABLE', help: "how many changed nodes of a target may be down at once: the nodes go in waves of that many, in the order of their `after`, then by name; a wave starts once the one before is Ready, and none after a failed one (default: the group plan's maxUnavailable, else no limit)" },
  { key: 'soak', flag: '--soak <duration>', env: 'DEPLOY_SOAK', help: "how long each changed node must stay running once Ready (readiness not falling, no container restart, the same pod) before its rollout counts and the next wave starts, e.g. 40s, 5m; a fall is a failed rollout, set back like any; up to 1h, 0 for none (default: the group plan's soak, else 0)" },
  { key: 'onFailure', flag: '--on-failure <node|group>', env: 'DEPLOY_ON_FAILURE', help: "what a failed rollout sets back: node (the failed node alone) or group (also every node this run changed, in reverse wave order, each waited for until Ready) (default: the group plan's onFailure, else node)" },
] as const;

/** Environment variables of the SPIRE coordinates, with their meaning (for --help and docs). */
export const SPIRE_COORDINATES = [
  { key: 'node', env: 'K8S_SPIRE_NODE', help: 'FQDN (or address) of the spire node of the central group; setting it turns SPIRE on' },
  { key: 'sshUser', env: 'SSH_USER', help: 'ssh user on the spire node (required with K8S_SPIRE_NODE)' },
  { key: 'sshPrivateKeyFile', env: 'SSH_PRIVATE_KEY_FILE', help: 'ssh private key file for the spire node (required with K8S_SPIRE_NODE; never in the graph)' },
  { key: 'sshNodes', env: 'SSH_NODES', help: 'JSON {"<fqdn>": {"hostKey": "<type> <base64>", "sshOpts": ["-o", "Port=22"]}}: host key and ssh options of the spire node' },
  { key: 'apiServer', env: 'K8S_SPIRE_API_SERVER', help: "https URL of the API server as the spire node reaches it (default: the kubeconfig's server)" },
  {
    key: 'tokenSeconds',
    env: SPIRE_TOKEN_LIFE.env,
    help: `life of each pod's projected token, in seconds, ${SPIRE_TOKEN_LIFE.min} to ${SPIRE_TOKEN_LIFE.max}; kubelet renews it at about 80% of that; part of the pod template, so a change rolls out every node (default: ${SPIRE_TOKEN_LIFE.defaultSeconds})`,
  },
] as const;
