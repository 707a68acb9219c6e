/**
 * One read of what a target is in the cluster and on the backend, for the verified no-op check
 * (noop/verdict.ts), the hand edits (hand-edits.ts) and the ownership step (undo-hand-edits.ts):
 * one LIST per kind the graph makes in the namespace (with each object's managedFields), the
 * namespace and the RuntimeClass, and the state. Through the fast client (src/kube/kube-read.ts)
 * unless the kubeconfig needs an auth-provider or a socks5 proxy; then the full client reads the Deployments alone (enough
 * for the hand edits; the check then runs the full plan, saying why).
 */
import type { TargetModel } from '../config/target-model.js';
import { describeIssues } from '../contract/parse-json.js';
import { TOFU_STATE_VERSION, tofuStateSchema, type TofuResource } from '../contract/tofu-state.js';
import type { KubeLister } from '../kube/kube-read.js';
import type { ManagedObject } from './hand-edits.js';
import type { EditPatchOp, ListedObject } from './undo-hand-edits.js';

export interface StateView {
  readonly lineage: string;
  readonly serial: number;
  readonly outputs: Record<string, { value: unknown }>;
  readonly resources: readonly TofuResource[];
  /**
   * Why the verified no-op check must not trust this state (not format version 4, encrypted
   * with OpenTofu's state encryption, no lineage or serial): it then runs the full plan. The
   * hand edits read what they can (its resources).
   */
  readonly untrusted?: string;
}

export interface TargetObjects {
  /** The API server's URL, as the kubeconfig names it. */
  readonly server: string;
  readonly objects: readonly ListedObject[];
  readonly state: StateView | undefined;
  /** Every kind was listed (the fast client); false: the Deployments alone (the full client). */
  readonly complete: boolean;
  /** Why only the Deployments were read, for the check's line. */
  readonly partialReason?: string;
  /** Writes to the Deployments of the namespace (the ownership step). */
  readonly deployments: {
    patch(name: string, ops: readonly EditPatchOp[], fieldManager: string): Promise<unknown>;
    read(name: string): Promise<ManagedObject | undefined>;
  };
}

export interface TargetObjectsContext {
  readonly model: TargetModel;
  readonly kubeconfig: string;
  readonly env: NodeJS.ProcessEnv;
  readonly backend: { readonly address: string; readonly env: Readonly<Record<string, string>> };
  readonly signal: AbortSignal;
}

/** Reads the target's objects and its state; throws when the cluster or the backend cannot be read. */
export async function readTargetObjects(ctx: TargetObjectsContext): Promise<TargetObjects> {
  const { fullClientReason, openKubeLister } = await import('../kube/kube-read.js');
  const env = { ...ctx.env, KUBE_CONFIG_PATH: ctx.kubeconfig };
  const lister = await openKubeLister(env, { requestMs: 15_000, attempts: 2 });
  const ns = ctx.model.namespace;
  const path = (name: string) => `/apis/apps/v1/namespaces/${encodeURIComponent(ns)}/deployments/${encodeURIComponent(name)}`;
  if (lister !== undefined) {
    const [objects, state] = await Promise.all([listObjects(lister, ctx.model), readState(ctx)]);
    return {
      server: lister.server,
      objects,
      state,
      complete: true,
      deployments: {
        patch: (name, ops, fieldManager) => lister.jsonPatch(`patch Deployment ${ns}/${name}`, path(name), ops, fieldManager),
        read: async (name) => (await lister.get(`read Deployment ${ns}/${name}`, path(name))) as ManagedObject | undefined,
      },
    };
  }
  // an auth-provider or a socks5 proxy: the full client (kube-api.ts) reads the Deployments
  const { resolveKubeconfig } = await import('../kube/kubeconfig.js');
  const why = fullClientReason(resolveKubeconfig(env), env);
  const { createKubeApi, loadKubeConfig } = await import('../kube/kube-api.js');
  const api = createKubeApi(loadKubeConfig(env));
  const [list, state] = await Promise.all([api.listDeployments(ns, ''), readState(ctx)]);
  return {
    server: api.server,
    objects: list.items.map((object) => ({ kind: 'Deployment', object: object as ManagedObject })),
    state,
    complete: false,
    partialReason: `the kubeconfig needs the full Kubernetes client: ${why ?? 'an auth-provider or a socks5 proxy'}`,
    deployments: {
      patch: (name, ops, fieldManager) => api.patchDeployment(ns, name, ops, fieldManager, ctx.signal),
      read: async (name) => (await api.readDeployment(ns, name, ctx.signal)) as ManagedObject | undefined,
    },
  };
}

