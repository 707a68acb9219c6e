/**
 * US1: deploy nodes to the cluster as images (AS1-AS4, SC-001, SC-002), with the real
 * deployer, tofu, registry and cluster.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeployHarness, images } from './harness.js';
import type { BuiltImage } from '../integration/images-scripts.js';

describe('US1: deploy a node to a cluster as an image', () => {
  let h: DeployHarness;
  let good: BuiltImage;
  let plan: string;
  let firstPod: { web: any; mail: any };

  beforeAll(async () => {
    h = await DeployHarness.create('us1');
    good = await images.good();
    plan = await h.writePlan('group', { web: { image: good, apps: ['web'] }, mail: { image: good, apps: ['mail'] } });
  });
  afterAll(() => h?.cleanup());

  it('AS1: pushes each node to <registry>/<ns>/<node> and runs it by digest; the pod is ready with systemd as PID 1', async () => {
    const r = await h.deploy('apply', plan, ['--target', 'all']);
    expect(r.exitCode, r.stderr).toBe(0);
    const registry = h.env.K8S_REGISTRY!;
    for (const node of ['web', 'mail']) {
      const digest = await h.registryDigest(`${registry}/${h.namespace}/${node}:${good.tag}`);
      expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
      const d = await h.getJson(['get', 'deployment', node]);
      expect(d.spec.template.spec.containers[0].image).toBe(`${registry}/${h.namespace}/${node}@${digest}`);
      expect(d.spec.template.spec.hostUsers).toBe(false);
      expect(d.spec.template.spec.runtimeClassName).toBe('systemd');
      const pod = await h.podOf(node);
      expect(pod.status.conditions.find((c: any) => c.type === 'Ready').status).toBe('True');
      expect(await h.exec(node, 'systemctl is-system-running')).toBe('running');
      expect(await h.exec(node, 'cat /proc/1/comm')).toBe('systemd');
    }
    const report = r.json.targets[0];
    expect(report.rollouts.map((x: any) => [x.node, x.outcome])).toEqual([
      ['mail', 'ready'],
      ['web', 'ready'],
    ]);
    // FR-009: the node names, read back from the graph's output after the apply
    expect(report.nodeNames).toEqual(['mail', 'web']);
    firstPod = { web: await h.podOf('web'), mail: await h.podOf('mail') };
  });

  it('AS1: the pod runs in its own user namespace, keeps the CNI address and routes on eth0, and has the machine ID of container_uuid', async () => {
    const pod = firstPod.web;
    const uidMap = (await h.exec('web', 'cat /proc/1/uid_map')).trim().split(/\s+/);
    expect(uidMap[0]).toBe('0');
    expect(uidMap[1]).not.toBe('0'); // not the identity map
    const addr = await h.exec('web', 'ip -4 -o addr show dev eth0');
    expect(addr).toContain(`inet ${pod.status.podIP}/`);
    expect(await h.exec('web', 'ip route show default')).toMatch(/^default via \S+ dev eth0/);
    const uuid = pod.spec.containers[0].env.find((e: any) => e.name === 'container_uuid').value;
    expect(await h.exec('web', 'cat /etc/machine-id')).toBe(uuid.replaceAll('-', ''));
    const otherUuid = firstPod.mail.spec.containers[0].env.find((e: any) => e.name === 'container_uuid').value;
    expect(otherUuid).not.toBe(uuid); // different for each node (FR-013)
  });

  it('AS1: /var/lib is on the claim <node>-state, and the sshd host keys are in it', async () => {
    const claim = await h.getJson(['get', 'pvc', 'web-state']);
    expect(claim.status.phase).toBe('Bound');
    const vol = firstPod.web.spec.volumes.find((v: any) => v.persistentVolumeClaim?.claimName === 'web-state');
    expect(vol).toBeDefined();
    const mounts = await h.exec('web', 'cat /proc/self/mountinfo');
    expect(mounts.split('\n').some((l) => l.split(' ')[4] === '/var/lib')).toBe(true);
    expect(await h.exec('web', 'ls /var/lib/ssh')).toContain('ssh_host_ed25519_key');
  });

  it('AS4: a pod of the namespace connects to the node; a pod of another namespace cannot', async () => {
    const target = firstPod.web.status.podIP;
    const other = `${h.namespace}-x`;
    await h.kubectlOk(['create', 'namespace', other], { namespace: null });
    try {
      const probe = (ns: string) =>
        h.kubectl(['run', 'probe', '--restart=Never', '--image', firstPod.web.spec.containers[0].image, '--overrides', JSON.stringify({ spec: { runtimeClassName: 'systemd', hostUsers: false } }), '--attach', '--rm', '--quiet', '--command', '--', '/bin/bash', '-c', `timeout 5 bash -c 'echo > /dev/tcp/${target}/22' && echo CONNECTED || echo REFUSED`], { namespace: ns });
      const same = await probe(h.namespace);
      expect(same.stdout).toContain('CONNECTED');
      const foreign = await probe(other);
      expect(foreign.stdout).toContain('REFUSED');
    } finally {
      await h.kubectl(['delete', 'namespace', other, '--wait=false'], { namespace: null });
    }
  });

  it('Pod Security Admission (issue 29): the namespace enforces baseline, the node pods pass it (seccomp RuntimeDefault, no privilege escalation), and a pod that breaks it is refused naming the rule', async () => {
    const ns = await h.getJson(['get', 'namespace', h.namespace], { namespace: null });
    expect(ns.metadata.labels).toMatchObject({ 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/audit': 'restricted' });
    const pod = await h.podOf('web');
    expect(pod.spec.securityContext.seccompProfile).toEqual({ type: 'RuntimeDefault' });
    expect(pod.spec.containers[0].securityContext.allowPrivilegeEscalation).toBe(false);
    expect(pod.status.conditions.find((c: any) => c.type === 'Ready').status).toBe('True');
    const bad = await h.kubectl(['run', 'privileged', '--image=none', '--restart=Never', '--overrides', JSON.stringify({ spec: { containers: [{ name: 'x', image: 'none', securityContext: { privileged: true } }] } })]);
    expect(bad.exitCode).not.toBe(0);
    expect(bad.stderr).toContain('violates PodSecurity "baseline:latest": privileged');
  });

  it('SC-002: after the apply, a plan shows no changes', async () => {
    const r = await h.deploy('plan', plan, ['--target', 'all']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.json.targets[0].changes).toBe(false);
    expect(r.json.targets[0].nodes.map((n: any) => n.words)).toEqual(['no change', 'no change']);
    expect(r.json.targets[0].nodeNames).toEqual(['mail', 'web']);
    // answered without a refresh (issue 22), and the same as the full plan's answer
    expect(r.json.targets[0].verifiedNoop, r.stderr).toBe(true);
    const full = await h.deploy('plan', plan, ['--target', 'all'], { DEPLOY_FAST_PLAN: 'off' });
    expect(full.exitCode, full.stderr).toBe(0);
    expect(full.json.targets[0].verifiedNoop).toBeUndefined();
    const { verifiedNoop: _, ...fast } = r.json.targets[0];
    expect({ ...full.json.targets[0], graphDir: fast.graphDir }).toEqual(fast);
  });

  it('FR-009: plan --json carries the node names as planned: a plan without mail names only web, and nothing is applied', async () => {
    const webOnly = await h.writePlan('group-web-only', { web: { image: good, apps: ['web'] } });
    const r = await h.deploy('plan', webOnly, ['--target', 'all']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.json.targets[0].changes).toBe(true);
    expect(r.json.targets[0].nodes.find((n: any) => n.node === 'mail').removed).toBe(true);
    expect(r.json.targets[0].nodeNames).toEqual(['web']);
    expect((await h.podOf('mail')).metadata.uid).toBe(firstPod.mail.metadata.uid);
  });

  it('AS2: applying again unchanged pushes nothing, changes no Deployment, runs no rollout, and keeps the pod', async () => {
    const before = await h.getJson(['get', 'deployment', 'web']);
    const r = await h.deploy('apply', plan, ['--target', 'all']);
    expect(r.exitCode, r.stderr).toBe(0);
    const t = r.json.targets[0];
    expect(t.applied).toBe(false);
    expect(t.verifiedNoop, r.stderr).toBe(true);
    expect(t.nodeNames).toEqual(['mail', 'web']);
    expect(t.rollouts).toEqual([]);
    expect(t.nodes.every((n: any) => n.push === 'none' && n.deployment === 'none' && n.rollout === 'none')).toBe(true);
    const after = await h.getJson(['get', 'deployment', 'web']);
    expect(after.metadata.generation).toBe(before.metadata.generation);
    const pod = await h.podOf('web');
    expect(pod.metadata.uid).toBe(firstPod.web.metadata.uid);
    expect(pod.status.containerStatuses[0].restartCount).toBe(firstPod.web.status.containerStatuses[0].restartCount);
  });

  it('AS3: a changed configuration (new tag) pushes a new image and the Deployment replaces the pod', async () => {
    const changed = await images.goodWith(`e2e=${h.namespace}`);
    expect(changed.tag).not.toBe(good.tag);
    const plan2 = await h.writePlan('group-changed', { web: { image: changed, apps: ['web'] }, mail: { image: good, apps: ['mail'] } });
    const r = await h.deploy('apply', plan2, ['--target', 'all']);
    expect(r.exitCode, r.stderr).toBe(0);
    const t = r.json.targets[0];
    expect(t.nodes.find((n: any) => n.node === 'web')).toMatchObject({ push: 'replace', rollout: 'replace' });
    expect(t.nodes.find((n: any) => n.node === 'mail')).toMatchObject({ push: 'none', rollout: 'none' });
    const digest = await h.registryDigest(`${h.env.K8S_REGISTRY}/${h.namespace}/web:${changed.tag}`);
    const pod = await h.podOf('web');
    expect(pod.spec.containers[0].image).toBe(`${h.env.K8S_REGISTRY}/${h.namespace}/web@${digest}`);
    expect(pod.metadata.uid).not.toBe(firstPod.web.metadata.uid);
    expect(await h.exec('web', 'cat /etc/node-config')).toContain(`e2e=${h.namespace}`);
    expect((await h.podOf('mail')).metadata.uid).toBe(firstPod.mail.metadata.uid);
    // issue 22: only web's part of the graph changed, the rest was verified: web planned alone
    expect(r.stderr).toContain('only node web changed in the graph: planned alone (-target)');
    expect(r.stderr).not.toContain('Resource targeting is in effect');
    // and the state is whole: the full plan finds nothing to do, and the apply's record answers the next plan
    const full = await h.deploy('plan', plan2, ['--target', 'all'], { DEPLOY_FAST_PLAN: 'off' });
    expect(full.exitCode, full.stderr).toBe(0);
    expect(full.json.targets[0].changes, full.stdout).toBe(false);
    const again = await h.deploy('plan', plan2, ['--target', 'all']);
    expect(again.json.targets[0].verifiedNoop, again.stderr).toBe(true);
  });
});
