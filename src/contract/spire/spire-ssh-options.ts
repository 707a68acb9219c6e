/**
 * How deploy reaches the spire node over ssh (FR-017), as pure data: the key of
 * SSH_PRIVATE_KEY_FILE, the host key of SSH_NODES as the only accepted one, the node's ssh
 * options after ours (ssh takes the first value of an option, so they cannot loosen the
 * checks). The graph's shell steps (stacks/spire-scripts.ts) and the tests' ssh to the spire
 * node use the same options.
 */

/**
 * The name the host key is filed under in our known_hosts (ssh's HostKeyAlias): the check is
 * then independent of how the node is addressed (name, IP, a Port option).
 */
export const SPIRE_HOST_KEY_ALIAS = 'spire-node';

/** The known_hosts line that accepts the spire node's host key and no other. */
export function knownHostsLine(spire: { readonly hostKey: string }): string {
  return `${SPIRE_HOST_KEY_ALIAS} ${spire.hostKey}\n`;
}

/** The options that pin the host key and the key, before the node's own ssh options (ssh keeps the first value of each). */
export function sshCheckOptions(knownHostsFile: string): string[] {
  return [
    '-o', 'IdentitiesOnly=yes',
    '-o', 'BatchMode=yes',
    '-o', 'StrictHostKeyChecking=yes',
    '-o', `UserKnownHostsFile=${knownHostsFile}`,
    '-o', 'GlobalKnownHostsFile=/dev/null',
    '-o', `HostKeyAlias=${SPIRE_HOST_KEY_ALIAS}`,
    '-o', 'UpdateHostKeys=no',
    '-o', 'ConnectTimeout=15',
    '-o', 'ServerAliveInterval=10',
  ];
}

/** The ssh arguments for running `remote` (words, joined by ssh with spaces) on the spire node. */
export function sshArgs(
  spire: { readonly node: string; readonly sshUser: string; readonly sshPrivateKeyFile: string; readonly sshOptions: readonly string[] },
  knownHostsFile: string,
  remote: readonly string[],
): string[] {
  return ['-i', spire.sshPrivateKeyFile, ...sshCheckOptions(knownHostsFile), ...spire.sshOptions, '-l', spire.sshUser, '--', spire.node, ...remote];
}
