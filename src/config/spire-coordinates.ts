/**
 * The SPIRE coordinates (FR-017): how the deployer reaches the spire node of the central group
 * over ssh, and the API server address the spire node uses. Optional as a whole: they count as
 * set when K8S_SPIRE_NODE is set. SSH_USER, SSH_PRIVATE_KEY_FILE and SSH_NODES are the ssh
 * method's layers, so an environment may carry them for other reasons; alone they set nothing.
 *
 * The key is referred to by path only, and that path is per run ("each deploy stages the key
 * to a different path"): it must never reach the graph's inputs or triggers.
 */
import { z } from 'zod';
import type { InputIssue } from '../errors.js';
import { absoluteFile } from '../paths.js';
import { SPIRE_TOKEN_LIFE } from '../contract/spire/spire-token-life.js';

// the table lives with the other coordinates' (no zod there, so --help stays fast)
export { SPIRE_COORDINATES } from './coordinate-table.js';

/** The validated SPIRE coordinates. */
export interface SpireCoordinates {
  /** FQDN or address of the spire node (the SSH_NODES key that names it). */
  readonly node: string;
  readonly sshUser: string;
  /** Read at run time by ssh only; never an input or trigger of a graph resource. */
  readonly sshPrivateKeyFile: string;
  /** `<key type> <base64>` of the spire node's sshd: the known_hosts line is built from it. */
  readonly hostKey: string;
  /** Extra ssh arguments from SSH_NODES (e.g. `-o Port=2222`), host key checks left on. */
  readonly sshOptions: readonly string[];
  /** `undefined`: use the server of the kubeconfig (resolved at run time, not here). */
  readonly apiServer: string | undefined;
  /**
   * Life of each pod's projected token (K8S_SPIRE_TOKEN_SECONDS, contract/spire/spire-token-life.ts): part
   * of the pod template, so a change of it is a rollout of every node.
   */
  readonly tokenSeconds: number;
}

/** What the graph may know of the SPIRE coordinates: everything but the key's path (FR-017). */
export type SpireGraphCoordinates = Omit<SpireCoordinates, 'sshPrivateKeyFile'>;

/** The coordinates without the key's path, built field by field so nothing else slips in. */
export function spireGraphCoordinates(spire: SpireCoordinates): SpireGraphCoordinates {
  return { node: spire.node, sshUser: spire.sshUser, hostKey: spire.hostKey, sshOptions: [...spire.sshOptions], apiServer: spire.apiServer, tokenSeconds: spire.tokenSeconds };
}

const hostName = /^(?=.{1,253}$)[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*\.?$/;
const ipv4 = /^(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3}$/;
const ipv6 = /^[0-9a-fA-F:]+(%[a-zA-Z0-9]+)?$/;
/** A POSIX portable user name (useradd's rule). */
const userName = /^[a-z_][a-z0-9_-]{0,31}$/;
/** `<type> <base64>` as in known_hosts; the comment, if any, is dropped by the caller. */
const hostKeyPattern = /^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)|sk-ssh-ed25519@openssh\.com|sk-ecdsa-sha2-nistp256@openssh\.com) [A-Za-z0-9+/]+={0,3}$/;
/**
 * ssh options that would turn off or redirect the host key check, or swap the key: refused,
 * because the host key of SSH_NODES is the only thing that proves the spire node is the one
 * the kubeconfig with the token goes to.
 */
const forbiddenOptions = ['stricthostkeychecking', 'userknownhostsfile', 'globalknownhostsfile', 'knownhostscommand', 'identityfile', 'identitiesonly', 'proxycommand', 'localcommand', 'permitlocalcommand'];

const sshNodeSchema = z
  .object({
    hostKey: z
      .string({ error: 'must be a string "<key type> <base64>" as in known_hosts' })
      .transform((s) => s.trim().split(/\s+/).slice(0, 2).join(' '))
      .pipe(z.string().regex(hostKeyPattern, 'must be "<key type> <base64>" as in known_hosts, e.g. "ssh-ed25519 AAAAC3Nza..."')),
    sshOpts: z.array(z.string({ error: 'must be a list of strings' })).default([]),
  })
  .strict();

