/**
 * The graph of one (group, target): docs/architecture.md "Data flow and the graph of one target".
 * Order: RuntimeClass read -> pushes -> digests -> Deployments; namespace -> NetworkPolicy
 * -> claims, service accounts -> Deployments -> rollout steps. No order between the pushes and
 * the namespace: deploy pushes before tofu's apply (src/workflow/target/push-first.ts). With the SPIRE coordinates:
 * namespace -> SPIRE identity (RBAC, ConfigMap spire-agent, hand-off) -> Deployments, whose
 * pods get the SPIRE volumes. Pure: the same model gives the same JSON.
 */
import { Construct } from 'constructs';
import { TerraformOutput, TerraformStack } from 'cdktf';
import { KubernetesProvider } from '@cdktf/provider-kubernetes/lib/provider/index.js';
import { NullProvider } from '@cdktf/provider-null/lib/provider/index.js';
import { RandomProvider } from '@cdktf/provider-random/lib/provider/index.js';
import { ExternalProvider } from '@cdktf/provider-external/lib/provider/index.js';
import { DataKubernetesResources } from '@cdktf/provider-kubernetes/lib/data-kubernetes-resources/index.js';
import { NamespaceV1 } from '@cdktf/provider-kubernetes/lib/namespace-v1/index.js';
import { NetworkPolicyV1 } from '@cdktf/provider-kubernetes/lib/network-policy-v1/index.js';
import type { TargetModel } from '../src/config/target-model.js';
import { names } from '../src/config/names.js';
import { LABEL_GROUP, LABEL_MANAGED_BY, MANAGED_BY } from '../src/contract/pod-labels.js';
import { POD_SECURITY_LABELS } from '../src/contract/pod-security.js';
import { nodeConstructId, SPIRE_CONSTRUCT, type TargetPart } from '../src/contract/graph/graph-ids.js';
import { NODE_NAMES_OUTPUT, SUBMISSION_OUTPUT, TARGET_NAMESPACE_OUTPUT } from '../src/contract/graph/graph-outputs.js';
import { waitsFor } from '../src/config/order-rules.js';
import { NodeImage, NodeWorkload, type NodeWorkloadProps } from './node.js';
import { SpireIdentity } from './spire-identity.js';

