/**
 * The stock providers still work, only slower (issue 22: the patched kubernetes provider is
 * the default, toolchain/tofu/patches/). With DEPLOY_PROVIDER_PATCHES=none (the stock builds
 * of `npm run tools`, built here when the cache lacks them) and DEPLOY_FAST_PLAN=off (every
 * plan a full tofu refresh through the stock provider): a first apply, a no-op plan, a
 * Deployment deleted by hand found by the plan and made again by the apply, and a no-op again;
 * hand edits (issue 34: an env item added, a value changed) named and undone with the stock builds too.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTool } from '../../src/tools/run.js';
import { repoRoot } from '../integration/images-scripts.js';
import { DeployHarness, images } from './harness.js';

const STOCK = { DEPLOY_PROVIDER_PATCHES: 'none', DEPLOY_FAST_PLAN: 'off' };

describe('the stock providers (DEPLOY_PROVIDER_PATCHES=none)', () => {
  let h: DeployHarness;
  let plan = '';
  beforeAll(async () => {
    // the stock mirror and tofu.rc (seconds when cached; a cold build of the providers takes minutes)
    await runTool('bash', [join(repoRoot, 'toolchain', 'build-tools.sh')], {
      cwd: repoRoot,
      env: { ...process.env, DEPLOY_PROVIDER_PATCHES: 'none' },
      timeoutMs: 45 * 60_000,
      onStderrLine: (line) => process.stderr.write(`[tools stock] ${line}\n`),
    });
    h = await DeployHarness.create('stock');
    plan = await h.writePlan('group', { web: { image: await images.good() } });
  }, 50 * 60_000);
  afterAll(() => h?.cleanup());

  it('GIVEN the stock builds WHEN applied and planned THEN the pod is ready and the full plan finds nothing to do', async () => {
    const a = await h.deploy('apply', plan, ['--target', 'all'], STOCK);
    expect(a.exitCode, a.stderr).toBe(0);
    expect(a.json.targets[0].rollouts.map((r: any) => [r.node, r.outcome])).toEqual([['web', 'ready']]);
    const p = await h.deploy('plan', plan, ['--target', 'all'], STOCK);
    expect(p.exitCode, p.stderr).toBe(0);
    expect(p.stderr).toContain('tofu plan');
    expect(p.json.targets[0].changes, p.stdout).toBe(false);
    expect(p.json.targets[0].verifiedNoop).toBeUndefined();
  });

  it('GIVEN the Deployment deleted by hand WHEN planned and applied with the stock builds THEN it is made again and the pod is ready', async () => {
    await h.kubectlOk(['delete', 'deployment', 'web', '--wait=true']);
    const p = await h.deploy('plan', plan, ['--target', 'all'], STOCK);
    expect(p.exitCode, p.stderr).toBe(0);
    expect(p.json.targets[0].nodes.find((n: any) => n.node === 'web')).toMatchObject({ deployment: 'create', rolloutForDrift: true });
    const a = await h.deploy('apply', plan, ['--target', 'all'], STOCK);
    expect(a.exitCode, a.stderr).toBe(0);
    expect((await h.podOf('web')).status.conditions.find((c: any) => c.type === 'Ready').status).toBe('True');
    const again = await h.deploy('plan', plan, ['--target', 'all'], STOCK);
    expect(again.json.targets[0].changes, again.stdout).toBe(false);
  });

  it('GIVEN hand edits (kubectl set env: an item added, a value of the graph changed) WHEN planned and applied with the stock builds THEN both are named and undone, exit 0', async () => {
    await h.kubectlOk(['set', 'env', 'deployment/web', 'FOO=bar', 'container=other']);
    const p = await h.deploy('plan', plan, ['--target', 'all'], STOCK);
    expect(p.exitCode, p.stderr).toBe(0);
    const edits = p.json.targets[0].nodes.find((n: any) => n.node === 'web').handEdits.map((e: any) => [e.field, e.writer, e.action]);
    expect(edits).toEqual([
      ['spec.template.spec.containers[node].env[container].value', 'kubectl-set', 'set-back'],
      ['spec.template.spec.containers[node].env[FOO]', 'kubectl-set', 'remove'],
    ]);
    const a = await h.deploy('apply', plan, ['--target', 'all'], STOCK);
    expect(a.exitCode, a.stderr).toBe(0);
    const env = (await h.getJson(['get', 'deployment', 'web'])).spec.template.spec.containers[0].env;
    expect(env.map((e: any) => e.name)).toEqual(['container', 'container_uuid']);
    expect(env[0].value).toBe('docker');
    expect((await h.podOf('web')).status.conditions.find((c: any) => c.type === 'Ready').status).toBe('True');
    const again = await h.deploy('plan', plan, ['--target', 'all'], STOCK);
    expect(again.json.targets[0].changes, again.stdout).toBe(false);
  });
});