const sshNodesSchema = z.record(z.string(), z.unknown());

function optionProblem(opts: readonly string[]): string | undefined {
  for (const [i, o] of opts.entries()) {
    if (o === '-i' || (o.startsWith('-i') && !o.startsWith('-o'))) return `"${o}" is not allowed: the key comes from SSH_PRIVATE_KEY_FILE`;
    // `-o Name=value`, `-oName=value` or `-o "Name value"`
    const text = o === '-o' ? opts[i + 1] : o.startsWith('-o') ? o.slice(2) : undefined;
    if (text === undefined) continue;
    const name = text.trim().split(/[\s=]/)[0]!.toLowerCase();
    if (forbiddenOptions.includes(name)) {
      return `option "${text.trim()}" is not allowed: the deployer checks the host key of SSH_NODES itself and passes the key of SSH_PRIVATE_KEY_FILE`;
    }
  }
  return undefined;
}

/** K8S_SPIRE_TOKEN_SECONDS: a whole number of seconds (blanks around it allowed) in SPIRE_TOKEN_LIFE's range, or why not. */
function parseTokenSeconds(text: string): { ok: true; seconds: number } | { ok: false; problem: string } {
  const t = text.trim();
  const seconds = /^\d+$/.test(t) ? Number(t) : Number.NaN;
  const { min, max, defaultSeconds } = SPIRE_TOKEN_LIFE;
  if (Number.isInteger(seconds) && seconds >= min && seconds <= max) return { ok: true, seconds };
  const why = Number.isNaN(seconds) ? 'is not a whole number of seconds' : seconds < min ? `is shorter than the API server accepts for a projected token (${min} s)` : `is longer than ${max} s (24 h), the longest life deploy gives a token a node can leak`;
  return { ok: false, problem: `"${text}" ${why}: give a whole number of seconds from ${min} to ${max}, e.g. ${defaultSeconds} (the default)` };
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}

/**
 * SPIRE coordinates from the environment: `value` undefined when K8S_SPIRE_NODE is unset (the
 * method then registers nothing). Returns every problem at once.
 */
