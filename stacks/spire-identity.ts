/**
 * Workload identity with SPIRE for one target (FR-015..017), only when the SPIRE coordinates
 * are set: the spire-server service account with its RBAC, the plan-time reads from the spire
 * node (machine ID, trust bundle), the ConfigMap `spire-agent`, and the hand-off (kubeconfig
 * with a token, drop-files) with its destroy path.
 *
 * Secrets: the token goes from kubectl into a shell variable and from there through ssh's
 * stdin; it is never an argument, never in the state. The ssh key is read from
 * SSH_PRIVATE_KEY_FILE at run time: its path is never an input or a trigger (FR-017).
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
import { knownHostsLine, SPIRE_HOST_KEY_ALIAS, sshCheckOptions } from '../src/contract/spire-ssh-options.js';
import { dropFile, SPIRE_AGENT_CONFIG_MAP, SPIRE_SERVER_PORT, SPIRE_TRUST_DOMAIN, spireNames } from '../src/contract/spire-names.js';
import { SPIRE_SERVER_ACCOUNT } from '../src/contract/service-accounts.js';
import { shellWords, shq, tfEscape } from '../src/contract/shell.js';

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

/**
 * The shell lines that define `spire_ssh ARGS...`: the key from SSH_PRIVATE_KEY_FILE (run
 * time), the host key of SSH_NODES as the only one accepted, the node's options after ours.
 * `who` is the spire node as the messages name it.
 */
export function spireSshPrelude(
  spire: Pick<SpireGraphCoordinates, 'node' | 'sshUser' | 'hostKey' | 'sshOptions'>,
  nodeOptionsShell = shellWords(spire.sshOptions),
  acceptCurrentHostKey = false,
): string {
  const opts = sshCheckOptions('$kh').map((o) => (o === 'UserKnownHostsFile=$kh' ? '"UserKnownHostsFile=$kh"' : shq(o)));
  if (nodeOptionsShell !== '') opts.push(nodeOptionsShell);
  return [
    'set -eu',
    `key="\${SSH_PRIVATE_KEY_FILE:?is not set: the ssh key for the spire node ${spire.node}}"`,
    'tmp=$(mktemp -d)',
    "trap 'rm -rf \"$tmp\"' EXIT",
    'kh=$tmp/known_hosts',
    `printf '%s' ${shq(knownHostsLine(spire))} >"$kh"`,
    ...(acceptCurrentHostKey
      ? [
          // The destroy step knows only the host key of its triggers. A spire node made again
          // under the same name has a new one, which the run's SSH_NODES gives (the run
          // exports it, src/spire/stage-key.ts): accept it too, for that node only.
          `if [ "\${DEPLOY_SPIRE_NODE:-}" = ${shq(spire.node)} ] && [ -n "\${DEPLOY_SPIRE_HOST_KEY:-}" ]; then printf '${SPIRE_HOST_KEY_ALIAS} %s\\n' "$DEPLOY_SPIRE_HOST_KEY" >>"$kh"; fi`,
        ]
      : []),
    // ssh's own complaint goes to a file, so that our line comes first in tofu's diagnostic
    // DEPLOY_SSH: the ssh the run found (src/tools/discover.ts); a plain `ssh` otherwise
    `spire_ssh() { "\${DEPLOY_SSH:-ssh}" -i "$key" ${opts.join(' ')} -l ${shq(spire.sshUser)} -- ${shq(spire.node)} "$@" 2>"$tmp/ssh.err"; }`,
    `unreachable() { echo "deploy: the spire node ${spire.node} is not reachable over ssh as ${spire.sshUser} ($1); check K8S_SPIRE_NODE, the node, the host key in SSH_NODES and SSH_PRIVATE_KEY_FILE" >&2; sed -n 1,4p "$tmp/ssh.err" >&2; exit 1; }`,
  ].join('\n');
}

