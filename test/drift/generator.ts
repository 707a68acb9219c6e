/**
 * The generated drift test (issue 45): random hand edits of a node's Deployment, made as an
 * operator's tools make them, and after each round the promise of law 13 checked whole:
 *   - the fast plan and the full plan (DEPLOY_FAST_PLAN=off) name the same hand edits, at least one;
 *   - one apply exits 0;
 *   - the Deployment's spec, labels and annotations equal what the graph's apply made;
 *   - the pod is Ready, with the same machine ID and the same /var/lib;
 *   - the next plan is verified.
 * An edit is one operation (change, remove or add) at a random path of the live object's spec,
 * labels or annotations, written with a random patch type (JSON patch, merge, strategic merge,
 * a get-and-replace, or a server-side apply) under a random field manager; one to three edits a
 * round. What the API server refuses, or accepts without a change to the object, is dropped and
 * counted. The seed is printed; DEPLOY_DRIFT_SEED replays it, DEPLOY_DRIFT_ROUNDS sets the rounds.
 * Two suites define rounds with it: test/e2e/deploy-drift-generated.test.ts in `npm test` (25
 * rounds of a seed that passed here, so that CI checks the property on the same cases), and
 * test/drift/drift.test.ts, `npm run test:drift` (a new seed each run, 200 rounds: the search).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAST_ROLLOUT_ANNOTATION } from '../../src/rollout/last-rollout.js';
import { seededRandom } from '../support/seeded-random.js';
import { DeployHarness, deploymentShape, images } from '../e2e/harness.js';

let random: () => number = seededRandom(0);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;

type Step = string | number;
type Json = unknown;

/** Fields that are the cluster's, deploy's own, or kept by rule (hand-edits.ts): never edited here. */
const NOT_EDITED = [
  /^metadata\.annotations\.deployment\.kubernetes\.io\/revision$/,
  new RegExp(`^metadata\\.annotations\\.${LAST_ROLLOUT_ANNOTATION.replaceAll('.', '\\.').replaceAll('/', '\\/')}$`),
  /^spec\.template\.metadata\.annotations\.kubectl\.kubernetes\.io\/restartedAt$/,
  // the selector and its labels: immutable, or a Deployment that selects no pod of its own
  /^spec\.selector\b/,
  /^spec\.template\.metadata\.labels\.app\.kubernetes\.io\/name$/,
];

