/**
 * Workload identity with SPIRE for one target (FR-015..017), only when the SPIRE coordinates
 * are set: the spire-server service account with its RBAC, the plan-time reads from the spire
 * node (machine ID, trust bundle), the ConfigMap `spire-agent`, and the hand-off (kubeconfig
 * with a token, drop-files) with its destroy path. The shell of the reads and the hand-off,
 * and how secrets travel in it: stacks/spire-scripts.ts.
 * Pure: no clock, no environment, no files.
 */
import { Construct } from 'constructs';
import { Fn, type ITerraformDependable } from 'cdktf';
import { Resource as NullResource } from '@cdktf/provider-null/lib/resource/index.js';
import { DataExternal } from '@cdktf/provider-external/lib/data-external/index.js';
import { ServiceAccountV1 } from '@cdktf/provider-kubernetes/lib/service-account-v1/index.js';
import { ClusterRoleV1 } from '@cdktf/provider-kubernetes/lib/cluster-role-v1/index.js';
import { ClusterRoleBindingV1 } from '@cdktf/provider-kubernetes/lib/cluster-role-binding-v1/index.js';
import { RoleV1 } from '@cdktf/provider-kubernetes/lib/role-v1/index.js';
import { RoleBindingV1 } from '@cdktf/provider-kubernetes/lib/role-binding-v1/index.js';
import { ConfigMapV1 } from '@cdktf/provider-kubernetes/lib/config-map-v1/index.js';
import { createHash } from 'node:crypto';
import type { SpireGraphCoordinates } from '../src/config/spire-coordinates.js';
import { SPIRE_AGENT_CONFIG_MAP, SPIRE_SERVER_PORT, SPIRE_TRUST_DOMAIN, spireNames } from '../src/contract/spire/spire-names.js';
import { SPIRE_SERVER_ACCOUNT } from '../src/contract/service-accounts.js';
import { tfEscape } from '../src/contract/shell.js';
import type { SpirePart } from '../src/contract/graph/graph-ids.js';
import {
  bundleReadScript,
  handoffDestroyCommand,
  handoffDropFiles,
  handoffScript,
  machineIdReadScript,
  SPIRE_READS,
  spireReadProgramName,
  sshOptionsTrigger,
} from './spire-scripts.js';

export type { SpireGraphCoordinates };

export interface SpireIdentityProps {
  /** The literal namespace (= the k8s_psat cluster name). */
  readonly namespace: string;
  /** The node names of the target, sorted. */
  readonly nodes: readonly string[];
  readonly spire: SpireGraphCoordinates;
  /** Labels of the objects (managed-by, group). */
  readonly labels: Readonly<Record<string, string>>;
  /** The Namespace: everything here comes after it. */
  readonly after: ITerraformDependable[];
}

/** The service account, RBAC, reads, ConfigMap and hand-off of one target. */
export class SpireIdentity extends Construct {
  /** The hand-off: Deployments come after it (FR-016 "before the Deployments"). */
  readonly handoff: NullResource;
  readonly configMap: ConfigMapV1;
  /** The machine ID of the spire node, read at plan time. */
  readonly spireMachineId: string;

  constructor(scope: Construct, id: string, props: SpireIdentityProps) {
    super(scope, id);
    const { namespace, spire, labels } = props;
    const clusterName = spireNames.clusterRole(namespace);

    const account = new ServiceAccountV1(this, 'server-account', {
      metadata: { name: SPIRE_SERVER_ACCOUNT, namespace, labels },
      automountServiceAccountToken: false,
      dependsOn: props.after,
    });
    const subject = [{ kind: 'ServiceAccount', name: SPIRE_SERVER_ACCOUNT, namespace }];
    // k8s_psat reads the node of the pod (nodes get) and the pod itself (pods get, in the
    // namespace): pkg/server/plugin/nodeattestor/k8spsat/psat.go of SPIRE v1.13.3.
    const nodesRole = new ClusterRoleV1(this, 'nodes-role', {
      metadata: { name: clusterName, labels },
      rule: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get'] }],
    });
    const bindings: ITerraformDependable[] = [
      new ClusterRoleBindingV1(this, 'nodes-binding', {
        metadata: { name: clusterName, labels },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterName },
        subject,
        dependsOn: [account, nodesRole],
      }),
      // token reviews (create tokenreviews): the built-in role for that
      new ClusterRoleBindingV1(this, 'review-binding', {
        metadata: { name: `${clusterName}-auth-delegator`, labels },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:auth-delegator' },
        subject,
        dependsOn: [account],
      }),
    ];
    const podsRole = new RoleV1(this, 'pods-role', {
      metadata: { name: SPIRE_SERVER_ACCOUNT, namespace, labels },
      rule: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
      dependsOn: props.after,
    });
    bindings.push(
      new RoleBindingV1(this, 'pods-binding', {
        metadata: { name: SPIRE_SERVER_ACCOUNT, namespace, labels },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: SPIRE_SERVER_ACCOUNT },
        subject,
        dependsOn: [account, podsRole],
      }),
    );

    // Plan-time reads: no depends_on, so tofu reads them at every plan (and the plan of a
    // destroy); an unreachable spire node fails the plan with a message that names it.
    const machineId = new DataExternal(this, 'spire-machine-id', {
      program: ['/bin/sh', '-c', tfEscape(machineIdReadScript(spire)), spireReadProgramName(SPIRE_READS.machineId)],
    });
    this.spireMachineId = machineId.result.lookup(SPIRE_READS.machineId);
    const bundle = new DataExternal(this, 'spire-bundle', {
      program: ['/bin/sh', '-c', tfEscape(bundleReadScript(spire)), spireReadProgramName(SPIRE_READS.bundle)],
    });
    // The bundle as read: the same bytes give no change; a CA rotation changes it at the next plan.
    this.configMap = new ConfigMapV1(this, 'agent-config-map' satisfies SpirePart, {
      metadata: { name: SPIRE_AGENT_CONFIG_MAP, namespace, labels },
      // the contract with the node image (docs/spire.md): the agent
      // reads these files from /etc/spire-agent/bundle/
      data: {
        'bundle.crt': Fn.base64decode(bundle.result.lookup(SPIRE_READS.bundle)),
        server_address: spire.node,
        server_port: String(SPIRE_SERVER_PORT),
        trust_domain: SPIRE_TRUST_DOMAIN,
        // the namespace: the node image makes its k8s_psat cluster <namespace>.<node> (spireNames.cluster)
        cluster: namespace,
      },
      dependsOn: props.after,
    });

    const dropFiles = handoffDropFiles(namespace, props.nodes);
    this.handoff = new NullResource(this, 'handoff' satisfies SpirePart, {
      // replaced when the spire node is made again (a new machine ID), when the names change,
      // or when the way to reach it changes; never because of the key's path
      triggers: {
        spire_machine_id: this.spireMachineId,
        spire_node: spire.node,
        ssh_user: spire.sshUser,
        host_key: spire.hostKey,
        // quoted for sh: the destroy step pastes it into its ssh command (a `${` in an option
        // is escaped for tofu, which gives the step the literal text)
        ssh_options: sshOptionsTrigger(spire),
        api_server: spire.apiServer ?? '',
        names: createHash('sha256').update(JSON.stringify(dropFiles)).digest('hex').slice(0, 16),
      },
      dependsOn: bindings,
      provisioners: [
        { type: 'local-exec', command: tfEscape(handoffScript(spire, namespace, dropFiles)) },
        { type: 'local-exec', when: 'destroy', command: handoffDestroyCommand(namespace) },
      ],
    });
  }
}
