import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { baseEnv, listTree, runCli, samplePlan, spirePlan, tempDir, writeJson } from '../../support/cli.js';

// Each bad input: its own message, exit code 2, and nothing written.
describe('deploy synth with bad input', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let out: string;
  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    out = join(dir, 'out');
  });
  afterEach(() => cleanup());

  async function synth(plan: unknown, env: NodeJS.ProcessEnv = baseEnv, extra: string[] = []) {
    const file = await writeJson(join(dir, 'group.json'), plan);
    const r = await runCli(['synth', '--plan', file, '--out', out, ...extra], env);
    expect(await listTree(out)).toEqual([]);
    return r;
  }

  it('GIVEN a valid plan and no --target THEN it writes the graph of target all only and prints its path', async () => {
    const file = await writeJson(join(dir, 'group.json'), samplePlan());
    const ok = await runCli(['synth', '--plan', file, '--out', out], baseEnv);
    expect(ok.code).toBe(0);
    expect(ok.stdout.trim().split('\n')).toEqual([join(out, 'g1-all')]);
    expect(await listTree(out)).toEqual(['g1-all', 'g1-all/cdk.tf.json']);
  });

  it("GIVEN --target '*' THEN it writes one graph directory per target and prints their paths", async () => {
    const file = await writeJson(join(dir, 'group.json'), samplePlan());
    const ok = await runCli(['synth', '--plan', file, '--out', out, '--target', '*'], baseEnv);
    expect(ok.code).toBe(0);
    expect(ok.stdout.trim().split('\n')).toEqual(['all', 'mail', 'web'].map((t) => join(out, `g1-${t}`)));
    expect(await listTree(out)).toEqual(['g1-all', 'g1-all/cdk.tf.json', 'g1-mail', 'g1-mail/cdk.tf.json', 'g1-web', 'g1-web/cdk.tf.json']);
  });

  it('GIVEN --target repeated THEN the graphs of those targets', async () => {
    const file = await writeJson(join(dir, 'group.json'), samplePlan());
    const ok = await runCli(['synth', '--plan', file, '--out', out, '--target', 'web', '-t', 'mail'], baseEnv);
    expect(ok.code).toBe(0);
    expect(await listTree(out)).toEqual(['g1-mail', 'g1-mail/cdk.tf.json', 'g1-web', 'g1-web/cdk.tf.json']);
  });

  it('unset K8S_REGISTRY: names the variable', async () => {
    const r = await synth(samplePlan(), { HOME: '/nonexistent' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('K8S_REGISTRY (or --registry): is not set');
  });

  it('empty K8S_REGISTRY: names the variable', async () => {
    const r = await synth(samplePlan(), { K8S_REGISTRY: '' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('K8S_REGISTRY (or --registry): is empty');
  });

  it('invalid node name: names the node and the rule', async () => {
    const p = samplePlan();
    p.nodes['Bad_Name'] = p.nodes.alpha;
    const r = await synth(p);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('$.nodes.Bad_Name: invalid node name: "Bad_Name" is not a DNS-1123 label');
  });

  it('too long node name: says the limit', async () => {
    const p = samplePlan();
    p.nodes['n'.repeat(47)] = p.nodes.alpha;
    const r = await synth(p);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is 47 characters long; at most 46 are allowed');
  });

  it('duplicate node name: names the key and where', async () => {
    const text = JSON.stringify(samplePlan(), null, 2).replace('"beta": {', '"alpha": { "image": { "archive": "x.tar", "tag": "t" } },\n    "beta": {');
    const r = await synth(text);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('$.nodes: key "alpha" appears more than once');
  });

  it('unknown field: names the field and its path', async () => {
    const p = samplePlan();
    p.nodes.alpha.imgae = {};
    p.colour = 'blue';
    const r = await synth(p);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('$.nodes.alpha.imgae: unknown field "imgae"');
    expect(r.stderr).toContain('$.colour: unknown field "colour"');
  });

  it('wrong plan version', async () => {
    const p = samplePlan();
    p.version = 2;
    const r = await synth(p);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('$.version: must be 1');
  });

  it('a node that needs a TPM is refused, naming the node', async () => {
    const p = samplePlan();
    p.nodes.gamma.tpm = true;
    const r = await synth(p);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('$.nodes.gamma.tpm: node "gamma" needs a TPM');
  });

  it('a spiffe provider inside the group is refused, naming the group', async () => {
    const p = samplePlan();
    p.roster.spiffeProvider = { group: 'g1', node: 'alpha' };
    const r = await synth(p);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('group "g1" names its own node "alpha" as spiffe provider');
  });

  it('a node that needs an identity, with no spiffe provider in the roster, is refused naming the node (synth too: it has no cluster, but its graph is the one apply would run)', async () => {
    const p = samplePlan();
    p.nodes.beta.identity = true;
    const r = await synth(p);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('$.nodes.beta.identity: node "beta" needs a workload identity, and the roster names no spiffe provider');
  });

  it('a roster that names a spiffe provider without the SPIRE coordinates is refused, naming both', async () => {
    const r = await synth(spirePlan());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('$.roster.spiffeProvider and K8S_SPIRE_NODE: the roster names the spiffe provider "central/spire", but K8S_SPIRE_NODE is not set');
  });

  it('unknown target: lists the targets there are', async () => {
    const r = await synth(samplePlan(), baseEnv, ['--target', 'chat']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`"chat" is not a target of group "g1"; its targets are: all, mail, web (or '*' for every one)`);
  });

  it('unreadable plan file', async () => {
    const file = await writeJson(join(dir, 'group.json'), samplePlan());
    await chmod(file, 0o000);
    const asRoot = process.getuid?.() === 0;
    const target = asRoot ? join(dir, 'missing.json') : file; // root reads anything: use a missing file
    const r = await runCli(['synth', '--plan', target, '--out', out], baseEnv);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(asRoot ? /missing\.json: does not exist/ : /is not readable/);
    expect(await listTree(out)).toEqual([]);
  });

  it('a directory as plan file', async () => {
    await mkdir(join(dir, 'plan.d'));
    const r = await runCli(['synth', '--plan', join(dir, 'plan.d'), '--out', out], baseEnv);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('plan.d: is a directory');
  });

  it('invalid JSON', async () => {
    const r = await synth('{ "version": 1,');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('the group plan is not valid JSON');
  });

  it('bad coordinates are all reported at once', async () => {
    const r = await synth(samplePlan(), { K8S_REGISTRY: 'https://reg/', K8S_STATE_SIZE: 'big', DEPLOY_ROLLOUT_TIMEOUT: 'soon', K8S_REGISTRY_TLS_VERIFY: 'maybe' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('K8S_REGISTRY (or --registry): must be host[:port][/path]');
    expect(r.stderr).toContain('K8S_STATE_SIZE (or --state-size): must be a Kubernetes quantity');
    expect(r.stderr).toContain('DEPLOY_ROLLOUT_TIMEOUT (or --rollout-timeout): must be a duration');
    expect(r.stderr).toContain('K8S_REGISTRY_TLS_VERIFY: "maybe" must be true or false');
  });

  it('a stop timeout that is no duration, zero, or not shorter than the rollout timeout is refused, naming both', async () => {
    const bad = await synth(samplePlan(), { DEPLOY_STOP_TIMEOUT: 'later' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('DEPLOY_STOP_TIMEOUT (or --stop-timeout): must be a duration such as 30s or 2m');
    const zero = await synth(samplePlan(), { DEPLOY_STOP_TIMEOUT: '0s' });
    expect(zero.stderr).toContain('DEPLOY_STOP_TIMEOUT (or --stop-timeout): must be at least 1s');
    // the default stop timeout (30s) against a short rollout timeout: said, not silently cut
    const long = await synth(samplePlan(), { DEPLOY_ROLLOUT_TIMEOUT: '20s' });
    expect(long.code).toBe(2);
    expect(long.stderr).toContain('DEPLOY_STOP_TIMEOUT (or --stop-timeout): 30s must be shorter than the rollout timeout (20s)');
    expect(long.stderr).toContain('DEPLOY_ROLLOUT_TIMEOUT (--rollout-timeout)');
  });

  it('a probe period that is no duration, zero or over an hour is refused, naming the variable and the flag', async () => {
    const bad = await synth(samplePlan(), { DEPLOY_PROBE_PERIOD: 'often' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('DEPLOY_PROBE_PERIOD (or --probe-period): must be a duration such as 10s or 1m');
    const zero = await synth(samplePlan(), { DEPLOY_PROBE_PERIOD: '0' });
    expect(zero.stderr).toContain('DEPLOY_PROBE_PERIOD (or --probe-period): must be at least 1s');
    const long = await synth(samplePlan(), { DEPLOY_PROBE_PERIOD: '2h' });
    expect(long.stderr).toContain('DEPLOY_PROBE_PERIOD (or --probe-period): must be at most 1h');
  });

  it('a flag overrides the environment', async () => {
    const file = await writeJson(join(dir, 'group.json'), samplePlan());
    const r = await runCli(['synth', '--plan', file, '--out', out, '--registry', 'flag.test', '--target', 'web', '--json'], { K8S_REGISTRY: 'env.test' });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).graphs).toEqual([{ target: 'web', stateKey: 'g1-web', dir: join(out, 'g1-web') }]);
    const { readFile } = await import('node:fs/promises');
    const graph = await readFile(join(out, 'g1-web', 'cdk.tf.json'), 'utf8');
    expect(graph).toContain('flag.test/fediversity-web/alpha:a1');
    expect(graph).not.toContain('env.test');
  });
});

describe('deploy plan|apply|destroy without a usable kubeconfig', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(() => cleanup());

  it.each(['plan', 'apply', 'destroy'])('%s: unset KUBE_CONFIG_PATH is named, exit 2, nothing run', async (verb) => {
    const file = await writeJson(join(dir, 'group.json'), samplePlan());
    const r = await runCli([verb, '--plan', file, '--target', 'all', '--out', join(dir, 'out')], { ...baseEnv, DEPLOY_STATE_DIR: join(dir, 'state') });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('KUBE_CONFIG_PATH (or --kubeconfig): is not set');
    expect(await listTree(join(dir, 'state'))).toEqual([]);
  });

  it.each(['plan', 'apply', 'destroy'])('%s: a node that needs an identity without a spiffe provider is refused naming it, exit 2, nothing run', async (verb) => {
    const plan = samplePlan();
    plan.nodes.gamma.identity = true;
    const file = await writeJson(join(dir, 'group.json'), plan);
    const kubeconfig = await writeJson(join(dir, 'kubeconfig'), '{}');
    const r = await runCli([verb, '--plan', file, '--kubeconfig', kubeconfig, '--out', join(dir, 'out')], { ...baseEnv, DEPLOY_STATE_DIR: join(dir, 'state') });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('$.nodes.gamma.identity: node "gamma" needs a workload identity, and the roster names no spiffe provider (roster.spiffeProvider is null), and the SPIRE coordinates are not set');
    expect(await listTree(join(dir, 'state'))).toEqual([]);
    expect(await listTree(join(dir, 'out'))).toEqual([]);
  });

  it('a kubeconfig that is not a readable file is named, exit 2', async () => {
    const file = await writeJson(join(dir, 'group.json'), samplePlan());
    const r = await runCli(['plan', '--plan', file, '--target', 'all', '--kubeconfig', dir], { ...baseEnv, DEPLOY_STATE_DIR: join(dir, 'state') });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`KUBE_CONFIG_PATH (or --kubeconfig): ${dir} is not a readable file`);
  });
});

describe('deploy plan|apply --allow-volume-replacement', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(() => cleanup());

  it.each(['plan', 'apply'])('%s: a name that is no node of the chosen target is named, exit 2, nothing run', async (verb) => {
    const file = await writeJson(join(dir, 'group.json'), samplePlan());
    const r = await runCli([verb, '--plan', file, '--target', 'web', '--allow-volume-replacement', 'alpha', '--allow-volume-replacement', 'alpah', '--allow-volume-replacement', 'gamma', '--out', join(dir, 'out')], { ...baseEnv, DEPLOY_STATE_DIR: join(dir, 'state') });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--allow-volume-replacement: "alpah" is not a node of target web (its nodes: alpha, beta)');
    expect(r.stderr).toContain('--allow-volume-replacement: "gamma" is not a node of target web');
    expect(r.stderr).not.toContain('"alpha" is not');
    expect(await listTree(dir)).toEqual(['group.json']);
  });

  it('destroy does not take it', async () => {
    const file = await writeJson(join(dir, 'group.json'), samplePlan());
    const r = await runCli(['destroy', '--plan', file, '--allow-volume-replacement', 'alpha'], baseEnv);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown option '--allow-volume-replacement'");
  });
});
