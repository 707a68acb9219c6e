/**
 * The shell of the graph's SPIRE steps, run by tofu (stacks/spire-identity.ts): the plan-time
 * reads from the spire node (machine ID, trust bundle) as `external` programs, and the hand-off
 * (kubeconfig with a token, drop-files) with its destroy step as local-exec.
 *
 * Secrets: the token goes from kubectl into a shell variable and from there through ssh's
 * stdin; it is never an argument, never in the state. The ssh key is read from
 * SSH_PRIVATE_KEY_FILE at run time: its path is never an input or a trigger (FR-017).
 * A failure is said to deploy as a typed line naming the spire node (src/contract/step-lines.ts),
 * followed by ssh's own complaint; deploy makes its words (src/spire/spire-failure.ts).
 * The text is part of the graph: a change to it changes every graph
 * (test/unit/stacks/target-stack-scripts.test.ts pins it). Each returns the shell as it runs, except
 * the destroy step, whose text is a tofu template (it reads its triggers).
 */
import type { SpireGraphCoordinates } from '../src/config/spire-coordinates.js';
import { SPIRE_SERVER_ACCOUNT } from '../src/contract/service-accounts.js';
import { knownHostsLine, SPIRE_HOST_KEY_ALIAS, sshCheckOptions } from '../src/contract/spire/spire-ssh-options.js';
import { dropFile, spireNames } from '../src/contract/spire/spire-names.js';
import { shellWords, shq, tfEscape } from '../src/contract/shell.js';
import { sayStepLine, STEP_LINE_SHELL } from '../src/contract/step-lines.js';

/** What the ssh steps need of the SPIRE coordinates (never the key's path). */
export type SpireSshTarget = Pick<SpireGraphCoordinates, 'node' | 'sshUser' | 'hostKey' | 'sshOptions'>;

/**
 * The shell lines that define `spire_ssh ARGS...`: the key from SSH_PRIVATE_KEY_FILE (run
 * time), the host key of SSH_NODES as the only one accepted, the node's options after ours.
 */
export function spireSshPrelude(
  spire: SpireSshTarget,
  nodeOptionsShell = shellWords(spire.sshOptions),
  acceptCurrentHostKey = false,
): string {
  const opts = sshCheckOptions('$kh').map((o) => (o === 'UserKnownHostsFile=$kh' ? '"UserKnownHostsFile=$kh"' : shq(o)));
  if (nodeOptionsShell !== '') opts.push(nodeOptionsShell);
  return [
    'set -eu',
    ...STEP_LINE_SHELL,
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
    `unreachable() { ${failed(spire, `the spire node ${spire.node} is not reachable over ssh as ${spire.sshUser} ($1); check K8S_SPIRE_NODE, the node, the host key in SSH_NODES and SSH_PRIVATE_KEY_FILE`)}; sed -n 1,4p "$tmp/ssh.err" >&2; exit 1; }`,
  ].join('\n');
}

/**
 * The shell that prints a SPIRE step's typed line of failure naming the spire node
 * (src/contract/step-lines.ts), which deploy shows as `deploy: <text>`; `text` is the inside
 * of a double-quoted sh word.
 */
function failed(spire: Pick<SpireSshTarget, 'node'>, text: string): string {
  return sayStepLine('spire', 'failed', shq(spire.node), `"${text}"`);
}

/**
 * An `external` program's script that prints `{"<field>": "<value>"}` from a command on the
 * spire node (`value` as `check` leaves `$out`); `what` names the read in the messages.
 */
function readScript(spire: SpireSshTarget, field: string, remote: string, check: string, what: string): string {
  return [
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
    `  if [ "$tries" -ge 10 ]; then ${failed(spire, `on the spire node ${spire.node}, ${remote.replaceAll('"', '')} failed (exit $rc) 10 times in about 30 s (${what}); check the SPIRE server there: spire-server healthcheck`)}; sed -n 1,4p "$tmp/ssh.err" >&2; exit 1; fi`,
    '  sleep 3',
    'done',
    check,
    `printf '{"${field}":"%s"}' "$out"`,
  ].join('\n');
}

/** The field each read prints (`{"<field>": "..."}`) and its program's $0 (`deploy-spire-<field>`). */
export const SPIRE_READS = { machineId: 'machine_id', bundle: 'bundle_b64' } as const;
export const spireReadProgramName = (field: string) => `deploy-spire-${field}`;

/** Prints `{"machine_id": "<32 hex>"}`: the spire node's /etc/machine-id (a node made again has a new one). */
export function machineIdReadScript(spire: SpireSshTarget): string {
  return readScript(
    spire,
    SPIRE_READS.machineId,
    'cat /etc/machine-id',
    `printf '%s' "$out" | grep -Eqx '[0-9a-f]{32}' || { ${failed(spire, `the spire node ${spire.node} has no machine ID in /etc/machine-id`)}; exit 1; }`,
    'reading /etc/machine-id',
  );
}

