/**
 * The pod of a node: what systemd needs as PID 1 in a pod, and how readiness is judged.
 * Pure data; shared with the rollout step, which reads the same labels and probe output.
 */
import type { NodeModel, TargetModel } from '../src/config/target-model.js';
import { names } from '../src/config/names.js';
import { tfEscape } from './shell.js';

export const LABEL_NAME = 'app.kubernetes.io/name';
export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';
export const LABEL_GROUP = 'deploy.fediversity/group';
export const CONTAINER_NAME = 'node';
export const FIELD_MANAGER = 'deploy';

/**
 * Readiness: ready only when systemd says `running` (FR-005). On failure the probe prints the
 * state and the failed units; the kubelet puts that output in the "Readiness probe failed"
 * event, which is how the rollout report names the failed unit.
 */
export const READINESS_SCRIPT =
  'state=$(systemctl is-system-running 2>/dev/null); echo "systemd: ${state:-unknown}"; ' +
  '[ "$state" = running ] && exit 0; systemctl --failed --no-legend --plain 2>/dev/null; exit 1';

/** Startup: the boot is over once systemd leaves `initializing`/`starting`, whatever the verdict. */
export const STARTUP_SCRIPT =
  'state=$(systemctl is-system-running 2>/dev/null); echo "systemd: ${state:-unknown}"; ' +
  'case "$state" in running|degraded|maintenance) exit 0;; esac; exit 1';

/**
 * Liveness: PID 1 answers on its bus, whatever its verdict. A degraded node is not restarted
 * in a loop (that would hide the failed unit); readiness and the rollout step deal with it.
 */
export const LIVENESS_SCRIPT = 'systemctl show --property=Version >/dev/null';

/**
 * Probe periods. Every exec probe is a runc exec plus a systemctl call in the pod: at 2 s
 * (readiness) and 10 s (liveness), 50 node pods were 30 execs a second and held a 2-core
 * machine at load 95-137 (issue 11's bench). The rollout does not wait on these periods: the
 * startup probe (every 1 s) ends the boot, and the kubelet runs the readiness probe at once
 * when startup succeeds (prober_manager UpdatePodStatus), so a node is Ready, or its
 * "Readiness probe failed: systemd: degraded" event is out, within about a second of its
 * boot ending. The periods only bound how soon a later fall from `running` is seen (10 s)
 * and how soon a hung PID 1 is killed (3 x 30 s).
 */
export const READINESS_PERIOD_SECONDS = 10;
export const LIVENESS_PERIOD_SECONDS = 30;

// the manifest is read by tofu as a template: the scripts' own `${...}` must reach the pod as is
const exec = (script: string) => ({ exec: { command: ['/bin/sh', '-c', tfEscape(script)] } });

/**
 * The Deployment of one node as a Kubernetes object. `image` and `machineId` are graph
 * references (tokens) resolved by tofu: the digest read after the push and the UUID in state.
 */
export function deploymentManifest(target: TargetModel, node: NodeModel, namespace: string, image: string, machineId: string) {
  const selector = { [LABEL_NAME]: node.name };
  const labels = { ...selector, [LABEL_MANAGED_BY]: 'deploy', [LABEL_GROUP]: target.group };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: names.deployment(node.name), namespace, labels },
    spec: {
      replicas: 1,
      // never two pods of one machine: they would share /var/lib and the machine ID (FR-004)
      strategy: { type: 'Recreate' },
      // the rollout step fails fast; this is the API server's own backstop
      progressDeadlineSeconds: target.rolloutTimeoutSeconds,
      revisionHistoryLimit: 10,
      selector: { matchLabels: selector },
      template: {
        metadata: { labels },
        spec: {
          runtimeClassName: target.runtimeClass,
          // own user namespace (FR-004); the typed Deployment of the provider lacks this
          // field (hashicorp/terraform-provider-kubernetes#2818), hence kubernetes_manifest
          hostUsers: false,
          serviceAccountName: names.serviceAccount(node.name),
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          // systemd stops on SIGRTMIN+3 (the image's StopSignal) and needs this long to stop
          // its units cleanly; the kubelet kills it when the time is up (DEPLOY_STOP_TIMEOUT)
          terminationGracePeriodSeconds: target.stopTimeoutSeconds,
          containers: [
            {
              name: CONTAINER_NAME,
              image,
              imagePullPolicy: 'IfNotPresent',
              env: [
                { name: 'container', value: 'docker' },
                // systemd takes the machine ID from container_uuid when /etc/machine-id is empty (FR-013)
                { name: 'container_uuid', value: machineId },
              ],
              volumeMounts: [
                { name: 'state', mountPath: '/var/lib' },
                { name: 'run', mountPath: '/run' },
                { name: 'run-lock', mountPath: '/run/lock' },
                { name: 'tmp', mountPath: '/tmp' },
              ],
              startupProbe: { ...exec(STARTUP_SCRIPT), periodSeconds: 1, timeoutSeconds: 5, failureThreshold: target.rolloutTimeoutSeconds },
              readinessProbe: { ...exec(READINESS_SCRIPT), periodSeconds: READINESS_PERIOD_SECONDS, timeoutSeconds: 5, failureThreshold: 1, successThreshold: 1 },
              livenessProbe: { ...exec(LIVENESS_SCRIPT), periodSeconds: LIVENESS_PERIOD_SECONDS, timeoutSeconds: 5, failureThreshold: 3 },
            },
          ],
          volumes: [
            { name: 'state', persistentVolumeClaim: { claimName: names.stateClaim(node.name) } },
            // systemd cannot mount tmpfs itself inside a user namespace
            { name: 'run', emptyDir: { medium: 'Memory' } },
            { name: 'run-lock', emptyDir: { medium: 'Memory' } },
            { name: 'tmp', emptyDir: { medium: 'Memory' } },
          ],
        },
      },
    },
  };
}
