/**
 * The pod of a node: what systemd needs as PID 1 in a pod, and how readiness is judged.
 * Pure data; the labels, the container name and the probes are the contract with the rollout
 * step (src/contract/).
 */
import type { NodeModel, TargetModel } from '../src/config/target-model.js';
import { names } from '../src/config/names.js';
import { CONTAINER_NAME } from '../src/contract/node-container.js';
import { LABEL_GROUP, LABEL_MANAGED_BY, LABEL_NAME, MANAGED_BY } from '../src/contract/pod-labels.js';
import { CONTAINER_SECURITY_CONTEXT, POD_SECURITY_CONTEXT } from '../src/contract/pod-security.js';
import {
  LIVENESS_PERIOD_FACTOR,
  LIVENESS_SCRIPT,
  PROBE_TIMEOUT_SECONDS,
  MAX_ROLLOUT_TIMEOUT_SECONDS,
  READINESS_SCRIPT,
  STARTUP_FAILURE_THRESHOLD,
  STARTUP_PERIOD_SECONDS,
  STARTUP_SCRIPT,
} from '../src/contract/probes.js';
import { tfEscape } from '../src/contract/shell.js';

// the manifest is read by tofu as a template: the scripts' own `${...}` must reach the pod as is
const exec = (script: string) => ({ exec: { command: ['/bin/sh', '-c', tfEscape(script)] } });

/**
 * The Deployment of one node as a Kubernetes object. `image` and `machineId` are graph
 * references (tokens) resolved by tofu: the digest read after the push and the UUID in state.
 */
export function deploymentManifest(target: TargetModel, node: NodeModel, namespace: string, image: string, machineId: string) {
  const selector = { [LABEL_NAME]: node.name };
  const labels = { ...selector, [LABEL_MANAGED_BY]: MANAGED_BY, [LABEL_GROUP]: target.group };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: names.deployment(node.name), namespace, labels },
    spec: {
      replicas: 1,
      // never two pods of one machine: they would share /var/lib and the machine ID (FR-004)
      strategy: { type: 'Recreate' },
      // the rollout step judges the run's timeout and sets the Deployment back; this is the API
      // server's own backstop, at the longest timeout deploy accepts: the timeout is a per-run
      // value, and a value here would change every Deployment when it changes (contract/probes.ts)
      progressDeadlineSeconds: MAX_ROLLOUT_TIMEOUT_SECONDS,
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
          // Pod Security Admission baseline, and restricted but for the capabilities (src/contract/pod-security.ts)
          securityContext: POD_SECURITY_CONTEXT,
          // systemd stops on SIGRTMIN+3 (the image's StopSignal) and needs this long to stop
          // its units cleanly; the kubelet kills it when the time is up (DEPLOY_STOP_TIMEOUT)
          terminationGracePeriodSeconds: target.stopTimeout.seconds,
          containers: [
            {
              name: CONTAINER_NAME,
              image,
              imagePullPolicy: 'IfNotPresent',
              securityContext: CONTAINER_SECURITY_CONTEXT,
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
              startupProbe: { ...exec(STARTUP_SCRIPT), periodSeconds: STARTUP_PERIOD_SECONDS, timeoutSeconds: PROBE_TIMEOUT_SECONDS, failureThreshold: STARTUP_FAILURE_THRESHOLD },
              readinessProbe: { ...exec(READINESS_SCRIPT), periodSeconds: target.probePeriod.seconds, timeoutSeconds: PROBE_TIMEOUT_SECONDS, failureThreshold: 1, successThreshold: 1 },
              livenessProbe: { ...exec(LIVENESS_SCRIPT), periodSeconds: LIVENESS_PERIOD_FACTOR * target.probePeriod.seconds, timeoutSeconds: PROBE_TIMEOUT_SECONDS, failureThreshold: 3 },
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