const isObject = (v: Json): v is Record<string, Json> => v !== null && typeof v === 'object' && !Array.isArray(v);
const text = (path: readonly Step[]) => path.map((s) => (typeof s === 'number' ? `[${s}]` : s)).join('.').replaceAll('.[', '[');
const pointer = (path: readonly Step[]) => `/${path.map((s) => String(s).replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;

/** Every node under spec and the Deployment's labels and annotations, with its path. */
function nodesOf(object: Json): { path: Step[]; value: Json }[] {
  const out: { path: Step[]; value: Json }[] = [];
  const visit = (v: Json, path: Step[]) => {
    if (path.length > 0 && !NOT_EDITED.some((r) => r.test(path.join('.')))) out.push({ path, value: v });
    if (Array.isArray(v)) v.forEach((x, i) => visit(x, [...path, i]));
    else if (isObject(v)) for (const [k, x] of Object.entries(v)) visit(x, [...path, k]);
  };
  const o = object as { spec?: Json; metadata?: { labels?: Json; annotations?: Json } };
  visit(o.spec, ['spec']);
  if (o.metadata?.labels) visit(o.metadata.labels, ['metadata', 'labels']);
  if (o.metadata?.annotations) visit(o.metadata.annotations, ['metadata', 'annotations']);
  return out;
}

function getAt(v: Json, path: readonly Step[]): Json {
  return path.reduce<Json>((x, s) => (x === null || typeof x !== 'object' ? undefined : (x as Record<string, Json>)[s as string]), v);
}

function setAt(v: Json, path: readonly Step[], value: Json | undefined): void {
  const parent = getAt(v, path.slice(0, -1)) as Record<string, Json> | Json[];
  const last = path.at(-1)!;
  if (Array.isArray(parent)) {
    if (value === undefined) parent.splice(last as number, 1);
    else parent[last as number] = value;
  } else if (value === undefined) delete parent[last as string];
  else parent[last as string] = value;
}

interface Edit {
  readonly op: 'change' | 'remove' | 'add';
  readonly path: Step[];
  readonly value?: Json;
  readonly how: 'json' | 'merge' | 'strategic' | 'replace' | 'apply';
  readonly manager: string;
}

/** A new value for a leaf: numbers stay small (a grace period of hours would make a round last hours). */
function otherValue(v: Json): Json {
  if (typeof v === 'number') return pick([0, 1, 2, 3, 5, 7, 9, 15].filter((n) => n !== v));
  if (typeof v === 'boolean') return !v;
  if (typeof v === 'string') return pick(['drift', 'Always', 'IfNotPresent', 'RollingUpdate', '0', 'x-1'].filter((s) => s !== v));
  return pick(['drift', 1, true]);
}

function randomEdit(object: Json, round: number, i: number): Edit {
  const manager = `drift-${Math.floor(random() * 1000)}`;
  const nodes = nodesOf(object);
  const op = pick(['change', 'change', 'remove', 'add'] as const);
  if (op === 'add') {
    const maps = nodes.filter((n) => isObject(n.value));
    const at = pick(maps);
    const key = `drift-${round}-${i}`;
    return { op, path: [...at.path, key], value: pick(['a', 'b', '1']), how: pick(['json', 'merge', 'strategic', 'replace', 'apply'] as const), manager };
  }
  if (op === 'remove') {
    const at = pick(nodes);
    // (server-side apply removes only what its manager owns: not a remover here)
    return { op, path: at.path, how: pick(['json', 'merge', 'replace'] as const), manager };
  }
  const leaves = nodes.filter((n) => n.value === null || typeof n.value !== 'object');
  const at = pick(leaves);
  return { op, path: at.path, value: otherValue(at.value), how: pick(['json', 'merge', 'strategic', 'replace', 'apply'] as const), manager };
}

/** The smallest document that sets (or, with null, removes) `path` in a merge patch: a list on the way is given whole. */
function mergeDoc(object: Json, next: Json, path: readonly Step[], removing: boolean): Json {
  const firstList = path.findIndex((s) => typeof s === 'number');
  const upto = firstList < 0 ? path.length : firstList - 1;
  let doc: Json = firstList < 0 ? (removing ? null : getAt(next, path)) : getAt(next, path.slice(0, upto + 1));
  for (let i = upto; i > 0; i--) doc = { [path[i - 1] as string]: doc };
  return doc;
}

/** Defines the suite: `rounds` rounds of the edits drawn from `seed` (DEPLOY_DRIFT_SEED and DEPLOY_DRIFT_ROUNDS override both). */
export function defineDriftRounds(defaults: { readonly seed: number; readonly rounds: number }): void {
  const SEED = Number(process.env.DEPLOY_DRIFT_SEED ?? defaults.seed);
  const ROUNDS = Number(process.env.DEPLOY_DRIFT_ROUNDS ?? defaults.rounds);
describe(`generated drift: ${ROUNDS} rounds of random hand edits, seed ${SEED} (DEPLOY_DRIFT_SEED replays)`, () => {
  let h: DeployHarness;
  let plan = '';
  let shape: Json;
  let machineId = '';
  const dropped: string[] = [];
  const made: string[] = [];

  const shapeOf = deploymentShape;
  const editsOf = (run: any) => ((run.json?.targets?.[0]?.nodes ?? []).find((n: any) => n.node === 'web')?.handEdits ?? []).map((e: any) => `${e.kind} ${e.field} ${e.writer} ${e.action}`).sort();

  async function make(e: Edit): Promise<boolean> {
    const before = await h.getJson(['get', 'deployment', 'web']);
    const next = structuredClone(before);
    setAt(next, e.path, e.op === 'remove' ? undefined : e.value);
    const removing = e.op === 'remove';
    let r;
    if (e.how === 'json') {
      const op = removing ? { op: 'remove', path: pointer(e.path) } : { op: e.op === 'add' ? 'add' : 'replace', path: pointer(e.path), value: e.value };
      r = await h.kubectl(['patch', 'deployment', 'web', '--type=json', `--field-manager=${e.manager}`, '-p', JSON.stringify([op])]);
    } else if (e.how === 'merge' || e.how === 'strategic') {
      r = await h.kubectl(['patch', 'deployment', 'web', `--type=${e.how}`, `--field-manager=${e.manager}`, '-p', JSON.stringify(mergeDoc(before, next, e.path, removing))]);
    } else if (e.how === 'replace') {
      r = await h.kubectl(['replace', `--field-manager=${e.manager}`, '-f', '-'], { input: JSON.stringify(next) });
    } else {
      const doc = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: h.namespace }, ...(mergeDoc(before, next, e.path, false) as object) };
      r = await h.kubectl(['apply', '--server-side', '--force-conflicts', `--field-manager=${e.manager}`, '-f', '-'], { input: JSON.stringify(doc) });
    }
    const what = `${e.op} ${text(e.path)}${e.value === undefined ? '' : ` = ${JSON.stringify(e.value)}`} by ${e.how} as ${e.manager}`;
    if (r.exitCode !== 0) {
      dropped.push(`${what}: refused (${r.stderr.split('\n')[0]})`);
      return false;
    }
    const after = await h.getJson(['get', 'deployment', 'web']);
    if (JSON.stringify(shapeOf(after)) === JSON.stringify(shapeOf(before))) {
      dropped.push(`${what}: accepted, no change`);
      return false;
    }
    made.push(what);
    return true;
  }

  beforeAll(async () => {
    random = seededRandom(SEED);
    console.log(`drift: seed ${SEED}, ${ROUNDS} rounds (DEPLOY_DRIFT_SEED=${SEED} replays)`);
    h = await DeployHarness.create('drift');
    const good = await images.good();
    plan = await h.writePlan('group', { web: { image: good }, mail: { image: good } });
    const first = await h.deploy('apply', plan, ['--target', 'all']);
    expect(first.exitCode, first.stderr).toBe(0);
    shape = shapeOf(await h.getJson(['get', 'deployment', 'web']));
    machineId = await h.exec('web', 'cat /etc/machine-id');
    await h.exec('web', 'echo kept > /var/lib/drift-marker');
  });
  afterAll(async () => {
    console.log(`drift: seed ${SEED}: ${made.length} edits made, ${dropped.length} dropped by the API server\n  made: ${made.join('\n  made: ')}\n  dropped: ${dropped.join('\n  dropped: ')}`);
    await h?.cleanup();
  });

  for (let round = 1; round <= ROUNDS; round++) {
    it(`round ${round} (seed ${SEED})`, async () => {
      const edits: string[] = [];
      for (let i = 0, wanted = 1 + Math.floor(random() * 3), tries = 0; edits.length < wanted && tries < 12; tries++, i++) {
        const e = randomEdit(await h.getJson(['get', 'deployment', 'web']), round, i);
        if (await make(e)) edits.push(made.at(-1)!);
      }
      if (edits.length === 0) return; // every try refused: nothing to check this round (counted above)
      const where = `seed ${SEED}, round ${round}: ${edits.join('; ')}`;
      const fast = await h.deploy('plan', plan, ['--target', 'all']);
      const full = await h.deploy('plan', plan, ['--target', 'all'], { DEPLOY_FAST_PLAN: 'off' });
      expect(fast.exitCode, `${where}\n${fast.stderr}`).toBe(0);
      expect(full.exitCode, `${where}\n${full.stderr}`).toBe(0);
      expect(fast.json.targets[0].verifiedNoop, where).toBeUndefined();
      expect(editsOf(fast).length, `${where}: the plan names no hand edit\n${fast.stdout}`).toBeGreaterThan(0);
      expect(editsOf(full), `${where}: the fast and the full plan differ`).toEqual(editsOf(fast));
      const a = await h.deploy('apply', plan, ['--target', 'all']);
      expect(a.exitCode, `${where}\n${a.stderr}`).toBe(0);
      expect(shapeOf(await h.getJson(['get', 'deployment', 'web'])), where).toEqual(shape);
      const pod = await h.podOf('web');
      expect(pod.status.conditions.find((c: any) => c.type === 'Ready')?.status, where).toBe('True');
      expect(await h.exec('web', 'cat /etc/machine-id'), where).toBe(machineId);
      expect(await h.exec('web', 'cat /var/lib/drift-marker'), where).toBe('kept');
      const next = await h.deploy('plan', plan, ['--target', 'all']);
      expect(next.json.targets[0].verifiedNoop, `${where}\n${next.stderr}`).toBe(true);
    });
  }
});
}
