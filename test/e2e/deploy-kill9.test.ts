/**
 * kill -9 at random moments (issue 50, "nothing by surprise"): the real `bin/deploy apply`
 * of a 2-node group, killed with SIGKILL (an OOM kill, a killed CI runner) at a seeded random
 * delay drawn over the span a normal apply takes here (measured first), so that the kills
 * land in every phase: the lock, the reads, tofu init, plan, the pushes (skopeo, run by deploy
 * before tofu's apply: push-first.ts), tofu's writes, the rollout steps (`deploy rollout` under tofu).
 *
 * After each kill, what an operator expects:
 * - within 30 s no process of the run is left: none of its process tree (followed while it
 *   ran: tofu, the providers, the local-exec shells, skopeo, `deploy rollout`, the guardian)
 *   and none that inherited the environment marker this test gave the run;
 * - a run that got as far as tofu had its run guardian (src/tools/run-guardian.ts): on this
 *   machine tofu and its providers also die of their broken pipes soon after deploy (with the
 *   guardian left out, 12 kills at various moments left nothing after 5 s), so the
 *   leftover check alone would not show a missing guardian;
 * - a lock the run left is reported stale, naming the killed PID, and
 *   `deploy state unlock --force-stale` frees it;
 * and after the loop the next apply converges (exit 0) and the plan after it has no changes.
 *
 * Every apply has work: the nodes alternate between two images (a push each) and each run
 * has a stop timeout of its own (a new pod template, whatever the last kill left applied).
 *
 * DEPLOY_TEST_SEED replays a sequence of moments (the seed is printed, and is in every
 * message); DEPLOY_TEST_RUNS changes the number of kills (default 10).
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeployHarness, images } from './harness.js';
import { followTree, markedProcesses, stillRunning, type Proc } from './processes.js';
import { GUARDIAN_NAME } from '../../src/tools/run-guardian.js';
import { repoRoot, type BuiltImage } from '../integration/images-scripts.js';
import { seededRandom } from '../support/seeded-random.js';

const SEED = Number(process.env.DEPLOY_TEST_SEED ?? 50_0009);
const RUNS = Number(process.env.DEPLOY_TEST_RUNS ?? 10);
const DEPLOY = join(repoRoot, 'bin', 'deploy');
const STATE_KEY = 'e2e-all';
/** The variable every process of one run inherits (tofu, its providers, the rollout steps). */
const MARK = 'DEPLOY_E2E_KILL9_RUN';
/** How long the processes of a killed run may take to end (the guardian's grace is 10 s). */
const CLEAN_WITHIN_MS = 30_000;

interface Kill {
  readonly index: number;
  readonly delayMs: number;
  readonly pid: number;
  /** The SIGKILL was sent (the run had not ended at its moment). */
  readonly sent: boolean;
  readonly exitCode: number | undefined;
  readonly signal: string | undefined;
  readonly durationMs: number;
  /** The run's last line on stderr before the kill: where it was. */
  readonly lastLine: string;
  readonly stderr: string;
  /** How long its processes took to end after the kill (undefined: some were still there at the deadline). */
  readonly cleanMs: number | undefined;
  readonly leftovers: readonly string[];
  /** The names of the processes seen in its tree while it ran. */
  readonly tree: ReadonlySet<string>;
  /** Its run guardian was seen in its tree (src/tools/run-guardian.ts). */
  readonly guardian: boolean;
}

