/**
 * Issue 50, "nothing by surprise", on the local cluster: what the plan says of each pod is what
 * the next apply does to it (pod UIDs read before and after), and a per-run value restarts
 * nothing.
 *   - the rollout timeout changed between two applies replaces no pod, and the plan has no change;
 *   - the stop timeout (a value of the pod) changed: the plan names it as the cause of each pod it replaces;
 *   - after a failed wave, the plan's words for the later waves (whose pods stay) hold.
 * The words-against-UIDs check is one rule for every node of every plan here: "replace its pod"
 * or "first pod" means a new UID, "keep its pod" or "no change" the same UID.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeployHarness, images } from './harness.js';
import type { BuiltImage } from '../integration/images-scripts.js';

const NODES = ['fa', 'fb', 'fc'] as const;
const WAVES = { DEPLOY_MAX_UNAVAILABLE: '1' };

/** Each node's line of a plan's text: `  fa: <words>`. */
function nodeWords(planText: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of planText.split('\n')) {
    const m = /^ {2}(f[a-c]): (.*)$/.exec(line);
    if (m) out.set(m[1]!, m[2]!);
  }
  return out;
}

/** The rule: what the plan said of each node's pod against what the apply did to it. */
function expectWordsMatchPods(words: Map<string, string>, before: Record<string, string>, after: Record<string, string>) {
  for (const n of NODES) {
    const said = words.get(n);
    expect(said, `no line for ${n}`).toBeDefined();
    const replaced = after[n] !== before[n];
    if (/replace its pod|wait for its first pod/.test(said!)) expect(replaced, `${n}: the plan said "${said}", the pod kept its UID`).toBe(true);
    else if (/keep its pod|^no change$/.test(said!)) expect(replaced, `${n}: the plan said "${said}", the pod was replaced`).toBe(false);
    else throw new Error(`${n}: the plan's words say nothing of its pod: "${said}"`);
  }
}

describe("issue 50: the plan says each pod's fate; per-run values restart nothing", () => {
  let h: DeployHarness;
  let good: BuiltImage;
  let plan = '';
  const uids = async () => Object.fromEntries(await Promise.all(NODES.map(async (n) => [n, (await h.podOf(n)).metadata.uid as string])));
  const planText = async (file: string, args: string[] = [], env: NodeJS.ProcessEnv = {}) => {
    const p = await h.deploy('plan', file, ['--target', 'all', ...args], { ...WAVES, ...env }, { json: false });
    expect(p.exitCode, p.stderr).toBe(0);
    return p.stdout;
  };

  beforeAll(async () => {
    h = await DeployHarness.create('podfate');
    good = await images.good();
    plan = await h.writePlan('good', Object.fromEntries(NODES.map((n) => [n, { image: good }])));
    const r = await h.deploy('apply', plan, ['--target', 'all'], WAVES);
    expect(r.exitCode, r.stderr).toBe(0);
  });
  afterAll(() => h?.cleanup());

  it('GIVEN the group running WHEN the rollout timeout changes (7m, then the default again) THEN the plan has no change and neither apply replaces a pod', async () => {
    const before = await uids();
    expect(await planText(plan, ['--rollout-timeout', '7m'])).toContain('no changes');
    const slow = await h.deploy('apply', plan, ['--target', 'all', '--rollout-timeout', '7m'], WAVES);
    expect(slow.exitCode, slow.stderr).toBe(0);
    expect(await uids()).toEqual(before);
    const back = await h.deploy('apply', plan, ['--target', 'all'], WAVES);
    expect(back.exitCode, back.stderr).toBe(0);
    expect(await uids()).toEqual(before);
  });

  it('GIVEN a wave whose node fails (fb, wave 2 of 3) WHEN the next plan gives fb a good image again THEN its words for every node hold against the pods of the apply that follows', async () => {
    const broken = await images.broken();
    const failing = await h.writePlan('broken', { fa: { image: good }, fb: { image: broken }, fc: { image: good } });
    const r = await h.deploy('apply', failing, ['--target', 'all'], WAVES, { json: false });
    expect(r.exitCode, `${r.stderr}\n${r.stdout}`).toBe(4);

    const fixed = await h.writePlan('fixed', { fa: { image: good }, fb: { image: await images.goodWith('podfate=2') }, fc: { image: good } });
    const text = await planText(fixed);
    const words = nodeWords(text);
    // fc's Deployment does not change: whatever its step does, its pod is not said to be replaced
    expect(words.get('fc'), text).not.toMatch(/replace its pod/);
    expect(words.get('fb'), text).toMatch(/replace its pod \(its image changes to the one this apply pushes\)/);
    const before = await uids();
    const a = await h.deploy('apply', fixed, ['--target', 'all'], WAVES);
    expect(a.exitCode, a.stderr).toBe(0);
    expectWordsMatchPods(words, before, await uids());
    plan = fixed;
  });

  it('GIVEN the stop timeout changed (30s -> 45s, a value of the pod) THEN the plan names it as the cause of each pod it replaces, and the apply replaces exactly those', async () => {
    const stop = { DEPLOY_STOP_TIMEOUT: '45s' };
    const text = await planText(plan, [], stop);
    const words = nodeWords(text);
    for (const n of NODES) expect(words.get(n), text).toContain('replace its pod (the stop timeout (--stop-timeout) changes from 30s to 45s)');
    const before = await uids();
    const a = await h.deploy('apply', plan, ['--target', 'all'], { ...WAVES, ...stop });
    expect(a.exitCode, a.stderr).toBe(0);
    expectWordsMatchPods(words, before, await uids());
    expect(await planText(plan, [], stop)).toContain('no changes');
  });
});
