/**
 * The rollout step's client (`deploy rollout`, one process per changed node): the fast client of
 * kube-read.ts for everything a rollout does on its way to ready (its list-watches, the
 * Deployment read, the last-rollout annotation, the rollback's patch, a pod's log), and
 * @kubernetes/client-node only for a command run in a pod (a websocket), loaded then: near a
 * deadline (the boot queue) or for the evidence of a failure. Loading the full client costs a
 * process 0.4 CPU-s on an idle 2-core host and 1.2-2 s under load (kube-read.ts), and an apply
 * of 10 nodes starts 10 such processes while their pods boot on the same cores. A kubeconfig
 * the fast client does not cover (an auth-provider, a socks5 proxy: fullClientReason) gets the
 * full client for all of it, as before.
 */
import type { KubeApi, KubeApiOptions } from './kube-api.js';
import type { KubeAccess } from './kubeconfig.js';
import { nonEmpty, openKubeLister } from './kube-read.js';

/** As kube-api.ts: one request may take this long; reads are tried 4 times. */
const REQUEST_MS = 15_000;
const READ_ATTEMPTS = 4;

export async function openRolloutApi(access: KubeAccess, opts: KubeApiOptions = {}): Promise<KubeApi> {
  const full = async () => {
    const k = await import('./kube-api.js');
    return k.createKubeApi(k.loadKubeConfig(access.kubeconfig), opts);
  };
  const lister = await openKubeLister(access, { requestMs: opts.requestMs ?? REQUEST_MS, attempts: opts.readAttempts ?? READ_ATTEMPTS });
  if (lister === undefined) return full();
  let forExec: Promise<KubeApi> | undefined;
  const ns = (namespace: string) => encodeURIComponent(namespace);
  const deployment = (namespace: string, name: string) => `/apis/apps/v1/namespaces/${ns(namespace)}/deployments/${encodeURIComponent(name)}`;
  return {
    watch: lister.watch,
    server: lister.server,
    readDeployment: (namespace, name, signal) => lister.get(`read Deployment ${namespace}/${name}`, deployment(namespace, name), signal),
    listDeployments: (namespace, fieldSelector) => lister.listDeployments(namespace, fieldSelector),
    listReplicaSets: (namespace, labelSelector) => lister.list('list ReplicaSets', `/apis/apps/v1/namespaces/${ns(namespace)}/replicasets`, nonEmpty('labelSelector', labelSelector)),
    listPods: (namespace, labelSelector) => lister.listPods(namespace, labelSelector),
    listEvents: (namespace) => lister.list('list Events', `/api/v1/namespaces/${ns(namespace)}/events`),
    listClaims: (namespace) => lister.list('list PersistentVolumeClaims', `/api/v1/namespaces/${ns(namespace)}/persistentvolumeclaims`),
    patchDeployment: (namespace, name, ops, fieldManager, signal) => lister.jsonPatch(`patch Deployment ${namespace}/${name}`, deployment(namespace, name), ops, fieldManager, signal),
    annotateDeployment: (namespace, name, annotations, fieldManager, signal) =>
      lister.mergePatch(`annotate Deployment ${namespace}/${name}`, deployment(namespace, name), { metadata: { annotations } }, fieldManager, signal),
    async readLogTail(namespace, pod, o, signal) {
      const query = { container: o.container, tailLines: String(o.lines), ...(o.previous ? { previous: 'true' } : {}) };
      const text = await lister.text(`read the log of pod ${namespace}/${pod}`, `/api/v1/namespaces/${ns(namespace)}/pods/${encodeURIComponent(pod)}/log`, query, signal);
      return text.split('\n').filter((l) => l.length > 0).slice(-o.lines);
    },
    async execLines(namespace, pod, container, command, timeoutMs, signal) {
      forExec ??= full();
      return (await forExec).execLines(namespace, pod, container, command, timeoutMs, signal);
    },
  };
}
