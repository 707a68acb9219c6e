/**
 * Workload identity with SPIRE (issue 10, FR-015..017, SC-005) against the real cluster and a
 * test spire node (test/spire/spire-node.sh: spire-server + sshd in their own network
 * namespace): the nodes' agents attest with k8s_psat and hold their host entry's SVID; a
 * second plan changes nothing; a CA rotation reaches the pods; a spire node made again is
 * handed off again (with K8S_SPIRE_API_SERVER set: the kubeconfig names that server) and the
 * agents attest again; an unreachable spire node fails the plan (and the plan of a destroy)
 * naming it; the token stays out of argv, state, graph and output; a destroy removes the
 * namespace's kubeconfig and names from the spire node. Every run has
 * K8S_SPIRE_TOKEN_SECONDS=600, so the pods' projected tokens are renewed while the file runs:
 * the node copies the renewed token for its agent, which attests with it (FR-015).
 *
 * One flow, in order: each step builds on the state of the one before. The pods of the first
 * apply live until the destroy (no step changes their template), which the renewal test needs.
 */
import { chmod, copyFile, mkdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpireCoordinates } from '../../src/config/spire-coordinates.js';
import { loadSpireEnv } from '../spire/spire-env.js';
import { runOnSpireNode } from '../integration/spire-node-ssh.js';
import { spireNames } from '../../src/contract/spire/spire-names.js';
import { buildImage, repoRoot, type BuiltImage } from '../integration/images-scripts.js';
import { withoutRunSlot } from './run-slots.js';
import { DeployHarness, filesUnder, sampleArgv } from './harness.js';

const spireScript = join(repoRoot, 'test/spire/spire-node.sh');
// A node of its own (netns, addresses inside the 10.253.0.0/16 the cluster lets pods reach),
// so the integration tests' spire node never collides with this one.
const NODE_NET = { SPIRE_NODE_NETNS: 'dpl-spe2e', SPIRE_NODE_HOST_IP: '10.253.7.1', SPIRE_NODE_IP: '10.253.7.2' };
const SOCKET = '/run/spire-agent/public/api.sock';
const NODES = ['alpha', 'beta'];
/**
 * K8S_SPIRE_TOKEN_SECONDS of every run here: the shortest life the API server accepts, so that
 * kubelet renews each pod's token (at about 80% of it, 470-480 s) while the file runs.
 */
const TOKEN_SECONDS = 600;
/**
 * How long after the first token's issue a renewed one must be in the pod: kubelet renews at
 * 80% of the life less up to 10 s, and writes the file at its next pod sync, up to about a
 * minute later (540 s in all); the rest is margin for a loaded machine. Counted on this
 * machine's clock from the token's `iat` (the API server's clock: the local cluster runs here).
 */
const RENEWAL_BOUND_MS = 720_000;
/** How long the node may take to copy a renewed token (its .path unit: a second; its timer: a minute). */
const COPY_BOUND_MS = 90_000;
const PROJECTED_TOKEN = '/etc/spire-agent/k8s-token/token';
const AGENT_TOKEN = '/run/spire-agent/token';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const iso = (ms: number) => new Date(ms).toISOString();

/** The claims of a JWT that the renewal test reads (the API server signed it; not verified here). */
function claimsOf(jwt: string): { iat: number; exp: number; sub: string; aud: string[] } {
  const payload = jwt.split('.')[1];
  if (payload === undefined) throw new Error(`not a JWT: ${jwt.slice(0, 40)}...`);
  return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
}

/** The first token of a node's pod, read right after the first apply (FR-015's renewal test compares with it). */
interface FirstToken {
  readonly podUid: string;
  readonly token: string;
  /** The token's `iat`, in ms: kubelet renews it at about 80% of its life from then. */
  readonly issuedAtMs: number;
}