/** One `bin/deploy apply`, killed with SIGKILL after `delayMs`, and the wait for its processes to end. */
async function killedApply(h: DeployHarness, index: number, plan: string, args: string[], delayMs: number): Promise<Kill> {
  const mark = randomUUID();
  const started = Date.now();
  const child = execa(DEPLOY, ['apply', '--plan', plan, '--target', 'all', ...args], {
    // debug: tofu's own lines too, to tell where the kill landed
    env: { ...h.env, DEPLOY_LOG_LEVEL: 'debug', [MARK]: mark },
    reject: false,
    timeout: 600_000,
    forceKillAfterDelay: false,
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += String(d)));
  const tree = followTree(child.pid!);
  let ended = false;
  let sent = false;
  let lastLine = '';
  const timer = setTimeout(() => {
    if (ended) return;
    lastLine = stderr.split('\n').filter((l) => l.includes('[all]')).at(-1) ?? '';
    sent = true;
    // bin/deploy execs node: this PID is the deploy process itself
    process.kill(child.pid!, 'SIGKILL');
  }, delayMs);
  const r = await child;
  ended = true;
  clearTimeout(timer);
  const seen = tree.stop();
  const killedAt = Date.now();
  const durationMs = killedAt - started;
  // nothing the run started may outlive it for long: poll until its tree and its marker are gone
  let leftovers: Proc[] = [];
  let cleanMs: number | undefined;
  for (;;) {
    const alive = await stillRunning(seen.values());
    const marked = await markedProcesses(MARK, mark);
    leftovers = [...new Map([...alive, ...marked].map((p) => [p.pid, p])).values()];
    if (leftovers.length === 0) {
      cleanMs = Date.now() - killedAt;
      break;
    }
    if (Date.now() - killedAt > CLEAN_WITHIN_MS) break;
    await new Promise((res) => setTimeout(res, 250));
  }
  return {
    index,
    delayMs,
    pid: child.pid!,
    sent,
    exitCode: r.exitCode,
    signal: r.signal,
    durationMs,
    lastLine: lastLine.slice(0, 110),
    stderr: r.stderr as string,
    cleanMs,
    leftovers: leftovers.map((p) => `${p.pid} ${p.comm}`),
    tree: new Set([...seen.values()].map((p) => p.comm)),
    guardian: [...tree.argv().values()].some((argv) => argv.includes(GUARDIAN_NAME)),
  };
}

/** The line of `deploy state list` for the target's state. */
async function stateLine(h: DeployHarness, why: string): Promise<string> {
  const list = await execa(DEPLOY, ['state', 'list'], { env: h.env, reject: false });
  expect(list.exitCode, `${why}: deploy state list: ${list.stderr}`).toBe(0);
  return list.stdout.split('\n').find((l) => l.includes(STATE_KEY)) ?? '';
}

/** The states that hold a lock (`deploy state list --json`). */
async function lockedStates(h: DeployHarness, why: string): Promise<string[]> {
  const list = await execa(DEPLOY, ['state', 'list', '--json'], { env: h.env, reject: false });
  expect(list.exitCode, `${why}: deploy state list: ${list.stderr}`).toBe(0);
  const states = JSON.parse(list.stdout) as { key: string; lock?: unknown }[];
  return states.filter((s) => s.lock).map((s) => `${s.key}: ${JSON.stringify(s.lock)}`);
}

function describeKill(k: Kill): string {
  const end = k.sent ? `killed, its processes gone after ${k.cleanMs ?? '>30000'} ms` : `ended first (exit ${k.exitCode})`;
  return `  apply #${String(k.index).padStart(2)}  SIGKILL at ${String(k.delayMs).padStart(6)} ms  ${end}  ${k.lastLine}`;
}

