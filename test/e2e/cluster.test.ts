/**
 * Acceptance of the local single-node cluster (issue 6) against the running cluster that the
 * e2e global setup brought up: stages and idempotent `up`; systemd node pods in their own
 * user namespace (RuntimeClass `systemd`, `hostUsers: false`) from images pushed with
 * skopeo and run by digest; the broken image's failed unit in the events; a claim that
 * outlives its pod; NetworkPolicy; and `down` leaving nothing behind (then `up` again).
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildImage, type BuiltImage } from '../integration/images-scripts.js';
import { parseExports, stateDir } from './global-setup.js';
import { cacheDir } from '../../src/paths.js';
import { VERSIONS } from '../../src/tools/versions.js';
import { graphNodeObjects } from '../support/graph-node.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const clusterScript = `${repoRoot}test/cluster/cluster.sh`;
const archiveScript = `${repoRoot}test/cluster/images/lib/docker-archive.sh`;

const env = inject('clusterEnv');
const registry = env.K8S_REGISTRY ?? '';
const stamp = randomUUID().slice(0, 8);
const nsA = `e2e-cluster-a-${stamp}`;
const nsB = `e2e-cluster-b-${stamp}`;

async function kubectlPath(): Promise<string> {
  return join(cacheDir(), 'kubernetes', VERSIONS.KUBERNETES_VERSION ?? '', 'kubectl');
}
let kubectlBin: string;

async function kubectl(args: string[], input?: string) {
  return execa(kubectlBin, ['--kubeconfig', env.KUBE_CONFIG_PATH ?? '', ...args], {
    input, reject: false, timeout: 180_000,
  });
}
async function kubectlOk(args: string[], input?: string): Promise<string> {
  const r = await kubectl(args, input);
  if (r.exitCode !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.exitCode}): ${r.stderr}`);
  return r.stdout;
}
async function getJson<T>(args: string[]): Promise<T> {
  return JSON.parse(await kubectlOk([...args, '-o', 'json'])) as T;
}

/** Polls fn until it returns a value other than undefined, or fails after `ms`. */
async function waitFor<T>(what: string, ms: number, fn: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  let delay = 100;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 1000);
  }
}