/** Prints `{"bundle_b64": "<base64 of the PEM>"}`: the SPIRE server's X.509 trust bundle. */
export function bundleReadScript(spire: SpireSshTarget): string {
  return readScript(
    spire,
    SPIRE_READS.bundle,
    'spire-server bundle show -format pem',
    `printf '%s\\n' "$out" | grep -q -- '-----BEGIN CERTIFICATE-----' || { ${failed(spire, `the SPIRE server on ${spire.node} gave no PEM trust bundle; check it with spire-server healthcheck`)}; exit 1; }\nout=$(printf '%s\\n' "$out" | base64 -w0)`,
    'reading the trust bundle',
  );
}

/** The drop-file of each node of the target, in order: what the hand-off writes, and what its trigger `names` hashes. */
export function handoffDropFiles(namespace: string, nodes: readonly string[]): { node: string; text: string }[] {
  return nodes.map((n) => ({ node: n, text: dropFile(namespace, n) }));
}

/**
 * The hand-off: a token of spire-server into a kubeconfig of the cluster, through ssh's stdin
 * into the namespace's directory on the spire node, and the drop-files of the nodes (those of
 * nodes no longer in the target are removed).
 */
export function handoffScript(spire: SpireSshTarget & Pick<SpireGraphCoordinates, 'apiServer'>, namespace: string, dropFiles: readonly { node: string; text: string }[]): string {
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
  return [
    spireSshPrelude(spire),
    `kc() { "\${DEPLOY_KUBECTL:-kubectl}" --kubeconfig "\${KUBE_CONFIG_PATH:?is not set: the kubeconfig of the cluster}" "$@"; }`,
    serverLine,
    `ca=$(kc config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')`,
    `if [ -z "$ca" ]; then ca=$(base64 -w0 <"$(kc config view --minify -o jsonpath='{.clusters[0].cluster.certificate-authority}')"); fi`,
    // the token stays in this shell: a variable, then printf (a builtin) into ssh's stdin
    `token=$(kc -n ${shq(namespace)} create token ${SPIRE_SERVER_ACCOUNT} --duration 8760h)`,
    `printf 'apiVersion: v1\\nkind: Config\\nclusters:\\n- name: %s\\n  cluster:\\n    server: %s\\n    certificate-authority-data: %s\\nusers:\\n- name: ${SPIRE_SERVER_ACCOUNT}\\n  user:\\n    token: %s\\ncontexts:\\n- name: %s\\n  context:\\n    cluster: %s\\n    user: ${SPIRE_SERVER_ACCOUNT}\\ncurrent-context: %s\\n' ${shq(namespace)} "$server" "$ca" "$token" ${shq(namespace)} ${shq(namespace)} ${shq(namespace)} | spire_ssh ${shq(`sh -c ${shq(remote)}`)} || unreachable 'handing off the kubeconfig'`,
  ].join('\n');
}

/**
 * The hand-off's destroy step, as graph text (a tofu template, already escaped): it removes
 * the namespace's directory on the spire node. A destroy step can read only its own triggers
 * (spire_node, ssh_user, host_key, ssh_options): everything it needs is in them, but not the
 * key's path (run-time env).
 */
export function handoffDestroyCommand(namespace: string): string {
  const prelude = spireSshPrelude({ node: '@@node@@', sshUser: '@@user@@', hostKey: '@@hostkey@@', sshOptions: [] }, '@@options@@', true);
  return tfEscape([prelude, `spire_ssh ${shq(`rm -rf ${shq(spireNames.namespaceDir(namespace))}`)} || unreachable 'removing the kubeconfig and names of ${namespace}'`].join('\n'))
    .replaceAll(`'@@node@@'`, '"${self.triggers.spire_node}"')
    .replaceAll('@@node@@', '${self.triggers.spire_node}')
    .replaceAll(`'@@user@@'`, '"${self.triggers.ssh_user}"')
    .replaceAll('@@user@@', '${self.triggers.ssh_user}')
    .replaceAll('@@hostkey@@', '${self.triggers.host_key}')
    .replaceAll('@@options@@', '${self.triggers.ssh_options}');
}

/** The trigger `ssh_options`: the node's ssh options quoted for sh, escaped for tofu (the destroy step pastes it). */
export function sshOptionsTrigger(spire: Pick<SpireGraphCoordinates, 'sshOptions'>): string {
  return tfEscape(shellWords(spire.sshOptions));
}
