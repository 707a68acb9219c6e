/**
 * The test spire node (test/spire/spire-node.sh): spire-server and sshd in their own network
 * namespace, reached over ssh with a real host key check; `down` leaves no netns, veth,
 * process or file; `up` after `down` is a node made again (new machine ID, new CA).
 * Its own netns name and /30 so that a spire node of a developer keeps running beside it.
 */
import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropFile } from '../../src/contract/spire/spire-names.js';
import { processRuns } from '../../src/process-alive.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const script = join(repo, 'test', 'spire', 'spire-node.sh');
const netns = `dpl-spt-${process.pid % 10000}`;
// Its own /30 per run (third octet from the pid): another run of this suite at the same time
// (another checkout) gets other addresses, and spire-node.sh refuses addresses in use.
const subnet = `10.253.${1 + (process.pid % 250)}`;
const nodeIp = `${subnet}.2`;

let stateDir: string;
let env: NodeJS.ProcessEnv;
let nodeEnv: Record<string, string>;

function spireNode(verb: 'up' | 'down' | 'status' | 'sync') {
  return execa('bash', [script, verb], { env, reject: false, timeout: 180_000 });
}

function parseExports(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^export ([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m) out[m[1]!] = m[2]!.replace(/^'(.*)'$/, '$1');
  }
  return out;
}

function ssh(args: string[], knownHosts = nodeEnv.SPIRE_NODE_KNOWN_HOSTS!) {
  return execa(
    'ssh',
    ['-n', '-i', nodeEnv.SSH_PRIVATE_KEY_FILE!, '-o', 'IdentitiesOnly=yes', '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=yes',
      '-o', `UserKnownHostsFile=${knownHosts}`, '-o', 'ConnectTimeout=5', `${nodeEnv.SSH_USER}@${nodeEnv.K8S_SPIRE_NODE}`, ...args],
    { reject: false, timeout: 30_000 },
  );
}

async function up() {
  const r = await spireNode('up');
  expect(r.exitCode, r.stderr).toBe(0);
  nodeEnv = parseExports(await readFile(r.stdout.trim(), 'utf8'));
}

async function pidsOf(): Promise<number[]> {
  const pids: number[] = [];
  for (const d of ['sshd', 'spire-server']) {
    const text = await readFile(join(stateDir, 'spire-node', 'run', `${d}.pid`), 'utf8');
    pids.push(Number(text.split(' ')[0]));
  }
  return pids;
}


beforeAll(async () => {
  // Builds spire-server/spire-agent once into the cache (about 10 min cold; seconds warm).
  const build = await execa('bash', [join(repo, 'toolchain', 'spire', 'build.sh')], { reject: false, timeout: 3_600_000 });
  expect(build.exitCode, build.stderr).toBe(0);
  stateDir = await mkdtemp(join(tmpdir(), 'spire-node-'));
  env = { ...process.env, DEPLOY_STATE_DIR: stateDir, SPIRE_NODE_NETNS: netns, SPIRE_NODE_HOST_IP: `${subnet}.1`, SPIRE_NODE_IP: nodeIp, SPIRE_NODE_CLUSTERS: 'fediversity:node-web,node-db other:node-x' };
  await up();
}, 3_700_000);

afterAll(async () => {
  await spireNode('down');
  await rm(stateDir, { recursive: true, force: true });
});

