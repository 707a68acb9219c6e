/**
 * The kubeconfig as kubectl reads it (issue 29, first bullet), against the local cluster: a
 * user whose credential comes from an exec plugin (test/fixtures/token-plugin.sh, printing a
 * ServiceAccount token made for this test, with an expirationTimestamp, one line per run in a
 * counter file). The apply works through it (tofu's provider and the rollout step run the plugin
 * too); the next plans are answered by the verified no-op check without a refresh, each with at
 * most one run of the plugin; `deploy status` reads the cluster through it. The same kubeconfig
 * has a second context (the cluster's admin, a client certificate): KUBE_CTX naming it sends the
 * plan to tofu, because the identity tofu would use is not the one the record was made with.
 */
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { dump } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuiltImage } from '../integration/images-scripts.js';
import { DeployHarness, filesUnder, images } from './harness.js';

const PLUGIN = resolve(import.meta.dirname, '../fixtures/token-plugin.sh');

describe('a kubeconfig whose user is an exec plugin, and KUBE_CTX', () => {
  let h: DeployHarness;
  let good: BuiltImage;
  let plan = '';
  let kubeconfig = '';
  let calls = '';
  let token = '';
  const stamp = randomUUID().slice(0, 6);
  const authNamespace = `kc-auth-${stamp}`;
  const binding = `deploy-e2e-kubeconfig-${stamp}`;
  const runs = async () => (await readFile(calls, 'utf8').catch(() => '')).split('\n').filter((l) => l !== '').length;
  const run = (verb: string, env: NodeJS.ProcessEnv = {}) => h.deploy(verb, plan, ['--target', 'all'], { KUBE_CONFIG_PATH: kubeconfig, ...env });
  const noToken = (r: { stdout: string; stderr: string }) => expect(`${r.stdout}\n${r.stderr}`.includes(token), 'the token is in the output').toBe(false);

  beforeAll(async () => {
    h = await DeployHarness.create('kubeconfig');
    good = await images.good();
    plan = await h.writePlan('group', { web: { image: good } });

    // a ServiceAccount with cluster-admin rights, for this test only, and a token of it
    await h.kubectlOk(['create', 'namespace', authNamespace], { namespace: null });
    await h.kubectlOk(['create', 'serviceaccount', 'deployer'], { namespace: authNamespace });
    await h.kubectlOk(['create', 'clusterrolebinding', binding, '--clusterrole=cluster-admin', `--serviceaccount=${authNamespace}:deployer`], { namespace: null });
    token = (await h.kubectlOk(['create', 'token', 'deployer', '--duration=1h'], { namespace: authNamespace })).trim();
    expect(token.length).toBeGreaterThan(20);
    const tokenFile = join(h.dir, 'plugin-token');
    await writeFile(tokenFile, `${token}\n`, { mode: 0o600 });
    calls = join(h.dir, 'plugin-calls');

    // the cluster and the admin user of the local cluster's kubeconfig, with their data inline
    const admin = await h.getJson(['config', 'view', '--raw', '--flatten', '--minify'], { namespace: null });
    const cluster = admin.clusters[0].cluster;
    const adminUser = admin.users[0].user;
    kubeconfig = join(h.dir, 'exec.kubeconfig');
    await writeFile(
      kubeconfig,
      dump({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'local', cluster }],
        users: [
          {
            name: 'via-plugin',
            user: {
              exec: {
                apiVersion: 'client.authentication.k8s.io/v1',
                command: PLUGIN,
                args: ['--audience', 'deploy-e2e'],
                env: [
                  { name: 'PLUGIN_TOKEN_FILE', value: tokenFile },
                  { name: 'PLUGIN_CALLS', value: calls },
                  { name: 'PLUGIN_TTL', value: '900' },
                ],
                interactiveMode: 'Never',
                installHint: 'the test plugin is test/fixtures/token-plugin.sh',
              },
            },
          },
          { name: 'admin', user: adminUser },
        ],
        contexts: [
          { name: 'plugin', context: { cluster: 'local', user: 'via-plugin' } },
          { name: 'admin', context: { cluster: 'local', user: 'admin' } },
        ],
        'current-context': 'plugin',
      }),
    );
    await chmod(kubeconfig, 0o600);
  });

  afterAll(async () => {
    await h?.kubectl(['delete', 'clusterrolebinding', '--ignore-not-found', binding], { namespace: null });
    await h?.kubectl(['delete', 'namespace', '--ignore-not-found', '--wait=false', authNamespace], { namespace: null });
    await h?.cleanup();
  });

  it('GIVEN the exec-plugin kubeconfig WHEN applied THEN the apply is ok, through the plugin', async () => {
    const a = await run('apply');
    expect(a.exitCode, a.stderr).toBe(0);
    expect(a.json.targets[0].rollouts.map((x: any) => [x.node, x.outcome]), a.stderr).toEqual([['web', 'ready']]);
    // tofu's provider, the rollout step and deploy's own reads each ran it (each process caches it in memory)
    expect(await runs()).toBeGreaterThan(0);
    noToken(a);
  });

  it('WHEN planned twice THEN each plan is verified without a refresh, with one run of the plugin', async () => {
    for (const which of ['first', 'second']) {
      const before = await runs();
      const p = await run('plan');
      expect(p.exitCode, p.stderr).toBe(0);
      expect(p.stderr, `${which} plan`).toContain('no changes, verified without a refresh');
      expect(p.json.targets[0].verifiedNoop, `${which} plan`).toBe(true);
      expect(p.json.targets[0].changes).toBe(false);
      // the check reads the cluster, so the plugin runs; its credential serves every read of the run
      expect(await runs(), `${which} plan: runs of the plugin`).toBe(before + 1);
      noToken(p);
    }
  });

  it('WHEN deploy status runs THEN it reads the cluster through the plugin: the node is ok', async () => {
    const before = await runs();
    const s = await run('status');
    expect(s.exitCode, s.stderr + s.stdout).toBe(0);
    expect(s.json.targets[0].nodes.find((n: any) => n.node === 'web')).toMatchObject({ mark: 'ok', cluster: { ready: true } });
    expect(await runs()).toBe(before + 1);
    noToken(s);
  });

  it('GIVEN KUBE_CTX naming the other context (the admin) WHEN planned THEN the full plan runs, and the plugin does not', async () => {
    const before = await runs();
    const p = await run('plan', { KUBE_CTX: 'admin' });
    expect(p.exitCode, p.stderr).toBe(0);
    // the record was made as the plugin's ServiceAccount; tofu would now act as the admin
    expect(p.stderr).toContain('full plan: tofu, its providers, the cluster or identity the kubeconfig and KUBE_* resolve to, or the backend changed since the');
    expect(p.json.targets[0].verifiedNoop).toBeUndefined();
    expect(p.json.targets[0].changes, p.stdout).toBe(false);
    // neither the check nor tofu's provider used the plugin's context
    expect(await runs()).toBe(before);
    // and back on the current context: the record is the admin's now, so the full plan again, then verified
    const back = await run('plan');
    expect(back.stderr).toContain('full plan: tofu, its providers, the cluster or identity');
    const again = await run('plan');
    expect(again.json.targets[0].verifiedNoop, again.stderr).toBe(true);
  });

  it('THEN the token is in no file deploy wrote (records, state, run logs)', async () => {
    const files = await filesUnder(join(h.dir, 'state'));
    expect(files.length).toBeGreaterThan(0);
    const holding: string[] = [];
    for (const f of files) if ((await readFile(f).catch(() => Buffer.alloc(0))).includes(token)) holding.push(f);
    expect(holding).toEqual([]);
  });
});