/** skopeo copy docker-archive -> the loopback registry; returns `<repo>@<digest>`. */
async function push(archive: string, repo: string, tag: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'e2e-push-'));
  try {
    const digestFile = join(dir, 'digest');
    await execa('skopeo', ['copy', '--dest-tls-verify=false', '--digestfile', digestFile,
      `docker-archive:${archive}`, `docker://${registry}/${repo}:${tag}`], { timeout: 300_000 });
    const digest = (await readFile(digestFile, 'utf8')).trim();
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    return `${registry}/${repo}@${digest}`;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A busybox image (Debian's busybox-static) for the NetworkPolicy pods. */
async function busyboxArchive(dir: string): Promise<string> {
  const out = join(dir, 'busybox.tar');
  const applets = ['sh', 'httpd', 'wget', 'sleep', 'cat', 'mkdir', 'echo', 'id', 'timeout'];
  await execa('bash', [archiveScript, 'deploy.local/busybox:e2e', '--file', '/bin/busybox:/bin/busybox',
    ...applets.flatMap((a) => ['--symlink', `busybox:/bin/${a}`]), '--cmd', '["/bin/sh"]'],
  { env: { BUILD_OUT: out }, timeout: 60_000 });
  return out;
}

interface PodList { items: { metadata: { name: string; deletionTimestamp?: string }; status: { podIP?: string; conditions?: { type: string; status: string }[] } }[] }

async function readyPod(ns: string, name: string): Promise<string> {
  return waitFor(`a Ready pod of ${ns}/${name}`, 180_000, async () => {
    const pods = await getJson<PodList>(['-n', ns, 'get', 'pods', '-l', `app.kubernetes.io/name=${name}`]);
    const ready = pods.items.find((p) => p.metadata.deletionTimestamp === undefined &&
      p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    return ready?.metadata.name;
  });
}

async function exec(ns: string, pod: string, command: string[]) {
  return kubectl(['-n', ns, 'exec', pod, '--', ...command]);
}

let work: string;
let good: BuiltImage;
let broken: BuiltImage;

beforeAll(async () => {
  kubectlBin = await kubectlPath();
  expect(registry, 'K8S_REGISTRY from cluster.env').toMatch(/^127\.0\.0\.1:\d+$/);
  work = await mkdtemp(join(tmpdir(), 'e2e-cluster-'));
  [good, broken] = [await buildImage('good'), await buildImage('broken')];
  for (const ns of [nsA, nsB]) await kubectlOk(['create', 'namespace', ns]);
  // Pods need the namespace's default ServiceAccount, made by the controller-manager.
  for (const ns of [nsA, nsB]) {
    await waitFor(`serviceaccount default in ${ns}`, 30_000, async () =>
      (await kubectl(['-n', ns, 'get', 'serviceaccount', 'default'])).exitCode === 0 ? true : undefined);
  }
}, 1_800_000);

afterAll(async () => {
  if (kubectlBin !== undefined) {
    await kubectl(['delete', 'namespace', nsA, nsB, '--wait=false', '--ignore-not-found']);
  }
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

describe('the local cluster', () => {
  it('status reports every stage up, and a second up is idempotent and fast', async () => {
    // GIVEN the cluster the global setup brought up
    const status = await execa('bash', [clusterScript, 'status'], { reject: false });
    expect(status.exitCode, status.stdout).toBe(0);
    for (const stage of ['a etcd', 'a kube-apiserver', 'a kube-controller-manager', 'a kube-scheduler',
      'b containerd', 'b pause-image', 'b kubelet', 'b node', 'c runtimeclass systemd', 'd kube-router']) {
      expect(status.stdout).toMatch(new RegExp(`^${stage.replaceAll(' ', '\\s+')}\\s.*\\sup\\s`, 'm'));
    }
    const pidfiles = async () => {
      const dir = join(stateDir(), 'run');
      const out: Record<string, string> = {};
      for (const f of await readdir(dir)) out[f] = await readFile(join(dir, f), 'utf8');
      return out;
    };
    const before = await pidfiles();
    // WHEN up runs again
    const t0 = performance.now();
    const up = await execa('bash', [clusterScript, 'up'], { reject: false, timeout: 120_000 });
    const ms = performance.now() - t0;
    // THEN it succeeds within seconds, prints the kubeconfig, and every daemon is the same process
    expect(up.exitCode, up.stderr).toBe(0);
    expect(parseExports(up.stdout).KUBE_CONFIG_PATH).toBe(env.KUBE_CONFIG_PATH);
    expect(ms).toBeLessThan(20_000);
    expect(await pidfiles()).toEqual(before);
  });

  describe('systemd node pods (RuntimeClass systemd, hostUsers: false, images by digest)', () => {
    const uuid = randomUUID();
    let goodRef: string;

    it('runs the good image pushed with skopeo, by digest, to Ready', async () => {
      // GIVEN the good image pushed to the loopback registry
      goodRef = await push(good.archive, `${nsA}/good`, good.tag);
      // WHEN its Deployment (with its state claim) is applied
      await kubectlOk(['apply', '-f', '-'], graphNodeObjects({ namespace: nsA, node: 'good', image: goodRef, machineId: uuid }));
      // THEN the claim binds and the pod becomes Ready, running that digest
      const phase = await waitFor('claim good-state bound', 30_000, async () => {
        const p = (await kubectl(['-n', nsA, 'get', 'pvc', 'good-state', '-o', 'jsonpath={.status.phase}'])).stdout;
        return p === 'Bound' ? p : undefined;
      });
      expect(phase).toBe('Bound');
      const pod = await readyPod(nsA, 'good');
      const imageId = await kubectlOk(['-n', nsA, 'get', 'pod', pod, '-o', 'jsonpath={.status.containerStatuses[0].imageID}']);
      expect(imageId).toContain(goodRef.split('@')[1]);
    });

    it('gives systemd its own user namespace and container_uuid as machine ID', async () => {
      const pod = await readyPod(nsA, 'good');
      // THEN uid 0 in the pod is not uid 0 of the host
      const uidMap = await exec(nsA, pod, ['cat', '/proc/1/uid_map']);
      expect(uidMap.exitCode, uidMap.stderr).toBe(0);
      const [inside, outside] = uidMap.stdout.trim().split(/\s+/);
      expect(inside).toBe('0');
      expect(Number(outside)).toBeGreaterThan(0);
      // AND PID 1 is systemd, running
      const state = await exec(nsA, pod, ['systemctl', 'is-system-running']);
      expect(state.stdout.trim()).toBe('running');
      // AND the machine ID is container_uuid (without dashes)
      const machineId = await exec(nsA, pod, ['cat', '/etc/machine-id']);
      expect(machineId.stdout.trim()).toBe(uuid.replaceAll('-', ''));
    });

    it('keeps a file written to /var/lib (the claim) across deleting the pod', async () => {
      const first = await readyPod(nsA, 'good');
      const marker = `survives-${stamp}`;
      const write = await exec(nsA, first, ['/bin/sh', '-c', `echo ${marker} > /var/lib/e2e-marker && sync`]);
      expect(write.exitCode, write.stderr).toBe(0);
      // WHEN the pod is deleted (the Deployment makes a new one, in a new uid range)
      await kubectlOk(['-n', nsA, 'delete', 'pod', first, '--wait=true', '--timeout=60s']);
      const second = await readyPod(nsA, 'good');
      expect(second).not.toBe(first);
      // THEN the new pod reads the file
      const read = await exec(nsA, second, ['cat', '/var/lib/e2e-marker']);
      expect(read.stdout.trim()).toBe(marker);
    });

    it('keeps the broken image NotReady and names its failed unit in the events', async () => {
      // GIVEN the broken image (a unit that always fails) pushed and deployed
      const ref = await push(broken.archive, `${nsA}/broken`, broken.tag);
      await kubectlOk(['apply', '-f', '-'], graphNodeObjects({ namespace: nsA, node: 'broken', image: ref, machineId: randomUUID() }));
      // THEN a readiness-probe event carries `degraded` and the failed unit's name
      const message = await waitFor('an Unhealthy event naming broken.service', 120_000, async () => {
        const events = await getJson<{ items: { reason: string; message: string; involvedObject: { name: string } }[] }>(
          ['-n', nsA, 'get', 'events', '--field-selector', 'reason=Unhealthy']);
        return events.items.find((e) => e.involvedObject.name.startsWith('broken-') &&
          e.message.includes('broken.service'))?.message;
      });
      expect(message).toContain('systemd: degraded');
      // AND the pod is not Ready
      const pods = await getJson<PodList>(['-n', nsA, 'get', 'pods', '-l', 'app.kubernetes.io/name=broken']);
      expect(pods.items.length).toBe(1);
      const ready = pods.items[0]?.status.conditions?.find((c) => c.type === 'Ready');
      expect(ready?.status).toBe('False');
    });
  });

  it('enforces a same-namespace-only NetworkPolicy: another namespace cannot connect, the same one can', async () => {
    // GIVEN a web server in A, a client in A and a client in B (busybox, pushed by digest)
    const ref = await push(await busyboxArchive(work), `${nsA}/busybox`, 'e2e');
    const pod = (ns: string, name: string, command: string) => JSON.stringify({
      apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, labels: { app: name } },
      spec: {
        hostUsers: false, automountServiceAccountToken: false, terminationGracePeriodSeconds: 1,
        containers: [{ name: 'main', image: ref, command: ['/bin/sh', '-c', command] }],
      },
    });
    await kubectlOk(['apply', '-f', '-'], pod(nsA, 'web', 'mkdir -p /www && echo hello > /www/index.html && exec httpd -f -p 8080 -h /www'));
    await kubectlOk(['apply', '-f', '-'], pod(nsA, 'client', 'exec sleep 3600'));
    await kubectlOk(['apply', '-f', '-'], pod(nsB, 'client', 'exec sleep 3600'));
    for (const [ns, name] of [[nsA, 'web'], [nsA, 'client'], [nsB, 'client']] as const) {
      await kubectlOk(['-n', ns, 'wait', `pod/${name}`, '--for=condition=Ready', '--timeout=120s']);
    }
    const ip = await kubectlOk(['-n', nsA, 'get', 'pod', 'web', '-o', 'jsonpath={.status.podIP}']);
    // Busybox 1.35's `wget -T` crashes (SIGSEGV); `timeout` bounds a connection that hangs.
    const fetch = (ns: string) => exec(ns, 'client', ['timeout', '5', 'wget', '-q', '-O', '-', `http://${ip}:8080/`]);
    // Without a policy both namespaces connect (so a later failure is the policy's doing).
    await waitFor('the web server to answer', 30_000, async () => ((await fetch(nsA)).exitCode === 0 ? true : undefined));
    expect((await fetch(nsB)).stdout.trim()).toBe('hello');
    // WHEN a policy admits ingress only from pods of the same namespace
    await kubectlOk(['apply', '-f', '-'], JSON.stringify({
      apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy',
      metadata: { name: 'same-namespace', namespace: nsA },
      spec: { podSelector: {}, policyTypes: ['Ingress'], ingress: [{ from: [{ podSelector: {} }] }] },
    }));
    // THEN B cannot connect (refused or timed out) and A still can
    await waitFor('the policy to block namespace B', 30_000, async () => ((await fetch(nsB)).exitCode !== 0 ? true : undefined));
    expect((await fetch(nsB)).exitCode).not.toBe(0);
    const fromA = await fetch(nsA);
    expect(fromA.exitCode, fromA.stderr).toBe(0);
    expect(fromA.stdout.trim()).toBe('hello');
  });

  it('drops pod traffic to anything outside the machine at the node (nothing leaves)', async () => {
    // GIVEN the client pod of namespace B and the host's default gateway as an outside address
    const route = (await execa('ip', ['-4', 'route', 'show', 'default'])).stdout;
    const gateway = /via (\S+)/.exec(route)?.[1];
    expect(gateway, route).toBeDefined();
    const rejected = async () => {
      const out = (await execa('iptables', ['-w', '5', '-t', 'mangle', '-L', 'DEPLOY-CLUSTER-EGRESS', '-v', '-x', '-n'])).stdout;
      const rule = out.split('\n').find((l) => l.includes('DROP'));
      return Number(rule?.trim().split(/\s+/)[0] ?? NaN);
    };
    const before = await rejected();
    // WHEN it connects to the outside address
    const r = await exec(nsB, 'client', ['timeout', '5', 'wget', '-q', '-O', '-', `http://${gateway}:80/`]);
    // THEN the connection fails, and it is the node's isolation rule that dropped it
    expect(r.exitCode).not.toBe(0);
    expect(await rejected()).toBeGreaterThan(before);
  });

  // Last: takes the cluster down, checks the host, and brings it back for later files, with
  // the objects and volumes it held (an operator's `npm run demo` may run on it: issue 30).
  it('leaves nothing behind after down, and after an up that fails halfway (then comes back up with the same objects and volumes: --keep-data)', async () => {
    const s = stateDir();
    const sysctlsBefore = parseSysctls(await readFile(join(s, 'host-before/sysctls.env'), 'utf8'));
    const pathsBefore = (await readFile(join(s, 'host-before/paths'), 'utf8')).split('\n').filter(Boolean);
    const held = async () => {
      const uids = async (kind: string) => JSON.parse((await kubectlOk(['get', kind, '-A', '-o', 'json'])).toString()).items.map((o: any) => `${o.metadata.namespace}/${o.metadata.name} ${o.metadata.uid}`).sort();
      return { pods: await uids('pods'), claims: await uids('persistentvolumeclaims'), volumes: (await readdir('/tmp/hostpath_pv').catch(() => [])).sort() };
    };
    const before = await held();
    // WHEN down runs, keeping the cluster's data aside
    const down = await execa('bash', [clusterScript, 'down', '--keep-data'], { reject: false, timeout: 300_000 });
    expect(down.exitCode, down.stderr).toBe(0);
    try {
      await expectHostClean(s, sysctlsBefore, pathsBefore);
      // WHEN an up from nothing fails after starting etcd and containerd (an API server that
      // exits at once, from a copy of the cache)
      const cache = await cacheWithFailingApiServer();
      const failed = await execa('bash', [clusterScript, 'up'], { reject: false, timeout: 300_000, env: { DEPLOY_CACHE_DIR: cache } });
      // THEN it fails naming the API server, takes down what it started, and the host is clean
      expect(failed.exitCode, failed.stderr).toBe(3);
      expect(failed.stderr).toContain('etcd started');
      expect(failed.stderr).toContain('kube-apiserver exited');
      expect(failed.stderr).toContain('stopping what it started and restoring the host');
      await expectHostClean(s, sysctlsBefore, pathsBefore);
    } finally {
      // Bring it back for whatever runs after this file.
      const up = await execa('bash', [clusterScript, 'up'], { reject: false, timeout: 300_000 });
      expect(up.exitCode, up.stderr).toBe(0);
      expect(up.stderr).toContain('cluster data put back from');
    }
    // THEN the same pods (by UID), claims and volumes are back
    expect(await held()).toEqual(before);
  });
});

/** A cache dir of links to the real one, whose kube-apiserver exits at once. */
async function cacheWithFailingApiServer(): Promise<string> {
  const real = dirname(dirname(dirname(kubectlBin)));
  const version = basename(dirname(kubectlBin));
  const copy = await mkdtemp(join(tmpdir(), 'e2e-cache-'));
  for (const entry of await readdir(real)) {
    if (entry === 'kubernetes') continue;
    await symlink(join(real, entry), join(copy, entry));
  }
  const k8s = join(copy, 'kubernetes', version);
  await mkdir(k8s, { recursive: true });
  for (const program of await readdir(join(real, 'kubernetes', version))) {
    if (program !== 'kube-apiserver') await symlink(join(real, 'kubernetes', version, program), join(k8s, program));
  }
  await writeFile(join(k8s, 'kube-apiserver'), '#!/bin/sh\necho "kube-apiserver: a broken build for the test" >&2\nexit 1\n', { mode: 0o755 });
  return copy;
}

/** No process, mount, cgroup, firewall rule, interface, sysctl or path of the cluster is left. */
async function expectHostClean(s: string, sysctlsBefore: Record<string, string>, pathsBefore: string[]): Promise<void> {
  const socket = join(s, 'containerd.sock');
  const clusterPrograms = new Set(['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler',
    'kubelet', 'containerd', 'containerd-shim-runc-v2', 'runc', 'systemd-runtime', 'systemd-runc', 'kube-router']);
  // no process of the cluster is left: daemons, shims, containers
  const leftovers: string[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    // The cluster's own programs (clients such as kubectl or helm pointed at its
    // kubeconfig by other work on this machine are not the cluster's leftovers).
    const program = (cmdline.split('\0')[0] ?? '').split('/').pop() ?? '';
    if ((clusterPrograms.has(program) && cmdline.includes(`${s}/`)) || cmdline.includes(socket)) {
      leftovers.push(`${pid}: ${cmdline.replaceAll('\0', ' ')}`);
    }
    const cgroup = await readFile(`/proc/${pid}/cgroup`, 'utf8').catch(() => '');
    if (cgroup.includes('/kubepods')) leftovers.push(`${pid} in ${cgroup}`);
  }
  expect(leftovers).toEqual([]);
  // no mounts under the state dir or the node's fixed paths
  const mounts = (await readFile('/proc/self/mountinfo', 'utf8')).split('\n').map((l) => l.split(' ')[4] ?? '');
  const fixed = ['/run/containerd', '/var/lib/kubelet', '/var/lib/cni', '/run/netns', '/var/run/netns', '/run/k8s-deployer'];
  expect(mounts.filter((m) => m === s || m.startsWith(`${s}/`) ||
    fixed.some((f) => !pathsBefore.includes(f) && m.startsWith(f)))).toEqual([]);
  // no cgroups of the kubelet in any hierarchy
  const roots = (await readdir('/sys/fs/cgroup')).map((h) => `/sys/fs/cgroup/${h}/kubepods`);
  expect(roots.filter((r) => existsSync(r))).toEqual([]);
  // no iptables chains or ipsets of the kubelet, kube-router or ours
  for (const cmd of ['iptables', 'ip6tables']) {
    for (const table of ['filter', 'nat', 'mangle', 'raw']) {
      const rules = (await execa(cmd, ['-w', '5', '-t', table, '-S'], { reject: false })).stdout;
      expect(rules.split('\n').filter((l) => /KUBE-|DEPLOY-|CNI-/.test(l)), `${cmd} -t ${table}`).toEqual([]);
    }
  }
  const ipsets = (await execa('ipset', ['list', '-n'])).stdout.split('\n');
  expect(ipsets.filter((n) => /KUBE-|kube-router/.test(n))).toEqual([]);
  // no interfaces of the cluster (bridges, veths)
  const links = (await execa('ip', ['-o', 'link', 'show'])).stdout;
  expect(links).not.toMatch(/dpl-node0|dpl-cni0|veth/);
  // the sysctls the node changes are back to what they were before up
  for (const [k, v] of Object.entries(sysctlsBefore)) {
    expect((await execa('sysctl', ['-n', k])).stdout.trim(), k).toBe(v);
  }
  // the fixed host paths it wrote are gone (unless they were there before)
  for (const p of ['/run/containerd', '/var/lib/cni', '/var/lib/kubelet', '/var/log/containers',
    '/var/log/pods', '/usr/libexec/kubernetes', '/tmp/hostpath_pv', '/run/k8s-deployer']) {
    if (!pathsBefore.includes(p)) expect(existsSync(p), p).toBe(false);
  }
}

function parseSysctls(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const i = line.indexOf('=');
    if (i > 0) out[line.slice(0, i)] = line.slice(i + 1);
  }
  return out;
}