export function resolveSpireCoordinates(
  env: NodeJS.ProcessEnv,
  /** The run's working directory (RunContext.cwd): a relative SSH_PRIVATE_KEY_FILE is its. */
  cwd: string,
): { ok: true; value: SpireCoordinates | undefined } | { ok: false; issues: InputIssue[] } {
  const node = nonEmpty(env.K8S_SPIRE_NODE);
  const apiServerText = nonEmpty(env.K8S_SPIRE_API_SERVER);
  const tokenSecondsText = nonEmpty(env[SPIRE_TOKEN_LIFE.env]);
  const issues: InputIssue[] = [];
  if (node === undefined) {
    // set without the node, they say SPIRE was meant to be on: refused rather than ignored
    for (const [name, text] of [['K8S_SPIRE_API_SERVER', apiServerText], [SPIRE_TOKEN_LIFE.env, tokenSecondsText]] as const) {
      if (text !== undefined) issues.push({ where: name, message: `is set but K8S_SPIRE_NODE is not: set K8S_SPIRE_NODE to the spire node, or unset ${name}` });
    }
    return issues.length > 0 ? { ok: false, issues } : { ok: true, value: undefined };
  }

  const nodeName = node.replace(/^\[(.*)\]$/, '$1');
  if (!hostName.test(nodeName) && !ipv4.test(nodeName) && !(nodeName.includes(':') && ipv6.test(nodeName))) {
    issues.push({ where: 'K8S_SPIRE_NODE', message: `"${node}" is not a host name or an IP address` });
  }

  const sshUser = nonEmpty(env.SSH_USER);
  if (sshUser === undefined) issues.push({ where: 'SSH_USER', message: 'is not set: name the ssh user on the spire node (K8S_SPIRE_NODE is set)' });
  else if (!userName.test(sshUser)) issues.push({ where: 'SSH_USER', message: `"${sshUser}" is not a user name` });

  const keyText = nonEmpty(env.SSH_PRIVATE_KEY_FILE);
  // absolute by the one rule (src/paths.ts absoluteFile): the SPIRE steps run ssh from the run directory
  const key = keyText === undefined ? undefined : absoluteFile(keyText, { cwd, env });
  const keyFile = key?.ok === true ? key.path : undefined;
  if (keyText === undefined) issues.push({ where: 'SSH_PRIVATE_KEY_FILE', message: 'is not set: name the ssh private key file for the spire node (K8S_SPIRE_NODE is set)' });
  else if (key?.ok === false) issues.push({ where: 'SSH_PRIVATE_KEY_FILE', message: key.problem });

  let hostKey: string | undefined;
  let sshOptions: string[] = [];
  const nodesText = nonEmpty(env.SSH_NODES);
  if (nodesText === undefined) {
    issues.push({ where: 'SSH_NODES', message: `is not set: give the host key of the spire node, e.g. {"${node}": {"hostKey": "ssh-ed25519 AAAA..."}}` });
  } else {
    let data: unknown;
    try {
      data = JSON.parse(nodesText);
    } catch (err) {
      issues.push({ where: 'SSH_NODES', message: `is not valid JSON (${(err as Error).message})` });
    }
    if (data !== undefined) {
      const nodes = sshNodesSchema.safeParse(data);
      if (!nodes.success) {
        issues.push({ where: 'SSH_NODES', message: 'must be a JSON object keyed by node FQDN' });
      } else if (!(node in nodes.data)) {
        const known = Object.keys(nodes.data);
        issues.push({ where: 'SSH_NODES', message: `has no entry for the spire node "${node}" (K8S_SPIRE_NODE)${known.length > 0 ? `; its entries: ${known.join(', ')}` : ''}` });
      } else {
        const entry = sshNodeSchema.safeParse(nodes.data[node]);
        if (!entry.success) {
          for (const i of entry.error.issues) {
            const field = i.code === 'unrecognized_keys' ? i.keys.join(', ') : i.path.map(String).join('.');
            const message = i.code === 'unrecognized_keys' ? `unknown field${i.keys.length === 1 ? '' : 's'}: the entry takes hostKey and sshOpts` : i.message;
            issues.push({ where: `SSH_NODES["${node}"]${field ? `.${field}` : ''}`, message });
          }
        } else {
          hostKey = entry.data.hostKey;
          sshOptions = entry.data.sshOpts;
          const problem = optionProblem(sshOptions);
          if (problem) issues.push({ where: `SSH_NODES["${node}"].sshOpts`, message: problem });
        }
      }
    }
  }

  let apiServer: string | undefined;
  if (apiServerText !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(apiServerText);
    } catch {
      url = undefined;
    }
    if (url === undefined || url.protocol !== 'https:' || url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
      issues.push({ where: 'K8S_SPIRE_API_SERVER', message: `"${apiServerText}" must be an https URL without credentials, e.g. https://api.cluster.example.org:6443` });
    } else {
      apiServer = apiServerText.replace(/\/+$/, '');
    }
  }

  let tokenSeconds: number = SPIRE_TOKEN_LIFE.defaultSeconds;
  if (tokenSecondsText !== undefined) {
    const parsed = parseTokenSeconds(tokenSecondsText);
    if (parsed.ok) tokenSeconds = parsed.seconds;
    else issues.push({ where: SPIRE_TOKEN_LIFE.env, message: parsed.problem });
  }

  if (issues.length > 0) return { ok: false, issues };
  return {
    ok: true,
    value: { node, sshUser: sshUser!, sshPrivateKeyFile: keyFile!, hostKey: hostKey!, sshOptions, apiServer, tokenSeconds },
  };
}
