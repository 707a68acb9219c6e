/**
 * The scoped graph (src/graph/scoped-graph.ts) against the real tofu, registry and cluster: a
 * plan of some blocks made from the part of the graph they read is the plan tofu makes of the
 * whole graph with the same -target and -replace. Generated: a group of 4 nodes with a random
 * `after` order and --max-unavailable (waves name other nodes' rollouts), applied; then rounds,
 * each with random nodes given a new tag (a `deploy plan`, which writes the whole graph), random
 * roots (all of some nodes' blocks, now and then one block alone, a rollout to replace) and a
 * plan with and without a refresh. Both plans run on a copy of the state with a local backend,
 * in two directories of the graph directory's providers; what deploy reads of a plan is
 * compared: the changes, the drift, the planned outputs and the prior state.
 *
 * Then what deploy does with it: scoped applies of random nodes given a new image, each changing
 * those nodes alone, and followed by a full plan (DEPLOY_FAST_PLAN=off) that finds nothing to do.
 *
 * DEPLOY_TEST_SEED replays a sequence (printed, and in every message).
 */
import { copyFile, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GraphDocument } from '../../src/contract/graph/graph-document.js';
import { graphBlocks } from '../../src/contract/graph/graph-references.js';
import { graphPartOf } from '../../src/contract/graph/graph-ids.js';
import { scopedGraph } from '../../src/graph/scoped-graph.js';
import { SqliteStateStore } from '../../src/state/store/sqlite-store.js';
import { requireTool } from '../../src/tools/discover.js';
import { tofuEnvironment } from '../../src/tools/tofu/tofu-process.js';
import { DeployHarness, images } from './harness.js';
import type { BuiltImage } from '../integration/images-scripts.js';
import { seededRandom } from '../support/seeded-random.js';

const SEED = Number(process.env.DEPLOY_TEST_SEED ?? Date.now() % 1_000_000_007);
const ROUNDS = Number(process.env.DEPLOY_TEST_RUNS ?? 6);
const NODES = ['a', 'b', 'c', 'd'];
const STATE_KEY = 'e2e-all';

/** What deploy reads of a saved plan (tofu show -json), in an order that does not depend on tofu's walk. */
function planFacts(shown: any) {
  const byAddress = (list: any[] | undefined) => [...(list ?? [])].sort((x, y) => String(x.address).localeCompare(String(y.address)));
  return {
    errored: shown.errored ?? false,
    changes: byAddress(shown.resource_changes),
    drift: byAddress(shown.resource_drift),
    outputs: shown.output_changes ?? {},
    prior: byAddress(shown.prior_state?.values?.root_module?.resources),
  };
}