describe(`kill -9 of deploy apply at random moments (seed ${SEED}, DEPLOY_TEST_SEED replays)`, () => {
  let h: DeployHarness;
  let plans: [string, string];
  const started = Date.now();

  beforeAll(async () => {
    console.log(`deploy-kill9: seed ${SEED} (DEPLOY_TEST_SEED=${SEED} replays), ${RUNS} kills`);
    h = await DeployHarness.create('kill9');
    const [a, b]: BuiltImage[] = [await images.good(), await images.goodWith('kill9=b')];
    plans = [await h.writePlan('a', { n1: { image: a! }, n2: { image: a! } }), await h.writePlan('b', { n1: { image: b! }, n2: { image: b! } })];
    const first = await h.deploy('apply', plans[0], ['--target', 'all', '--stop-timeout', '2s'], {}, { json: false });
    expect(first.exitCode, first.stderr).toBe(0);
  });
  afterAll(async () => {
    console.log(`deploy-kill9: ${Math.round((Date.now() - started) / 1000)} s in all`);
    await h?.cleanup();
  });

  it(`GIVEN an applied 2-node target WHEN ${RUNS} applies, each with work, get SIGKILL at a random moment THEN within 30 s none of their processes is left, the lock is reported stale and freed, and the next apply converges`, async () => {
    const next = seededRandom(SEED);
    // a normal apply to the other image, timed: the span the kills are drawn over
    const t0 = Date.now();
    const normal = await h.deploy('apply', plans[1], ['--target', 'all', '--stop-timeout', '3s'], {}, { json: false });
    let span = Date.now() - t0;
    expect(normal.exitCode, normal.stderr).toBe(0);
    const kills: Kill[] = [];
    let locksFreed = 0;
    for (let i = 0; i < RUNS; i++) {
      const delayMs = Math.floor(next() * span);
      const k = await killedApply(h, i, plans[i % 2]!, ['--stop-timeout', `${4 + i}s`], delayMs);
      kills.push(k);
      console.log(describeKill(k));
      const why = `seed ${SEED}, apply #${i}, SIGKILL after ${delayMs} ms (${k.lastLine || 'no line yet'})`;
      const tail = k.stderr.split('\n').slice(-15).join('\n');
      if (!k.sent) {
        // a run that ended before its moment: a normal apply, which shortens the span
        expect(k.exitCode, `${why}: ended first, exit ${k.exitCode}:\n${tail}`).toBe(0);
        span = Math.min(span, k.durationMs);
        continue;
      }
      expect(k.signal, `${why}: the deploy process was not killed by the SIGKILL:\n${tail}`).toBe('SIGKILL');
      expect(k.leftovers, `${why}: processes of the killed run still running after ${CLEAN_WITHIN_MS} ms`).toEqual([]);
      // here tofu and the providers also die of their broken pipes soon after deploy (without
      // the guardian too, in the runs measured): so the guardian must have been there, and gone
      if (k.tree.has('tofu')) expect(k.guardian, `${why}: tofu ran, but no run guardian was seen in the run's tree`).toBe(true);
      const line = await stateLine(h, why);
      if (/STALE/.test(line)) {
        // the lock the killed run held: reported stale with its holder, freed by --force-stale
        expect(line, `${why}: the stale lock names another PID`).toContain(`STALE: pid ${k.pid} no longer runs`);
        const unlock = await execa(DEPLOY, ['state', 'unlock', '--force-stale', '--key', STATE_KEY], { env: h.env, reject: false });
        expect(unlock.exitCode, `${why}: deploy state unlock --force-stale: ${unlock.stdout}\n${unlock.stderr}`).toBe(0);
        expect(unlock.stdout, why).toMatch(/^released lock /);
        locksFreed++;
      }
      expect(await lockedStates(h, why), `${why}: a lock is left that is not reported stale, or was not freed`).toEqual([]);
    }
    const killed = kills.filter((k) => k.sent);
    const slowest = Math.max(0, ...killed.map((k) => k.cleanMs ?? CLEAN_WITHIN_MS));
    console.log(`seed ${SEED}: ${killed.length} killed, ${RUNS - killed.length} ended first; ${locksFreed} stale locks freed; the slowest run took ${slowest} ms to have no process left`);
    // the kills really landed, and the tree was followed (else the leftover check proves nothing)
    expect(killed.length, 'most runs must really be killed').toBeGreaterThan(RUNS / 2);
    expect(locksFreed, 'most kills must land while the lock is held').toBeGreaterThan(killed.length / 2);
    expect(kills.some((k) => k.tree.has('tofu')), 'no run saw tofu in its process tree').toBe(true);

    // the next run converges: an apply, then a plan that has nothing to do
    const converge = await h.deploy('apply', plans[0], ['--target', 'all', '--stop-timeout', '30s']);
    expect(converge.exitCode, converge.stderr).toBe(0);
    const again = await h.deploy('plan', plans[0], ['--target', 'all', '--stop-timeout', '30s']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.json.targets[0].changes, again.stdout).toBe(false);
    expect(await lockedStates(h, 'after the converging apply')).toEqual([]);
  }, 1_800_000);
});
