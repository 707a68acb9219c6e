/**
 * One read of what a target is in the cluster and on the backend, for the verified no-op check
 * (noop/verdict.ts), the hand edits (hand-edits.ts) and the ownership step (undo-hand-edits.ts):
 * one LIST per kind the graph makes in the namespace (with each object's managedFields), the
 * namespace and the RuntimeClass, and the state; and beside them, for the claims at risk
 * (claim-risk.ts), the cluster's PersistentVolumes (one LIST more in the same wave, kept out of
 * the objects: another target's volume is no object of this one). Through the fast client
 * (src/kube/kube-read.ts) unless the kubeconfig needs an auth-provider or a socks5 proxy; then
 * the full client reads the Deployments and the claims alone (enough for the hand edits and the
 * claims' own fields; the check then runs the full plan, saying why).
 */
import type { TargetModel } from '../../config/target-model.js';
import type { RunKubeconfig } from '../../kube/kubeconfig.js';
import type { KubeLister } from '../../kube/kube-read.js';
import type { TargetBackend } from '../../state/embedded.js';
import type { TagDigest } from '../../tools/registry-digest.js';
import type { ManagedObject } from './hand-edits.js';
import { readState, type StateView } from './cached-target-state.js';
import type { EditPatchOp, ListedObject } from './undo-hand-edits.js';

export type { StateView } from './cached-target-state.js';

export interface TargetObjects {
  /** The API server's URL, as the kubeconfig names it. */
  readonly server: string;
  readonly objects: readonly ListedObject[];
  readonly state: StateView | undefined;
  /** Every kind was listed (the fast client); false: the Deployments (and the claims) alone (the full client). */
  readonly complete: boolean;
  /** The claims of the namespace as listed; undefined when they were not read. */
  readonly claims?: readonly unknown[];
  /**
   * The cluster's PersistentVolumes as listed (what becomes of a claim's data), or why they
   * could not be read (a least-privilege identity without `list persistentvolumes`, the full client).
   */
  readonly volumes?: readonly unknown[] | string;
  /** Why only the Deployments were read, for the check's line. */
  readonly partialReason?: string;
  /** tag reference -> what the registry says of it, for every node (read when asked: the check's tags) */
  readonly tags?: ReadonlyMap<string, TagDigest>;
  /** Writes to the Deployments of the namespace (the ownership step). */
  readonly deployments: {
    patch(name: string, ops: readonly EditPatchOp[], fieldManager: string): Promise<unknown>;
    read(name: string): Promise<ManagedObject | undefined>;
  };
}

export interface TargetObjectsContext {
  readonly model: TargetModel;
  /** The run's kubeconfig, resolved once. */
  readonly kube: RunKubeconfig;
  readonly env: NodeJS.ProcessEnv;
  readonly backend: TargetBackend;
  readonly signal: AbortSignal;
}

/**
 * Reads the target's objects and its state, and with `tags` every node's tag from the registry
 * (the check's last read, started with the others: 200 tags took 0.4-0.5 s on this host, as long
 * as the rest of a 200-node group's check); throws when the cluster or the backend cannot be
 * read (a tag that cannot be read is an answer of its own: registry-digest.ts).
 */
export async function readTargetObjects(ctx: TargetObjectsContext, opts: { readonly tags?: boolean } = {}): Promise<TargetObjects> {
  const { fullClientReason, openKubeLister } = await import('../../kube/kube-read.js');
  const tagRead = opts.tags === true ? readNodeTags(ctx) : Promise.resolve(undefined);
  const { requireKubeAccess } = await import('../../kube/kubeconfig.js');
  const access = requireKubeAccess(ctx.kube);
  const lister = await openKubeLister(access, { requestMs: 15_000, attempts: 2 });
  const ns = ctx.model.namespace;
  const path = (name: string) => `/apis/apps/v1/namespaces/${encodeURIComponent(ns)}/deployments/${encodeURIComponent(name)}`;
  if (lister !== undefined) {
    const [objects, volumes, state, tags] = await Promise.all([listObjects(lister, ctx.model), listVolumes(lister), readState(ctx), tagRead]);
    return {
      server: lister.server,
      objects,
      state,
      complete: true,
      claims: objects.filter((o) => o.kind === 'PersistentVolumeClaim').map((o) => o.object),
      volumes,
      ...(tags !== undefined ? { tags } : {}),
      deployments: {
        patch: (name, ops, fieldManager) => lister.jsonPatch(`patch Deployment ${ns}/${name}`, path(name), ops, fieldManager),
        read: async (name) => (await lister.get(`read Deployment ${ns}/${name}`, path(name))) as ManagedObject | undefined,
      },
    };
  }
  // an auth-provider or a socks5 proxy: the full client (kube-api.ts) reads the Deployments
  const why = fullClientReason(access.kubeconfig, access.env);
  const { createKubeApi, loadKubeConfig } = await import('../../kube/kube-api.js');
  const api = createKubeApi(loadKubeConfig(access.kubeconfig));
  const [list, claims, state, tags] = await Promise.all([api.listDeployments(ns, ''), api.listClaims(ns), readState(ctx), tagRead]);
  return {
    server: api.server,
    objects: list.items.map((object) => ({ kind: 'Deployment', object: object as ManagedObject })),
    state,
    complete: false,
    claims: claims.items,
    volumes: 'the full Kubernetes client reads no PersistentVolumes',
    ...(tags !== undefined ? { tags } : {}),
    partialReason: `the kubeconfig needs the full Kubernetes client: ${why ?? 'an auth-provider or a socks5 proxy'}`,
    deployments: {
      patch: (name, ops, fieldManager) => api.patchDeployment(ns, name, ops, fieldManager, ctx.signal),
      read: async (name) => (await api.readDeployment(ns, name, ctx.signal)) as ManagedObject | undefined,
    },
  };
}

/** Every node's tag, in-process (never throws: each tag's answer says what went wrong with it). */
async function readNodeTags(ctx: TargetObjectsContext): Promise<ReadonlyMap<string, TagDigest>> {
  const { readTagDigests } = await import('../../tools/registry-digest.js');
  return readTagDigests(
    ctx.model.nodes.map((n) => n.tagRef),
    { tlsVerify: ctx.model.registryTlsVerify, caFile: ctx.model.registryCaFile, env: ctx.env },
  );
}

/**
 * Every PersistentVolume (cluster-wide: a volume's name is its provisioner's, so no name or
 * selector finds a claim's volume before it is read), or why they could not be listed.
 */
async function listVolumes(lister: KubeLister): Promise<readonly unknown[] | string> {
  const { describeApiError } = await import('../../kube/api-error.js');
  return lister.list('list PersistentVolumes', '/api/v1/persistentvolumes').then(
    (r) => r.items,
    (err: unknown) => `list PersistentVolumes: ${describeApiError(err)}`,
  );
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