/** The `external` program that prints `{"<field>": "<value>"}` from a command on the spire node. */
function readProgram(spire: SpireGraphCoordinates, field: string, remote: string, check: string, what: string): string[] {
  const script = [
    spireSshPrelude(spire),
    // the query on stdin is not used
    'cat >/dev/null',
    // ssh's 255 is the node out of reach: at once. Another failure is the command's, e.g. a
    // SPIRE server restarting (the spire node's own sync restarts it when the hand-off adds a
    // cluster): tried again for about 30 s before the plan fails.
    'tries=0',
    'while :; do',
    `  out=$(spire_ssh ${remote}) && break`,
    '  rc=$?',
    `  [ "$rc" -ne 255 ] || unreachable ${shq(what)}`,
    '  tries=$((tries + 1))',
    `  if [ "$tries" -ge 10 ]; then echo "deploy: on the spire node ${spire.node}, ${remote.replaceAll('"', '')} failed (exit $rc) 10 times in about 30 s (${what}); check the SPIRE server there: spire-server healthcheck" >&2; sed -n 1,4p "$tmp/ssh.err" >&2; exit 1; fi`,
    '  sleep 3',
    'done',
    check,
    `printf '{"${field}":"%s"}' "$out"`,
  ].join('\n');
  return ['/bin/sh', '-c', tfEscape(script), `deploy-spire-${field}`];
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
      program: readProgram(spire, 'machine_id', 'cat /etc/machine-id', `printf '%s' "$out" | grep -Eqx '[0-9a-f]{32}' || { echo "deploy: the spire node ${spire.node} has no machine ID in /etc/machine-id" >&2; exit 1; }`, 'reading /etc/machine-id'),
    });
    this.spireMachineId = machineId.result.lookup('machine_id');
    const bundle = new DataExternal(this, 'spire-bundle', {
      program: readProgram(
        spire,
        'bundle_b64',
        'spire-server bundle show -format pem',
        `printf '%s\\n' "$out" | grep -q -- '-----BEGIN CERTIFICATE-----' || { echo "deploy: the SPIRE server on ${spire.node} gave no PEM trust bundle; check it with spire-server healthcheck" >&2; exit 1; }\nout=$(printf '%s\\n' "$out" | base64 -w0)`,
        'reading the trust bundle',
      ),
    });
    // The bundle as read: the same bytes give no change; a CA rotation changes it at the next plan.
    this.configMap = new ConfigMapV1(this, 'agent-config-map', {
      metadata: { name: SPIRE_AGENT_CONFIG_MAP, namespace, labels },
      // the contract with the node image (README "Workload identity with SPIRE"): the agent
      // reads these files from /etc/spire-agent/bundle/
      data: {
        'bundle.crt': Fn.base64decode(bundle.result.lookup('bundle_b64')),
        server_address: spire.node,
        server_port: String(SPIRE_SERVER_PORT),
        trust_domain: SPIRE_TRUST_DOMAIN,
        // the namespace: the node image makes its k8s_psat cluster <namespace>.<node> (spireNames.cluster)
        cluster: namespace,
      },
      dependsOn: props.after,
    });

    const dropFiles = props.nodes.map((n) => ({ node: n, text: dropFile(namespace, n) }));
    const remote = [
      'set -eu',
      'umask 077',
      `d=${shq(spireNames.namespaceDir(namespace))}`,
      'mkdir -p "$d/entries"',
      // the kubeconfig (with the token) arrives on stdin
      'cat >"$d/kubeconfig.new"',
      'chmod 0600 "$d/kubeconfig.new"',
      'mv -f "$d/kubeconfig.new" "$d/kubeconfig"',
      // the names of nodes no longer in the target are retired with their files
      'rm -f "$d"/entries/*.json',
      ...dropFiles.map((f) => `printf '%s' ${shq(Buffer.from(f.text).toString('base64'))} | base64 -d >"$d/entries/${f.node}.json"`),
    ].join('\n');
    const serverLine = spire.apiServer !== undefined ? `server=${shq(spire.apiServer)}` : `server=$(kc config view --minify -o jsonpath='{.clusters[0].cluster.server}')`;
    const create = [
      spireSshPrelude(spire),
      `kc() { "\${DEPLOY_KUBECTL:-kubectl}" --kubeconfig "\${KUBE_CONFIG_PATH:?is not set: the kubeconfig of the cluster}" "$@"; }`,
      serverLine,
      `ca=$(kc config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')`,
      `if [ -z "$ca" ]; then ca=$(base64 -w0 <"$(kc config view --minify -o jsonpath='{.clusters[0].cluster.certificate-authority}')"); fi`,
      // the token stays in this shell: a variable, then printf (a builtin) into ssh's stdin
      `token=$(kc -n ${shq(namespace)} create token ${SPIRE_SERVER_ACCOUNT} --duration 8760h)`,
      `printf 'apiVersion: v1\\nkind: Config\\nclusters:\\n- name: %s\\n  cluster:\\n    server: %s\\n    certificate-authority-data: %s\\nusers:\\n- name: ${SPIRE_SERVER_ACCOUNT}\\n  user:\\n    token: %s\\ncontexts:\\n- name: %s\\n  context:\\n    cluster: %s\\n    user: ${SPIRE_SERVER_ACCOUNT}\\ncurrent-context: %s\\n' ${shq(namespace)} "$server" "$ca" "$token" ${shq(namespace)} ${shq(namespace)} ${shq(namespace)} | spire_ssh ${shq(`sh -c ${shq(remote)}`)} || unreachable 'handing off the kubeconfig'`,
    ].join('\n');

    // The destroy step can read only its own triggers: everything it needs is in them, but
    // not the key's path (run-time env).
    const destroyPrelude = spireSshPrelude({ node: '@@node@@', sshUser: '@@user@@', hostKey: '@@hostkey@@', sshOptions: [] }, '@@options@@', true);
    const destroy = tfEscape(
      [destroyPrelude, `spire_ssh ${shq(`rm -rf ${shq(spireNames.namespaceDir(namespace))}`)} || unreachable 'removing the kubeconfig and names of ${namespace}'`].join('\n'),
    )
      .replaceAll(`'@@node@@'`, '"${self.triggers.spire_node}"')
      .replaceAll('@@node@@', '${self.triggers.spire_node}')
      .replaceAll(`'@@user@@'`, '"${self.triggers.ssh_user}"')
      .replaceAll('@@user@@', '${self.triggers.ssh_user}')
      .replaceAll('@@hostkey@@', '${self.triggers.host_key}')
      .replaceAll('@@options@@', '${self.triggers.ssh_options}');

    this.handoff = new NullResource(this, 'handoff', {
      // replaced when the spire node is made again (a new machine ID), when the names change,
      // or when the way to reach it changes; never because of the key's path
      triggers: {
        spire_machine_id: this.spireMachineId,
        spire_node: spire.node,
        ssh_user: spire.sshUser,
        host_key: spire.hostKey,
        // quoted for sh: the destroy step pastes it into its ssh command (a `${` in an option
        // is escaped for tofu, which gives the step the literal text)
        ssh_options: tfEscape(shellWords(spire.sshOptions)),
        api_server: spire.apiServer ?? '',
        names: createHash('sha256').update(JSON.stringify(dropFiles)).digest('hex').slice(0, 16),
      },
      dependsOn: bindings,
      provisioners: [
        { type: 'local-exec', command: tfEscape(create) },
        { type: 'local-exec', when: 'destroy', command: destroy },
      ],
    });
  }
}