describe('SPIRE: node agents attest with k8s_psat against the spire node', () => {
  let h: DeployHarness;
  let image: BuiltImage;
  let plan: string;
  let spire: SpireCoordinates;
  let spireEnv: Record<string, string> = {};
  let nodeEnv: NodeJS.ProcessEnv;

  /** `spire-node.sh <verb>` with this suite's node; `up` loads the coordinates it writes. */
  async function spireNode(verb: string): Promise<string> {
    const r = await execa('bash', [spireScript, verb], { env: nodeEnv, reject: false, timeout: 300_000 });
    if (r.exitCode !== 0) throw new Error(`spire-node.sh ${verb} failed (${r.exitCode}):\n${r.stderr}`);
    if (verb === 'up') {
      const { vars, spire: coordinates } = await loadSpireEnv(r.stdout.trim().split('\n').pop()!);
      spireEnv = {
        K8S_SPIRE_NODE: vars.K8S_SPIRE_NODE!,
        SSH_USER: vars.SSH_USER!,
        SSH_PRIVATE_KEY_FILE: vars.SSH_PRIVATE_KEY_FILE!,
        SSH_NODES: vars.SSH_NODES!,
        K8S_SPIRE_TOKEN_SECONDS: String(TOKEN_SECONDS),
      };
      spire = coordinates;
    }
    return r.stdout;
  }

  const onSpire = async (script: string) => (await runOnSpireNode(spire, ['sh', '-c', `'${script.replaceAll("'", "'\\''")}'`])).stdout;
  /**
   * A `spire-server` command on the spire node. The test node's syncer (test/spire/lib/sync.sh)
   * restarts spire-server whenever a hand-off changes its k8s_psat clusters, so for a few seconds
   * after an apply its API socket is gone: tried again every 2 s while the answer says the API is
   * unavailable, for at most 90 s; any other failure is thrown at once.
   */
  const spireServer = async (args: string): Promise<string> => {
    const deadline = Date.now() + 90_000;
    for (;;) {
      try {
        return await onSpire(`spire-server ${args}`);
      } catch (e) {
        const restarting = /code = Unavailable|api\.sock/.test(String(e));
        if (!restarting || Date.now() > deadline) throw e;
        await sleep(2000);
      }
    }
  };
  const deploy = (verb: string, args: string[] = [], opts: { json?: boolean; env?: Record<string, string> } = {}) =>
    h.deploy(verb, plan, ['--target', 'all', ...args], { ...spireEnv, ...opts.env }, opts.json === undefined ? {} : { json: opts.json });

  /**
   * FR-017's K8S_SPIRE_API_SERVER: the API server as the spire node reaches it, written
   * otherwise than the kubeconfig's server, so that the kubeconfig handed off shows which one
   * the hand-off took. The same IPv4 address as an IPv4-mapped IPv6 address
   * (`https://10.255.254.1:6443` -> `https://[::ffff:10.255.254.1]:6443`): the spire node's
   * network namespace reaches it as it reaches the kubeconfig's address (its default route
   * goes through this host, which has that address: test/spire/lib/network.sh), and the
   * server's certificate covers it (its IP SAN is that address, test/cluster/lib/pki.sh; Go's
   * TLS takes an IPv4-mapped address as the IPv4 one, and dials it over IPv4).
   */
  async function apiServerOtherwise(): Promise<string> {
    const server = (await h.kubectlOk(['config', 'view', '--minify', '-o', 'jsonpath={.clusters[0].cluster.server}'], { namespace: null })).trim();
    const url = new URL(server);
    if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(url.hostname)) throw new Error(`the kubeconfig's server ${server} is no IPv4 address, which this test writes as an IPv4-mapped IPv6 address`);
    return `https://[::ffff:${url.hostname}]:${url.port || '443'}`;
  }

  /** The certificates of a PEM text, as a sorted list of their base64 bodies (order and spacing do not matter). */
  const certificates = (pem: string) => [...pem.matchAll(/-----BEGIN CERTIFICATE-----([^-]+)-----END CERTIFICATE-----/g)].map((m) => m[1]!.replace(/\s+/g, '')).sort();

  /**
   * Waits until the node's agent gives root its host entry's X.509 SVID; returns what it printed.
   * With `bundle` (the server's `bundle show -format pem`), also until the agent's trust bundle is
   * that one: an agent that has not yet restarted for a new server still serves its cached SVID
   * of the same SPIFFE ID, signed by the server that is gone.
   */
  async function svidOf(node: string, timeoutMs = 180_000, bundle?: string): Promise<string> {
    const want = spireNames.hostEntry(h.namespace, node);
    const wantBundle = bundle === undefined ? undefined : certificates(bundle);
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      const script = `d=$(mktemp -d) && spire-agent api fetch x509 -socketPath ${SOCKET} -write "$d" && echo '--- bundle' && cat "$d/bundle.0.pem"; rc=$?; rm -rf "$d"; exit $rc`;
      const r = await h.kubectl(['exec', `deploy/${node}`, '-c', 'node', '--', 'sh', '-c', script]);
      last = `${r.stdout}\n${r.stderr}`;
      const [printed = '', agentBundle = ''] = r.stdout.split('\n--- bundle\n');
      const bundleOk = wantBundle === undefined || JSON.stringify(certificates(agentBundle)) === JSON.stringify(wantBundle);
      if (r.exitCode === 0 && printed.includes(want) && bundleOk) return printed;
      await sleep(2000);
    }
    const journal = await h.kubectl(['exec', `deploy/${node}`, '-c', 'node', '--', 'journalctl', '-u', 'spire-agent', '-n', '30', '--no-pager']);
    const of = bundle === undefined ? '' : ' under the spire server\'s current bundle';
    throw new Error(`node ${node}: no SVID ${want}${of} within ${timeoutMs / 1000}s; last fetch:\n${last}\nagent journal:\n${journal.stdout}`);
  }

  /** The agents the spire server knows, as `<attestation type> <spiffe id>` lines. */
  async function agents(): Promise<string> {
    return spireServer('agent list');
  }

  /**
   * The fields of the node's agent in `spire-server agent list` (`SPIFFE ID`, `Attestation
   * type`, `Serial number`, ...): the one of k8s_psat cluster `<ns>.<node>`; undefined when the
   * server lists none.
   */
  async function agentOf(node: string): Promise<Record<string, string> | undefined> {
    const id = `/spire/agent/k8s_psat/${h.namespace}.${node}/`;
    for (const block of (await agents()).split(/\n\s*\n/)) {
      const fields = Object.fromEntries([...block.matchAll(/^([^:\n]+?)\s+: (.*)$/gm)].map((m) => [m[1]!.trim(), m[2]!.trim()]));
      if (fields['SPIFFE ID']?.includes(id)) return fields;
    }
    return undefined;
  }

  /** The pod's projected token (root only) and the agent's copy of it, as they are now. */
  async function tokensOf(node: string): Promise<{ token: string; copy: string }> {
    const [token = '', copy = ''] = (await h.exec(node, `cat ${PROJECTED_TOKEN}; echo; echo ---; cat ${AGENT_TOKEN}; echo`)).split('\n---\n').map((t) => t.trim());
    return { token, copy };
  }

  /** The last lines of the units that copy the token, for a failure's message. */
  const copyJournal = async (node: string) =>
    (await h.kubectl(['exec', `deploy/${node}`, '-c', 'node', '--', 'journalctl', '-u', 'spire-agent-token.path', '-u', 'spire-agent-token.service', '-u', 'spire-agent-token.timer', '-n', '30', '--no-pager'])).stdout;

  const firstTokens = new Map<string, FirstToken>();

  beforeAll(async () => {
    h = await DeployHarness.create('spire');
    nodeEnv = { ...process.env, ...NODE_NET, DEPLOY_STATE_DIR: join(h.dir, 'spire-node') };
    image = await buildImage('spire');
    await spireNode('up');
    // the roster names the spire node of the central group, as the SPIRE coordinates do; each
    // node declares that it needs an identity (src/config/identity-rules.ts)
    plan = await h.writePlan('group', Object.fromEntries(NODES.map((n) => [n, { image, identity: true }])), { roster: { spiffeProvider: { group: 'central', node: 'spire' } } });
  });

  afterAll(async () => {
    await execa('bash', [spireScript, 'down'], { env: nodeEnv, reject: false });
    await h?.cleanup();
  });

  it('SC-005: after apply, each node agent holds its host entry SVID and the server lists the agents with k8s_psat; the token stays secret', async () => {
    const seen = new Set<string>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        await sampleArgv(seen);
        await sleep(50);
      }
    })();
    const r = await deploy('apply', [], { json: false });
    sampling = false;
    await sampler;
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect([...seen].some((c) => c.includes('rollout --namespace'))).toBe(true); // sampled while the run was live

    for (const n of NODES) {
      const svid = await svidOf(n);
      expect(svid).toMatch(new RegExp(`SPIFFE ID:\\s+${spireNames.hostEntry(h.namespace, n)}\\n`));
      // only root reads the projected token; the agent runs as its own user on a copy
      const modes = await h.exec(n, 'stat -L -c "%a %U" /etc/spire-agent/k8s-token/token; systemctl show -p User --value spire-agent.service');
      expect(modes.split('\n')[0]).toBe('400 root');
      expect(modes.split('\n')[1]).toMatch(/^(?!root$)\S+$/);
    }
    const list = await agents();
    expect(list.match(/Attestation type\s+: k8s_psat/g)?.length).toBe(NODES.length);

    // the kubeconfig on the spire node: mode 0600, with a token of spire-server
    const dir = spireNames.namespaceDir(h.namespace);
    expect((await onSpire(`stat -c %a ${spireNames.kubeconfig(h.namespace)}`)).trim()).toBe('600');
    const kubeconfig = await onSpire(`cat ${spireNames.kubeconfig(h.namespace)}`);
    const token = /token: (\S+)/.exec(kubeconfig)?.[1];
    expect(token?.length).toBeGreaterThan(100);
    expect((await onSpire(`ls ${dir}/entries`)).split('\n').filter(Boolean).sort()).toEqual(NODES.map((n) => `${n}.json`));

    // the token: never in argv, stdout, stderr, the state (the embedded backend's data) or the graph
    const haystacks: [string, Buffer | string][] = [
      ['stdout', r.stdout],
      ['stderr', r.stderr],
      ['argv', [...seen].join('\n')],
    ];
    for (const f of await filesUnder(join(h.dir, 'state'))) haystacks.push([f, await readFile(f)]);
    expect(haystacks.length).toBeGreaterThan(5);
    expect(haystacks.filter(([, text]) => text.includes(token!)).map(([where]) => where)).toEqual([]);
    // nor the path of the key (each run stages its own copy)
    expect(haystacks.filter(([where, text]) => where !== 'argv' && text.includes(spireEnv.SSH_PRIVATE_KEY_FILE!)).map(([where]) => where)).toEqual([]);
  });

  it(`FR-015: right after apply, each agent runs on a root-made copy of its pod's projected token of node-<node> (audience spire-server, ${TOKEN_SECONDS} s as K8S_SPIRE_TOKEN_SECONDS says), and the node watches the token for its renewal (spire-agent-token.path)`, async () => {
    for (const n of NODES) {
      const pod = await h.podOf(n);
      const { token, copy } = await tokensOf(n);
      const claims = claimsOf(token);
      expect(claims.sub).toBe(`system:serviceaccount:${h.namespace}:node-${n}`);
      expect(claims.aud).toEqual(['spire-server']);
      expect(claims.exp - claims.iat, "the projected token's life").toBe(TOKEN_SECONDS);
      expect(copy, "the agent's copy").toBe(token);
      // (is-active exits non-zero when one is not: its answer is the assertion)
      const watching = await h.kubectl(['exec', `deploy/${n}`, '-c', 'node', '--', 'systemctl', 'is-active', 'spire-agent-token.path', 'spire-agent-token.timer']);
      expect(watching.stdout.split('\n'), `node ${n}: spire-agent-token.path and .timer (${watching.stderr})`).toEqual(['active', 'active']);
      firstTokens.set(n, { podUid: pod.metadata.uid, token, issuedAtMs: claims.iat * 1000 });
      console.log(`FR-015 renewal: ${n}: first token issued ${iso(claims.iat * 1000)}, expires ${iso(claims.exp * 1000)}; kubelet renews it at about ${iso((claims.iat + 0.8 * TOKEN_SECONDS) * 1000)} (checked later in this file)`);
    }
  });

  it('a second plan after apply shows no changes (the bundle read does not churn)', async () => {
    const p = await deploy('plan');
    expect(p.exitCode, p.stderr).toBe(0);
    expect(p.json.targets[0].changes).toBe(false);
  });

  it('GIVEN SSH_PRIVATE_KEY_FILE and the group plan named relative to another working directory THEN the full plan (its SPIRE steps read the bundle over ssh from the graph directory) finds the key: no changes (issue 46)', async () => {
    const cwd = join(h.dir, 'elsewhere', 'deeper');
    await mkdir(cwd, { recursive: true });
    const key = join(h.dir, 'elsewhere', 'spire-key');
    await copyFile(spireEnv.SSH_PRIVATE_KEY_FILE!, key);
    await chmod(key, 0o600);
    const env = { ...spireEnv, SSH_PRIVATE_KEY_FILE: relative(cwd, key), DEPLOY_FAST_PLAN: 'off' };
    const p = await h.deploy('plan', relative(cwd, plan), ['--target', 'all'], env, { cwd });
    expect(p.exitCode, p.stderr).toBe(0);
    expect(p.stderr).toContain('tofu plan');
    expect(p.json.targets[0].changes, p.stdout).toBe(false);
  });

  it('edge "no roster has a spiffe provider": without the SPIRE coordinates the same plan is refused (exit 2) naming each node and the roster, and nothing changes', async () => {
    const before = await h.kubectlOk(['get', 'deploy', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.metadata.generation} {end}']);
    const r = await h.deploy('apply', plan, ['--target', 'all'], {}, { json: false });
    expect(r.exitCode, r.stderr).toBe(2);
    for (const n of NODES) expect(r.stderr).toContain(`$.nodes.${n}.identity: node "${n}" needs a workload identity, and the SPIRE coordinates are not set`);
    expect(r.stderr).toContain('$.roster.spiffeProvider and K8S_SPIRE_NODE: the roster names the spiffe provider "central/spire", but K8S_SPIRE_NODE is not set');
    expect(r.stdout).toBe('');
    expect(await h.kubectlOk(['get', 'deploy', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.metadata.generation} {end}'])).toBe(before);
  });

  it('CA rotation: the next plan changes the ConfigMap; after apply the pods have the new bundle and an SVID', async () => {
    const before = await spireServer('bundle show -format pem');
    await spireNode('rotate-ca');
    const after = await spireServer('bundle show -format pem');
    expect(after).not.toBe(before);

    const p = await deploy('plan');
    expect(p.exitCode, p.stderr).toBe(0);
    expect(p.json.targets[0].changes).toBe(true);
    expect(p.json.targets[0].other.map((o: any) => `${o.address} ${o.change}`).join('\n')).toMatch(/config_map.*update/);
    // no node is restarted for it: kubelet updates the mounted ConfigMap in place
    expect(p.json.targets[0].nodes.map((n: any) => n.words)).toEqual(NODES.map(() => 'no change'));

    const a = await deploy('apply', [], { json: false });
    expect(a.exitCode, a.stderr).toBe(0);
    const want = `${after.trim()}\n`;
    for (const n of NODES) {
      const deadline = Date.now() + 180_000;
      let inPod = '';
      while (Date.now() < deadline && inPod.trim() !== want.trim()) {
        inPod = await h.exec(n, 'cat /etc/spire-agent/bundle/bundle.crt');
        if (inPod.trim() !== want.trim()) await sleep(3000);
      }
      expect(inPod.trim()).toBe(want.trim());
      await svidOf(n, 180_000, after);
    }
  });

  it("spire node made again (new machine ID, CA and host key): the next plan replaces the hand-off; after apply the agents attest again; with K8S_SPIRE_API_SERVER set (FR-017), the namespace's kubeconfig on the spire node names that server (less its trailing slash), and the agents attest through it", async () => {
    const oldId = (await onSpire('cat /etc/machine-id')).trim();
    await execa('bash', [spireScript, 'down'], { env: nodeEnv });
    await spireNode('up');
    expect((await onSpire('cat /etc/machine-id')).trim()).not.toBe(oldId);
    expect(await agents()).not.toMatch(/k8s_psat/); // a new server knows no agent

    // the hand-off is replaced anyway (a new machine ID): it takes the API server from the
    // environment this time, given with a trailing slash that the coordinates drop
    const apiServer = await apiServerOtherwise();
    const env = { K8S_SPIRE_API_SERVER: `${apiServer}/` };
    const p = await deploy('plan', [], { env });
    expect(p.exitCode, p.stderr).toBe(0);
    expect(p.json.targets[0].other.map((o: any) => `${o.address} ${o.change}`).join('\n')).toMatch(/handoff.* replace/);

    const a = await deploy('apply', [], { json: false, env });
    expect(a.exitCode, a.stderr).toBe(0);
    // FR-017: the kubeconfig the spire server reads for the namespace names that server (not
    // the kubeconfig's own text), and the attestations below go through it (k8s_psat reviews
    // each agent's token at the API server of that kubeconfig)
    const handedOff = await onSpire(`cat ${spireNames.kubeconfig(h.namespace)}`);
    expect(/^\s*server: (\S+)$/m.exec(handedOff)?.[1], 'the server of the kubeconfig on the spire node').toBe(apiServer);
    // the agents restart when kubelet brings the new bundle into the pod (spire-agent-bundle.path);
    // until then each still serves its cached SVID from the old server: wait for the new bundle
    const bundle = await spireServer('bundle show -format pem');
    for (const n of NODES) await svidOf(n, 240_000, bundle);
    expect((await agents()).match(/Attestation type\s+: k8s_psat/g)?.length).toBe(NODES.length);
  });

  // Late in the file, so that the wait for kubelet's renewal overlaps the tests above; before
  // the spire node goes away (the agents must attest again here).
  it(`FR-015 renewal: kubelet writes a renewed projected token into each pod (a ${TOKEN_SECONDS} s token), the node copies it for the agent within 90 s, and the agent restarted on that copy attests again with k8s_psat`, async () => {
    // minutes of polls on kubelet's clock, then two agent restarts: the file's run slot goes to
    // another file meanwhile (run-slots.ts), and the copy's 90 s are timed without a slot's wait
    await withoutRunSlot('waits for kubelet to renew its pods\' tokens (FR-015)', () => renewalOfEachNode());
  }, 1_200_000);

  async function renewalOfEachNode(): Promise<void> {
    for (const n of NODES) {
      const first = firstTokens.get(n);
      if (first === undefined) throw new Error(`node ${n}: no first token was read (the FR-015 test right after apply failed or did not run)`);
      const uid = (await h.podOf(n)).metadata.uid;
      expect(uid, `node ${n}: its pod was replaced since the first token was read, so no renewal can be seen; this test needs the first apply's pods`).toBe(first.podUid);

      // 1. kubelet's renewal: the projected file holds another token
      const renewBy = first.issuedAtMs + RENEWAL_BOUND_MS;
      console.log(`FR-015 renewal: ${n}: waiting until ${iso(renewBy)} at the latest for a renewed projected token (the first issued ${iso(first.issuedAtMs)}, renewed at about ${iso(first.issuedAtMs + 0.8 * TOKEN_SECONDS * 1000)})`);
      let now = await tokensOf(n);
      let said = Date.now();
      while (now.token === first.token && Date.now() < renewBy) {
        if (Date.now() - said >= 30_000) {
          console.log(`FR-015 renewal: ${n}: still the first token, ${Math.round((Date.now() - first.issuedAtMs) / 1000)} s after its issue; waiting`);
          said = Date.now();
        }
        await sleep(5000);
        now = await tokensOf(n);
      }
      const seenAt = Date.now();
      expect(now.token, `node ${n}: the projected token was not renewed within ${RENEWAL_BOUND_MS / 1000} s of its issue (${iso(first.issuedAtMs)})`).not.toBe(first.token);
      const renewed = claimsOf(now.token);
      expect(renewed.sub).toBe(`system:serviceaccount:${h.namespace}:node-${n}`);
      expect(renewed.exp - renewed.iat).toBe(TOKEN_SECONDS);
      console.log(`FR-015 renewal: ${n}: renewed token seen ${Math.round((seenAt - first.issuedAtMs) / 1000)} s after the first one's issue (the new one issued ${iso(renewed.iat * 1000)}); waiting up to ${COPY_BOUND_MS / 1000} s for the agent's copy`);

      // 2. the node's copy follows (spire-agent-token.path, or its timer)
      while (now.copy !== now.token && Date.now() < seenAt + COPY_BOUND_MS) {
        await sleep(2000);
        now = await tokensOf(n);
      }
      if (now.copy !== now.token) {
        const which = now.copy === first.token ? 'still the first token' : 'neither token';
        throw new Error(`node ${n}: ${AGENT_TOKEN} is ${which}, ${COPY_BOUND_MS / 1000} s after the renewed token was seen in ${PROJECTED_TOKEN}; the copy units' journal:\n${await copyJournal(n)}`);
      }
      console.log(`FR-015 renewal: ${n}: the copy is the renewed token ${Math.round((Date.now() - seenAt) / 1000)} s after it was seen; restarting spire-agent to attest with it`);

      // 3. the agent attests with the copy: restarted, it starts from an empty data dir
      // (spire-agent-setup prepare), so its SVID comes from a new k8s_psat attestation, which
      // the server records with a new serial number
      const before = await agentOf(n);
      expect(before?.['Serial number'], `node ${n}: the spire server lists no agent for it before the restart`).toMatch(/^\S+$/);
      await h.exec(n, 'systemctl restart spire-agent.service');
      const svid = await svidOf(n);
      expect(svid).toMatch(new RegExp(`SPIFFE ID:\\s+${spireNames.hostEntry(h.namespace, n)}\\n`));
      const after = await agentOf(n);
      expect(after?.['Attestation type'], `node ${n}: the server's record of its agent after the restart`).toBe('k8s_psat');
      expect(after?.['Serial number'], `node ${n}: the agent's SVID serial on the server did not change: no new attestation was recorded`).not.toBe(before?.['Serial number']);
      expect((await tokensOf(n)).copy, 'the copy the agent attested with').toBe(now.token);
      console.log(`FR-015 renewal: ${n}: attested again with the renewed token (serial ${before?.['Serial number']} -> ${after?.['Serial number']})`);
    }
  }

  it('spire node unreachable: plan and the plan of a destroy fail naming it, and change nothing', async () => {
    // `down` removes the node's key with it: keep a copy, so that only the node is missing
    const key = join(h.dir, 'spire-key');
    await copyFile(spireEnv.SSH_PRIVATE_KEY_FILE!, key);
    await chmod(key, 0o600);
    spireEnv = { ...spireEnv, SSH_PRIVATE_KEY_FILE: key };
    await execa('bash', [spireScript, 'down'], { env: nodeEnv });
    const p = await deploy('plan', [], { json: false });
    expect(p.exitCode).not.toBe(0);
    expect(p.stderr).toContain(`spire node ${spire.node}`);
    const d = await deploy('destroy', [], { json: false });
    expect(d.exitCode).not.toBe(0);
    expect(d.stderr).toContain(`spire node ${spire.node}`);
    expect((await h.kubectl(['get', 'namespace', h.namespace], { namespace: null })).exitCode).toBe(0);
    for (const n of NODES) expect((await h.podOf(n)).status.phase).toBe('Running');
  });

  it('destroy removes the namespace kubeconfig and names from the spire node', async () => {
    await spireNode('up');
    // the new node gets the hand-off first, so that there is something to remove
    const a = await deploy('apply', [], { json: false });
    expect(a.exitCode, a.stderr).toBe(0);
    expect((await onSpire(`ls ${spireNames.namespaceDir(h.namespace)}`)).split('\n')).toContain('kubeconfig');

    const d = await deploy('destroy', [], { json: false });
    expect(d.exitCode, d.stderr).toBe(0);
    expect((await onSpire(`test -e ${spireNames.namespaceDir(h.namespace)} && echo present || echo gone`)).trim()).toBe('gone');
    // the node's syncer retires the entries of a namespace whose directory is gone
    const deadline = Date.now() + 60_000;
    let entries = '';
    do {
      entries = await spireServer('entry show');
      if (!entries.includes(h.namespace)) break;
      await sleep(2000);
    } while (Date.now() < deadline);
    expect(entries).not.toContain(h.namespace);
  });
});