export class TargetStack extends TerraformStack {
  constructor(scope: Construct, id: string, model: TargetModel) {
    super(scope, id);
    // Providers take their settings from the run's environment (KUBE_CONFIG_PATH for the
    // kubeconfig), so no path and no credential is ever written into the graph.
    new KubernetesProvider(this, 'kubernetes', {});
    new NullProvider(this, 'null', {});
    new RandomProvider(this, 'random', {});
    new ExternalProvider(this, 'external', {});
    // The http backend reads its address and credentials from TF_HTTP_* at run time.
    this.addOverride('terraform.backend', { http: {} });

    // A list filtered by name, not a get: the provider's single-object read answers a
    // missing object with "Provider produced null object" instead of an error of ours.
    const runtimeClass = new DataKubernetesResources(this, 'runtime-class' satisfies TargetPart, {
      apiVersion: 'node.k8s.io/v1',
      kind: 'RuntimeClass',
      fieldSelector: `metadata.name=${model.runtimeClass}`,
      lifecycle: {
        postcondition: [
          {
            condition: '${length(self.objects) == 1}',
            errorMessage: `The cluster has no RuntimeClass "${model.runtimeClass}", whose handler runs systemd as PID 1 with a writable cgroup file system. Nothing was pushed. Ask the cluster's operator for it, or name another one with K8S_RUNTIME_CLASS.`,
          },
        ],
      },
    });

    // Nodes that share an image archive and tag push it once per run: the first of them to
    // start uploads it, the others wait for it in their push script and skopeo mounts the layers
    // (stacks/image-scripts.ts). Measured here, 10 pushes of one new 150 MB archive: 19.8 s in
    // parallel, 3.3 s this way. No order between the pushes in the graph: it was one (a
    // depends_on on the first node's push) until a change of that node's image moved every other
    // push's dependency, and tofu then read the whole state for its drift report.
    const images = model.nodes.map((node) => new NodeImage(this, nodeConstructId('image', node.name), { target: model, node, after: [runtimeClass] }));

    const labels = { [LABEL_MANAGED_BY]: MANAGED_BY, [LABEL_GROUP]: model.group };
    const namespace = model.namespaceManagedBy === 'admin' ? this.readNamespace(model) : this.makeNamespace(model, labels);
    // deploy's: by reference (the graph as it was); the admin's: by name, after its read
    const ns = namespace instanceof NamespaceV1 ? namespace.metadata.name : model.namespace;

    const policy = new NetworkPolicyV1(this, 'network-policy' satisfies TargetPart, {
      metadata: { name: names.networkPolicy(), namespace: ns, labels },
      ...(namespace instanceof NamespaceV1 ? {} : { dependsOn: [namespace] }),
      spec: {
        // every pod of the namespace admits ingress only from pods of the same namespace (FR-010)
        podSelector: {},
        policyTypes: ['Ingress'],
        ingress: [{ from: [{ podSelector: {} }] }],
      },
    });

    // FR-016: the spire node has the kubeconfig and the drop-files, and the ConfigMap holds
    // the bundle, before any Deployment; without the coordinates none of it exists
    // and what each pod then needs of it: those to come after, the token's life
    let podSpire: NodeWorkloadProps['spire'];
    if (model.spire !== undefined) {
      const identity = new SpireIdentity(this, SPIRE_CONSTRUCT, {
        namespace: model.namespace,
        nodes: model.nodes.map((n) => n.name),
        spire: model.spire,
        labels,
        after: [namespace],
      });
      podSpire = { after: [identity.handoff, identity.configMap], tokenSeconds: model.spire.tokenSeconds };
    }

    // `after` and the waves (config/order-rules.ts): a node's Deployment depends on the rollout
    // step of each node it comes after and of each node of the wave before its own, so tofu
    // changes it only once those are Ready, and not at all when one of them failed (and was
    // rolled back). Made in that order; the IDs do not change.
    const imageOf = new Map(model.nodes.map((n, i) => [n.name, images[i]!]));
    // waitsFor lists the nodes in wave order, each after those it waits for
    const waits = waitsFor(model.nodes, model.waveSize);
    const byName = new Map(model.nodes.map((n) => [n.name, n]));
    const workloads = new Map<string, NodeWorkload>();
    for (const [name, w] of waits) {
      const node = byName.get(name)!;
      const before = [...new Set([...w.after, ...w.previousWave])].map((d) => workloads.get(d)!.rollout);
      workloads.set(
        node.name,
        new NodeWorkload(this, nodeConstructId('node', node.name), {
          target: model,
          node,
          namespace: ns,
          imageByDigest: imageOf.get(node.name)!.imageByDigest,
          after: [policy, ...before],
          ...(podSpire !== undefined ? { spire: podSpire } : {}),
        }),
      );
    }

    new TerraformOutput(this, NODE_NAMES_OUTPUT, { value: model.nodes.map((n) => n.name), description: 'the node names (FR-009)' });
    new TerraformOutput(this, TARGET_NAMESPACE_OUTPUT, { value: model.namespace });
    new TerraformOutput(this, SUBMISSION_OUTPUT, { value: model.submissionId ?? '' });
  }

  /**
   * deploy's own namespace: made with its labels, deleted by destroy. Not after the pushes: a
   * failed push changes nothing in the cluster because deploy pushes before tofu's apply
   * (src/workflow/target/push-first.ts). As an order of the graph it made every object of the
   * cluster list every push in the state (tofu keeps transitive dependencies): a state growing
   * with the square of the group (bench/README.md).
   */
  private makeNamespace(model: TargetModel, labels: Readonly<Record<string, string>>): NamespaceV1 {
    return new NamespaceV1(this, 'namespace' satisfies TargetPart, {
      // Pod Security Admission at the level the node pods pass (src/contract/pod-security.ts)
      metadata: { name: model.namespace, labels: { ...labels, ...POD_SECURITY_LABELS } },
    });
  }

  /**
   * The admin's namespace (`namespaceManagedBy: "admin"`): only read, at plan time, so that a
   * missing one fails the plan before any push. A list filtered by name, as the RuntimeClass
   * read, which RBAC grants by the namespace's name (`deploy rbac`: namespaces get/list with
   * resourceNames). A state that holds deploy's own namespace (the plan said `deploy` before)
   * forgets it without deleting it: the `removed` block (OpenTofu 1.7+).
   */
  private readNamespace(model: TargetModel): DataKubernetesResources {
    this.addOverride('removed', [{ from: 'kubernetes_namespace_v1.namespace', lifecycle: { destroy: false } }]);
    return new DataKubernetesResources(this, 'namespace' satisfies TargetPart, {
      apiVersion: 'v1',
      kind: 'Namespace',
      fieldSelector: `metadata.name=${model.namespace}`,
      lifecycle: {
        postcondition: [
          {
            condition: '${length(self.objects) == 1}',
            errorMessage: `The namespace "${model.namespace}" does not exist, and the group plan says it is the admin's (namespaceManagedBy "admin"), so deploy does not make it. Nothing was pushed. Ask the cluster's admin to apply the output of \`deploy rbac\` for this plan (it makes the namespace and the role), or name the admin's namespace with K8S_NAMESPACE.`,
          },
        ],
      },
    });
  }
}