describe('test spire node', () => {
  it('GIVEN up WHEN the env file is read THEN it names the node, the ssh layers and the server', () => {
    expect(nodeEnv).toMatchObject({
      K8S_SPIRE_NODE: nodeIp,
      SSH_USER: 'root',
      SPIRE_NODE_SERVER_ADDRESS: `${nodeIp}:8081`,
      SPIRE_NODE_TRUST_DOMAIN: 'fediversity',
      SPIRE_NODE_NETNS: netns,
    });
    const nodes = JSON.parse(nodeEnv.SSH_NODES!) as Record<string, { hostKey: string }>;
    expect(nodes[nodeIp]!.hostKey).toMatch(/^ssh-ed25519 [A-Za-z0-9+/]+=*$/);
  });

  it('GIVEN the known_hosts of up WHEN ssh runs on the node THEN it is the node: its netns, its machine ID, its spire-server', async () => {
    const id = await ssh(['cat', '/etc/machine-id']);
    expect(id.exitCode, id.stderr).toBe(0);
    expect(id.stdout.trim()).toBe((await readFile(join(stateDir, 'spire-node', 'root', 'etc', 'machine-id'), 'utf8')).trim());
    expect(id.stdout.trim()).not.toBe((await readFile('/etc/machine-id', 'utf8')).trim());

    const addr = await ssh(['ip', '-o', '-4', 'addr', 'show', 'dev', 'eth0']);
    expect(addr.stdout).toContain(`${nodeIp}/30`);

    const health = await ssh(['spire-server', 'healthcheck']);
    expect(health.exitCode, health.stderr).toBe(0);
    const bundle = await ssh(['spire-server', 'bundle', 'show']);
    expect(bundle.stdout).toMatch(/^-----BEGIN CERTIFICATE-----/);
    const agents = await ssh(['spire-server', 'agent', 'list']);
    expect(agents.exitCode, agents.stderr).toBe(0);
    expect(agents.stdout).not.toContain('spiffe://');
  });

  it('GIVEN a known_hosts with another key for the address WHEN ssh connects THEN the host key check refuses it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'spire-kh-'));
    try {
      await execa('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'other')]);
      const other = (await readFile(join(dir, 'other.pub'), 'utf8')).split(' ').slice(0, 2).join(' ');
      await writeFile(join(dir, 'known_hosts'), `${nodeIp} ${other}\n`);
      const r = await ssh(['true'], join(dir, 'known_hosts'));
      expect(r.exitCode).toBe(255);
      expect(r.stderr).toMatch(/HOST IDENTIFICATION HAS CHANGED|Host key verification failed/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('GIVEN SPIRE_NODE_CLUSTERS WHEN the server runs THEN k8s_psat has one cluster per namespace with its kubeconfig path', async () => {
    const conf = await ssh(['cat', '/var/lib/spire/server.conf']);
    expect(conf.stdout).toContain('trust_domain = "fediversity"');
    expect(conf.stdout).toMatch(/"fediversity" = \{\s*service_account_allow_list = \["fediversity:node-web", "fediversity:node-db"\]\s*kube_config_file = "\/var\/lib\/spire\/k8s\/fediversity\/kubeconfig"/);
    expect(conf.stdout).toMatch(/"other" = \{\s*service_account_allow_list = \["other:node-x"\]/);
    // The host's own /var/lib is not the node's.
    await expect(access('/var/lib/spire/server.conf')).rejects.toThrow();
  });

  it('GIVEN drop-files of a hand-off WHEN synced THEN the allow list has their accounts and the server their entries; removed files retire them', async () => {
    const put = await ssh(['sh', '-c', `'mkdir -p /var/lib/spire/k8s/team/entries && printf %s ${Buffer.from(dropFile('team', 'alpha')).toString('base64')} | base64 -d > /var/lib/spire/k8s/team/entries/alpha.json'`]);
    expect(put.exitCode, put.stderr).toBe(0);
    const first = await spireNode('sync');
    expect(first.exitCode, first.stderr).toBe(0);
    const conf = await ssh(['cat', '/var/lib/spire/server.conf']);
    // one cluster per node (<ns>.<node>), with the namespace's kubeconfig
    expect(conf.stdout).toMatch(/"team\.alpha" = \{\s*service_account_allow_list = \["team:node-alpha"\]\s*kube_config_file = "\/var\/lib\/spire\/k8s\/team\/kubeconfig"/);
    expect(conf.stdout).toContain('"fediversity:node-web", "fediversity:node-db"');
    const health = await ssh(['spire-server', 'healthcheck']);
    expect(health.exitCode, health.stderr).toBe(0);
    const shown = await ssh(['spire-server', 'entry', 'show']);
    expect(shown.stdout).toContain('spiffe://fediversity/k8s/team/team/node-alpha');
    expect(shown.stdout).toContain('spiffe://fediversity/host/team-alpha');
    expect(shown.stdout).toContain('k8s_psat:agent_sa:node-alpha');
    expect(shown.stdout).toContain('k8s_psat:cluster:team.alpha');

    // a second sync changes nothing (no duplicate entries, no restart)
    const again = await spireNode('sync');
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stderr).not.toContain('registered');
    expect(again.stderr).not.toContain('restarting');

    await ssh(['rm', '-rf', '/var/lib/spire/k8s/team']);
    const gone = await spireNode('sync');
    expect(gone.exitCode, gone.stderr).toBe(0);
    // The syncer that `up` started (a sync every 2 s after a change) may retire the entries
    // before this sync does (seen under load): the retirement is in one of the two logs.
    const syncerLog = await readFile(join(stateDir, 'spire-node', 'log', 'syncer.log'), 'utf8');
    expect(gone.stderr + syncerLog).toContain('retired spiffe://fediversity/host/team-alpha');
    expect((await ssh(['spire-server', 'entry', 'show'])).stdout).not.toContain('team');
  });

  it('GIVEN up twice THEN the second up keeps the same daemons and status is ok', async () => {
    const before = await pidsOf();
    await up();
    expect(await pidsOf()).toEqual(before);
    const s = await spireNode('status');
    expect(s.exitCode, s.stdout + s.stderr).toBe(0);
    expect(s.stdout).toContain('spire-server: healthy');
  });

  it('GIVEN down THEN no netns, veth, process or state is left, status fails, and up makes the node again', async () => {
    const pids = await pidsOf();
    const oldId = (await ssh(['cat', '/etc/machine-id'])).stdout.trim();
    const oldBundle = (await ssh(['spire-server', 'bundle', 'show'])).stdout;

    const down = await spireNode('down');
    expect(down.exitCode, down.stderr).toBe(0);
    expect((await execa('ip', ['netns', 'list'])).stdout).not.toContain(netns);
    expect((await execa('ip', ['link', 'show', `${netns}-h`], { reject: false })).exitCode).not.toBe(0);
    expect(pids.filter(processRuns)).toEqual([]);
    await expect(access(join(stateDir, 'spire-node'))).rejects.toThrow();
    expect((await spireNode('status')).exitCode).not.toBe(0);

    await up();
    const newId = (await ssh(['cat', '/etc/machine-id'])).stdout.trim();
    expect(newId).toMatch(/^[0-9a-f]{32}$/);
    expect(newId).not.toBe(oldId);
    expect((await ssh(['spire-server', 'bundle', 'show'])).stdout).not.toBe(oldBundle);
  });
});