/** The kinds the graph makes in the namespace, and the cluster-wide objects it reads. */
async function listObjects(lister: KubeLister, model: TargetModel): Promise<ListedObject[]> {
  const ns = encodeURIComponent(model.namespace);
  const lists: [string, string, Record<string, string>?][] = [
    ['Namespace', '/api/v1/namespaces', { fieldSelector: `metadata.name=${model.namespace}` }],
    ['RuntimeClass', '/apis/node.k8s.io/v1/runtimeclasses', { fieldSelector: `metadata.name=${model.runtimeClass}` }],
    ['Deployment', `/apis/apps/v1/namespaces/${ns}/deployments`],
    ['PersistentVolumeClaim', `/api/v1/namespaces/${ns}/persistentvolumeclaims`],
    ['ServiceAccount', `/api/v1/namespaces/${ns}/serviceaccounts`],
    ['NetworkPolicy', `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies`],
  ];
  const results = await Promise.all(lists.map(([kind, p, query]) => lister.list(`list ${kind}`, p, query).then((r) => r.items.map((object) => ({ kind, object: object as ManagedObject })))));
  return results.flat();
}

/** The target's state from its backend (undefined: none yet). */
export async function readState(ctx: Pick<TargetObjectsContext, 'backend' | 'signal'>): Promise<StateView | undefined> {
  const { backendRequest, httpFailure } = await import('../state/http-client.js');
  const url = new URL(ctx.backend.address);
  const res = await backendRequest('GET', url, { username: ctx.backend.env.TF_HTTP_USERNAME, password: ctx.backend.env.TF_HTTP_PASSWORD, signal: ctx.signal });
  if (res.status === 204 || res.status === 404) return undefined;
  if (res.status !== 200) throw await httpFailure('GET', url, res);
  const text = await res.text();
  if (text.trim() === '') return undefined;
  return stateView(text);
}

/** A state document as the check reads it (the model of src/contract/tofu-state.ts), and why it must not trust it, if so. */
export function stateView(text: string): StateView {
  const distrust = (untrusted: string): StateView => ({ lineage: '', serial: -1, outputs: {}, resources: [], untrusted });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return distrust('the state is not JSON');
  }
  if (json !== null && typeof json === 'object' && 'encrypted_data' in json) return distrust("the state is encrypted (OpenTofu's state encryption): only tofu can read it");
  const parsed = tofuStateSchema.safeParse(json);
  if (!parsed.success) return distrust(`the state is not an OpenTofu state document (${describeIssues(parsed.error)})`);
  const doc = parsed.data;
  const lineage = doc.lineage ?? '';
  const serial = doc.serial ?? -1;
  const untrusted =
    doc.version !== TOFU_STATE_VERSION
      ? `the state has format version ${doc.version}, not ${TOFU_STATE_VERSION}`
      : lineage === '' || serial < 0
        ? 'the state has no lineage or serial'
        : doc.resources === undefined
          ? 'the state has no resources list'
          : undefined;
  return { lineage, serial, outputs: doc.outputs ?? {}, resources: doc.resources ?? [], ...(untrusted !== undefined ? { untrusted } : {}) };
}