describe(`the scoped graph gives tofu's plan of the whole graph (seed ${SEED}, DEPLOY_TEST_SEED replays)`, () => {
  let h: DeployHarness;
  let good: BuiltImage;
  let after: Record<string, string[]>;
  let maxUnavailable: number;
  const next = seededRandom(SEED);

  /** The group plan with each node's image, in the group's order and waves. */
  const planWith = (name: string, images: Record<string, BuiltImage>) =>
    h.writePlan(name, Object.fromEntries(NODES.map((n) => [n, { image: images[n]!, ...(after[n]!.length > 0 ? { after: after[n] } : {}) }])), { maxUnavailable });
  /** The same with each node's tag (the same image under another tag: a push of a new tag, planned, not applied). */
  const planOf = (name: string, tags: Record<string, string>) => planWith(name, Object.fromEntries(NODES.map((n) => [n, { ...good, tag: tags[n]! }])));

  beforeAll(async () => {
    console.log(`deploy-scoped-graph: seed ${SEED} (DEPLOY_TEST_SEED=${SEED} replays), ${ROUNDS} rounds`);
    h = await DeployHarness.create('scoped-graph');
    good = await images.good();
    // a random order without cycles (a node after nodes earlier in a shuffle), and waves
    const shuffled = [...NODES].sort(() => next() - 0.5);
    after = Object.fromEntries(shuffled.map((n, i) => [n, shuffled.slice(0, i).filter(() => next() < 0.4)]));
    maxUnavailable = 1 + Math.floor(next() * 2);
    console.log(`group: after ${JSON.stringify(after)}, maxUnavailable ${maxUnavailable}`);
    const up = await h.deploy('apply', await planOf('up', Object.fromEntries(NODES.map((n) => [n, good.tag]))), ['--target', 'all']);
    expect(up.exitCode, up.stderr).toBe(0);
  });
  afterAll(() => h?.cleanup());

  it('GIVEN random changes and random roots THEN the plan of the scoped graph is the plan of the whole graph with -target', async () => {
    const tofu = requireTool('tofu', h.env).path;
    const env = tofuEnvironment({ ...h.env, DEPLOY_RUN_DIR: undefined }) as NodeJS.ProcessEnv;
    const graphDir = join(h.env.DEPLOY_STATE_DIR!, 'graphs', STATE_KEY);
    let withChanges = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const tags = Object.fromEntries(NODES.map((n) => [n, next() < 0.4 ? `${good.tag}-s${round}` : good.tag]));
      // deploy plan writes the whole graph of these tags (and plans it its own way)
      const planned = await h.deploy('plan', await planOf(`round-${round}`, tags), ['--target', 'all']);
      expect(planned.exitCode, planned.stderr).toBe(0);
      const whole = JSON.parse(await readFile(join(graphDir, 'cdk.tf.json'), 'utf8')) as GraphDocument;
      const addresses = [...graphBlocks(whole).keys()];
      const nodes = NODES.filter(() => next() < 0.5);
      const targets = addresses.filter((a) => {
        const g = graphPartOf(a.replace(/^data\./, ''));
        return !a.startsWith('data.') && ((g?.scope === 'node' && nodes.includes(g.node)) || next() < 0.05);
      });
      if (targets.length === 0) targets.push(addresses.find((a) => a.startsWith('kubernetes_manifest.'))!);
      const replace = targets.filter((a) => a.includes('_rollout_') && next() < 0.5);
      const refresh = next() < 0.5;
      const why = `seed ${SEED}, round ${round}: tags ${JSON.stringify(tags)}, refresh ${refresh}, -target ${targets.join(' ')}, -replace ${replace.join(' ')}`;

      // the state as tofu wrote it (`deploy state show` hides the secret values: not a state tofu reads)
      const store = SqliteStateStore.open(join(h.env.DEPLOY_STATE_DIR!, 'state'));
      const state = await store.read(STATE_KEY).finally(() => store.close());
      expect(state, `${why}: no state`).toBeDefined();
      const facts = [];
      for (const [name, doc] of [['whole', whole], ['scoped', scopedGraph(whole, [...targets, ...replace])]] as const) {
        const dir = join(h.dir, `round-${round}-${name}`);
        await mkdir(join(dir, '.terraform'), { recursive: true });
        await symlink(join(graphDir, '.terraform', 'providers'), join(dir, '.terraform', 'providers'));
        await copyFile(join(graphDir, '.terraform.lock.hcl'), join(dir, '.terraform.lock.hcl'));
        // the same graph with the local backend: a copy of the state, nothing written back
        const { backend: _b, ...terraform } = doc.terraform as Record<string, unknown>;
        await writeFile(join(dir, 'cdk.tf.json'), JSON.stringify({ ...doc, terraform }));
        await writeFile(join(dir, 'terraform.tfstate'), state!.body);
        const args = ['plan', '-input=false', '-no-color', '-lock=false', `-refresh=${refresh}`, '-out=tfplan', ...targets.map((t) => `-target=${t}`), ...replace.map((r) => `-replace=${r}`)];
        const plan = await execa(tofu, args, { cwd: dir, env, reject: false });
        expect(plan.exitCode, `${why}: tofu plan of the ${name} graph:\n${plan.stderr}\n${plan.stdout.slice(-2000)}`).toBe(0);
        const shown = await execa(tofu, ['show', '-json', 'tfplan'], { cwd: dir, env, reject: false });
        expect(shown.exitCode, `${why}: tofu show of the ${name} plan: ${shown.stderr}`).toBe(0);
        facts.push(planFacts(JSON.parse(shown.stdout)));
      }
      const [ofWhole, ofScoped] = facts;
      if (ofWhole!.changes.some((c: any) => c.change.actions.join() !== 'no-op')) withChanges++;
      console.log(`  round ${round}: ${nodes.join(',') || '-'} targeted (${targets.length} blocks), refresh ${refresh}, ${ofWhole!.changes.length} changes`);
      expect(ofScoped, why).toEqual(ofWhole);
    }
    // the property held over plans that change something, not only over empty ones
    expect(withChanges, 'no round planned a change').toBeGreaterThan(0);
  }, 900_000);

  it('GIVEN scoped applies of random nodes THEN each changes those nodes alone and a full plan after it finds nothing to do', async () => {
    const image = async (n: string) => (await h.getJson(['get', 'deployment', n])).spec.template.spec.containers[0].image as string;
    let specs = Object.fromEntries(NODES.map((n) => [n, good]));
    for (let round = 0; round < 2; round++) {
      const changed = NODES.filter(() => next() < 0.4);
      if (changed.length === 0) changed.push(NODES[Math.floor(next() * NODES.length)]!);
      const why = `seed ${SEED}, apply ${round} of ${changed.join(',')}`;
      const fresh = await images.goodWith(`SCOPED_GRAPH=${SEED}-${round}`);
      specs = { ...specs, ...Object.fromEntries(changed.map((n) => [n, fresh])) };
      const before = Object.fromEntries(await Promise.all(NODES.map(async (n) => [n, await image(n)] as const)));
      const plan = await planWith(`apply-${round}`, specs);
      const applied = await h.deploy('apply', plan, ['--target', 'all'], {}, { json: false });
      expect(applied.exitCode, `${why}: ${applied.stderr}`).toBe(0);
      expect(applied.stderr, `${why}: not a scoped plan`).toContain('changed in the graph: planned alone (-target)');
      for (const n of NODES) {
        const now = await image(n);
        if (changed.includes(n)) expect(now, `${why}: ${n} keeps its image`).not.toBe(before[n]);
        else expect(now, `${why}: ${n}'s image changed`).toBe(before[n]);
      }
      const full = await h.deploy('plan', plan, ['--target', 'all'], { DEPLOY_FAST_PLAN: 'off' });
      expect(full.exitCode, `${why}: the full plan after it: ${full.stderr}`).toBe(0);
      expect(full.json.targets[0].changes, `${why}: the full plan after the scoped apply has changes:\n${full.stdout}`).toBe(false);
    }
  }, 900_000);
});
