/**
 * Ctrl-C at random moments (issue 30): the real `bin/deploy apply` and `bin/deploy destroy`
 * against the local cluster, each run given one SIGINT at a seeded random delay drawn over
 * the span a normal run of that verb takes here (measured first), so that the signals land
 * in every phase: the lock, the cluster reads, tofu init, plan, the image push, tofu's
 * writes, the rollout wait, the release of the lock.
 *
 * After each run, what an operator who pressed Ctrl-C expects:
 * - exit 130 (or 0 when the run had finished its work before the signal landed: counted, and
 *   most runs must really be interrupted), never a failure code;
 * - the words "stopping cleanly", and a line saying what was left undone;
 * - no lock left on the state, and no run directory left behind;
 * - the state readable: valid JSON, the same lineage, a serial that never went back;
 * - nothing the run started still running (its process tree, followed while it ran, and
 *   every process that inherited the run's own environment marker);
 * and after the loop, the next run converges: an apply exits 0 and the plan after it is a
 * no-op; a destroy exits 0 and leaves no namespace and no resource in the state.
 *
 * Every apply has a change (a stop timeout of its own: a new pod template), so that each
 * apply really pushes its plan through tofu and waits for a new pod. Those changes push no
 * image, so a third set of applies gives each a new image and draws its moment inside the
 * pushes deploy makes before tofu's apply (push-first.ts: counted from the line that says
 * they began): a run stopped there must also leave the Deployment and its pod as they were
 * (edge case 2's promise, under Ctrl-C). A destroy needs
 * something to destroy: the target is applied again before a destroy whenever the previous
 * one removed anything.
 *
 * DEPLOY_TEST_SEED replays a sequence of moments (the seed is printed, and is in every
 * message); DEPLOY_TEST_RUNS changes the number of runs per verb (default 20),
 * DEPLOY_TEST_PUSH_RUNS the number of applies with a new image (default 8).
 */
import { randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeployHarness, images } from './harness.js';
import { followTree, markedProcesses, stillRunning } from './processes.js';
import { repoRoot, type BuiltImage } from '../integration/images-scripts.js';
import { seededRandom } from '../support/seeded-random.js';

const SEED = Number(process.env.DEPLOY_TEST_SEED ?? 30_3001);
const RUNS = Number(process.env.DEPLOY_TEST_RUNS ?? 20);
const DEPLOY = join(repoRoot, 'bin', 'deploy');
const STATE_KEY = 'e2e-all';
/** The variable every process of one run inherits (tofu, its providers, the rollout steps). */
const MARK = 'DEPLOY_E2E_INTERRUPT_RUN';
/** Applies with a new image each, the signal drawn inside the pushes before tofu's apply (default 8). */
const PUSH_RUNS = Number(process.env.DEPLOY_TEST_PUSH_RUNS ?? 8);
/** deploy's line as the pushes before tofu's apply start, and its line as tofu's apply starts. */
const PUSH_LINE = /\[all\] pushing .* before tofu's apply/;
const TOFU_APPLY_LINE = /\[all\] tofu apply$/;

interface Run {
  readonly verb: 'apply' | 'destroy';
  readonly index: number;
  readonly delayMs: number;
  readonly exitCode: number | undefined;
  /** The signal that ended bin/deploy itself (only before it listens for signals). */
  readonly killedBy: string | undefined;
  /** The SIGINT was sent (the run had not ended at its moment). */
  readonly sent: boolean;
  readonly durationMs: number;
  /** The run's last line on stderr before the signal: where it was. */
  readonly lastLine: string;
  readonly phase: string;
  readonly stdout: string;
  readonly stderr: string;
  /** Processes of the run still alive after it ended (by its tree and by its marker). */
  readonly leftovers: readonly string[];
  /** The names of the processes seen in its tree while it ran. */
  readonly tree: ReadonlySet<string>;
  /** When (ms from its start) the run said its pushes began, and when tofu's apply began. */
  readonly pushAt: number | undefined;
  readonly tofuApplyAt: number | undefined;
}

/**
 * When the SIGINT is sent: `delayMs` after the run starts, or after its first line that matches
 * `after` (a moment inside one phase, whatever the phases before it took); none: never.
 */
interface Moment {
  readonly delayMs: number;
  readonly after?: RegExp;
}

/**
 * Where a run was when the signal came, from its lines so far: the last tofu command it
 * started (deploy's own `[all] tofu init|plan|apply` notes), and within an apply the last
 * resource tofu worked on.
 */
function phaseOf(lines: readonly string[]): string {
  const steps = lines.filter((l) => /\[all\] (tofu (init|plan|apply)|graph .*initialised as before)/.test(l));
  const step = steps.at(-1);
  if (step === undefined) return lines.some((l) => l.includes('state lock taken')) ? 'locked, reads' : 'start';
  if (/initialised as before|tofu init/.test(step)) return 'init';
  // the pushes deploy makes before tofu's apply (push-first.ts) come after the plan
  if (/tofu plan/.test(step)) return lines.slice(lines.lastIndexOf(step) + 1).some((l) => PUSH_LINE.test(l)) ? 'push first' : 'plan';
  const after = lines.slice(lines.lastIndexOf(step) + 1).filter((l) => /\[all\] \S+\.\S+: /.test(l));
  const last = after.at(-1);
  if (last === undefined) return 'tofu apply';
  if (/delete/.test(last)) return 'deleting';
  if (/_push_/.test(last)) return 'push';
  if (/_rollout_.*(create|local-exec)/.test(last)) return 'rollout wait';
  return 'tofu apply';
}

/** The run's last words: the line that says how it ended (not the "SIGINT received" one). */
function lastWords(stderr: string): string {
  const words = stderr.split('\n').filter((l) => /^deploy: /.test(l) && !l.includes('received: stopping cleanly'));
  return words.at(-1) ?? '';
}

/** One run of `bin/deploy <verb>` with one SIGINT at its moment (none: not sent), followed to its last process. */
async function interruptedRun(h: DeployHarness, verb: Run['verb'], index: number, plan: string, args: string[], moment: Moment | undefined): Promise<Run> {
  const delayMs = moment?.delayMs ?? -1;
  const mark = randomUUID();
  const started = Date.now();
  const child = execa(DEPLOY, [verb, '--plan', plan, '--target', 'all', ...args], {
    // debug: tofu's own lines too (`n1_rollout_...: Still creating`), to tell where the signal landed
    env: { ...h.env, DEPLOY_LOG_LEVEL: 'debug', [MARK]: mark },
    reject: false,
    timeout: 600_000,
    forceKillAfterDelay: false,
  });
  let ended = false;
  let stderr = '';
  let sent = false;
  let lastLine = '';
  let phase = '';
  let pushAt: number | undefined;
  let tofuApplyAt: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  /** The last line so far, while it has no end yet (a line may come in two chunks). */
  let partial = '';
  const send = () => {
    if (ended || child.pid === undefined) return;
    const lines = stderr.split('\n').filter((l) => l.trim() !== '');
    lastLine = lines.filter((l) => l.includes('[all]')).at(-1) ?? '';
    phase = phaseOf(lines);
    sent = true;
    process.kill(child.pid, 'SIGINT');
  };
  child.stderr!.on('data', (d) => {
    stderr += String(d);
    const lines = (partial + String(d)).split('\n');
    partial = lines.pop()!;
    const now = Date.now() - started;
    for (const l of lines) {
      if (pushAt === undefined && PUSH_LINE.test(l)) pushAt = now;
      if (tofuApplyAt === undefined && TOFU_APPLY_LINE.test(l)) tofuApplyAt = now;
      if (moment?.after !== undefined && timer === undefined && moment.after.test(l)) timer = setTimeout(send, moment.delayMs);
    }
  });
  // the run's process tree, followed while it runs: its children are re-parented once it ends
  const tree = followTree(child.pid!);
  if (moment !== undefined && moment.after === undefined) timer = setTimeout(send, moment.delayMs);
  const r = await child;
  ended = true;
  clearTimeout(timer);
  const seen = tree.stop();
  const durationMs = Date.now() - started;
  // nothing the run started may outlive it (deploy waits for tofu's whole process group): a
  // second for an orphan's last moments, then every one still there is a leftover
  let leftovers: string[] = [];
  for (let tries = 0; tries < 4; tries++) {
    const alive = await stillRunning(seen.values());
    const marked = await markedProcesses(MARK, mark);
    leftovers = [...new Set([...alive, ...marked].map((p) => `${p.pid} ${p.comm}`))];
    if (leftovers.length === 0) break;
    await new Promise((res) => setTimeout(res, 300));
  }
  return {
    verb,
    index,
    delayMs,
    exitCode: r.exitCode,
    killedBy: r.signal,
    sent,
    durationMs,
    lastLine: lastLine.slice(0, 110),
    phase: sent ? phase : 'ended first',
    stdout: r.stdout as string,
    stderr: r.stderr as string,
    leftovers,
    tree: new Set([...seen.values()].map((p) => p.comm)),
    pushAt,
    tofuApplyAt,
  };
}

interface StateFacts {
  readonly lineage: string;
  readonly serial: number;
  readonly resources: number;
}

/** The target's state as `deploy state show` prints it: valid JSON with a lineage and a serial. */
async function readState(h: DeployHarness, why: string): Promise<StateFacts> {
  const show = await execa(DEPLOY, ['state', 'show', STATE_KEY], { env: h.env, reject: false });
  expect(show.exitCode, `${why}: deploy state show: ${show.stderr}`).toBe(0);
  let doc: { lineage?: unknown; serial?: unknown; resources?: unknown[] };
  try {
    doc = JSON.parse(show.stdout);
  } catch (err) {
    throw new Error(`${why}: the state is not JSON (${(err as Error).message}): ${show.stdout.slice(0, 300)}`);
  }
  expect(typeof doc.lineage, `${why}: the state has no lineage`).toBe('string');
  expect(typeof doc.serial, `${why}: the state has no serial`).toBe('number');
  return { lineage: doc.lineage as string, serial: doc.serial as number, resources: doc.resources?.length ?? 0 };
}

/** The states that hold a lock (`deploy state list --json`, as an operator would look). */
async function lockedStates(h: DeployHarness, why: string): Promise<string[]> {
  const list = await execa(DEPLOY, ['state', 'list', '--json'], { env: h.env, reject: false });
  expect(list.exitCode, `${why}: deploy state list: ${list.stderr}`).toBe(0);
  const states = JSON.parse(list.stdout) as { key: string; lock?: unknown }[];
  return states.filter((s) => s.lock).map((s) => `${s.key}: ${JSON.stringify(s.lock)}`);
}

/** Run directories a run left (each run removes its own when it ends). */
async function runDirsLeft(h: DeployHarness): Promise<string[]> {
  return readdir(join(h.env.DEPLOY_STATE_DIR!, 'runs')).catch(() => []);
}

/** The checks every interrupted run must pass; `before` is the state before it. */
async function expectStoppedCleanly(h: DeployHarness, run: Run, before: StateFacts): Promise<StateFacts> {
  const why = `seed ${SEED}, ${run.verb} run ${run.index}, SIGINT after ${run.delayMs} ms (${run.phase})`;
  const tail = run.stderr.split('\n').slice(-25).join('\n');
  if (run.killedBy !== undefined) {
    // only before node has installed its handlers (a few hundred ms into the run): the shell
    // reports 130 all the same, and nothing was started
    expect(run.killedBy, `${why}: bin/deploy killed by a signal:\n${tail}`).toBe('SIGINT');
  } else if (run.sent && run.exitCode === 130) {
    expect(run.stderr, `${why}: no "stopping cleanly":\n${tail}`).toContain('SIGINT received: stopping cleanly');
    // the words say that the run was interrupted and what it left: the last line on stderr,
    // or, when a rollout step was waiting, its report in the summary on stdout
    const words = /^deploy: .*interrupt/im.test(run.stderr) || /: interrupted: /.test(run.stdout);
    expect(words, `${why}: no words saying it was interrupted:\n${tail}\n--- stdout\n${run.stdout.slice(-1500)}`).toBe(true);
    expect(run.stderr, `${why}:\n${tail}`).not.toMatch(/deploy: unexpected error|may stay held|lock may still be held/);
    // the last message lists no problem that only the interrupt caused: tofu's "execution
    // halted", a provider's handshake cut short ("the plugin was not compiled for this
    // architecture"). (The run's log level is debug, which echoes every tofu event as is; at
    // the default level the echo leaves them out too: test/unit/workflow/target/tofu-events-shown.test.ts.)
    const at = run.stderr.search(/^deploy: tofu \S+ was interrupted/m);
    const last = at < 0 ? '' : run.stderr.slice(at);
    expect(last, `${why}: the last message lists an error only the interrupt caused:\n${tail}`).not.toMatch(/execution halted|not compiled for this architecture|Unrecognized remote plugin message/);
  } else {
    expect(run.exitCode, `${why}: exit code ${run.exitCode} (130 for an interrupt, 0 for a run that finished its work):\n${tail}\n--- stdout\n${run.stdout.slice(-1500)}`).toBe(0);
    expect(run.stdout, `${why}: exit 0 without the summary`).toMatch(/^targets: all$/m);
  }
  expect(run.leftovers, `${why}: processes of the run still running`).toEqual([]);
  expect(await lockedStates(h, why), `${why}: a lock was left`).toEqual([]);
  expect(await runDirsLeft(h), `${why}: run directories left`).toEqual([]);
  const after = await readState(h, why);
  expect(after.lineage, `${why}: the lineage changed`).toBe(before.lineage);
  expect(after.serial, `${why}: the serial went back`).toBeGreaterThanOrEqual(before.serial);
  return after;
}

/** One line per run, said as it ends (a failure later still shows where the earlier ones landed). */
function describeRun(r: Run): string {
  const words = lastWords(r.stderr) || r.stdout.split('\n').find((l) => /: interrupted: /.test(l))?.trim() || '';
  return `  ${r.verb} #${String(r.index).padStart(2)}  SIGINT at ${String(r.delayMs).padStart(6)} ms  exit ${String(r.exitCode ?? r.killedBy).padStart(3)}  after ${String(r.durationMs).padStart(6)} ms  ${r.phase.padEnd(13)} ${r.lastLine}\n      ${words.slice(0, 220)}`;
}

function report(runs: readonly Run[], spanMs: number): { interrupted: number; finished: number } {
  const interrupted = runs.filter((r) => r.sent && (r.exitCode === 130 || r.killedBy === 'SIGINT')).length;
  const phases = new Map<string, number>();
  for (const r of runs) phases.set(r.phase, (phases.get(r.phase) ?? 0) + 1);
  console.log(
    `seed ${SEED}: ${runs[0]?.verb} over a span of ${spanMs} ms: ${interrupted} interrupted, ${runs.length - interrupted} finished first; where: ${[...phases].map(([p, n]) => `${p} ${n}`).join(', ')}`,
  );
  // the process tree was followed: tofu was seen below bin/deploy (else the leftover check proves nothing)
  expect(runs.some((r) => r.tree.has('tofu')), 'no run saw tofu in its process tree').toBe(true);
  return { interrupted, finished: runs.length - interrupted };
}

describe(`Ctrl-C at random moments into apply and destroy (seed ${SEED}, DEPLOY_TEST_SEED replays)`, () => {
  let h: DeployHarness;
  let good: BuiltImage;
  let plan: string;
  let lineage: string;
  const started = Date.now();

  beforeAll(async () => {
    console.log(`deploy-interrupt-random: seed ${SEED} (DEPLOY_TEST_SEED=${SEED} replays), ${RUNS} runs per verb`);
    h = await DeployHarness.create('sigint-rnd');
    good = await images.good();
    plan = await h.writePlan('group', { n1: { image: good } });
    const first = await h.deploy('apply', plan, ['--target', 'all', '--stop-timeout', '2s'], {}, { json: false });
    expect(first.exitCode, first.stderr).toBe(0);
    lineage = (await readState(h, 'after the first apply')).lineage;
  });
  afterAll(async () => {
    console.log(`deploy-interrupt-random: ${Math.round((Date.now() - started) / 1000)} s in all`);
    await h?.cleanup();
  });

  it(`GIVEN an applied target WHEN ${RUNS} applies, each with a change, get one SIGINT at a random moment THEN each exits 130 leaving no lock, no process and an intact state, and the next apply converges`, async () => {
    const next = seededRandom(SEED);
    // a normal apply of one change, timed: the span the signals are drawn over
    const t0 = Date.now();
    const normal = await h.deploy('apply', plan, ['--target', 'all', '--stop-timeout', '3s'], {}, { json: false });
    // a run that ends before its signal shortens the span: the host's load changes under the test
    let span = Date.now() - t0;
    expect(normal.exitCode, normal.stderr).toBe(0);
    let state = await readState(h, 'after the timed apply');
    const runs: Run[] = [];
    for (let i = 0; i < RUNS; i++) {
      // a stop timeout of its own: the pod template changes, every apply has work to do
      const stop = `${4 + i}s`;
      const delayMs = Math.floor(next() * span);
      const run = await interruptedRun(h, 'apply', i, plan, ['--stop-timeout', stop], { delayMs });
      runs.push(run);
      if (!run.sent) span = Math.min(span, run.durationMs);
      console.log(describeRun(run));
      state = await expectStoppedCleanly(h, run, state);
      if (run.exitCode === 0) {
        // a run that says it finished did: the Deployment has this run's stop timeout
        const d = await h.getJson(['get', 'deployment', 'n1']);
        expect(d.spec.template.spec.terminationGracePeriodSeconds, `seed ${SEED}, apply run ${i}: exit 0 but not applied`).toBe(4 + i);
      }
    }
    const { interrupted } = report(runs, span);
    expect(interrupted, 'most runs must really be interrupted').toBeGreaterThan(RUNS / 2);
    expect(state.lineage).toBe(lineage);

    // the next run converges: an apply, then a plan that has nothing to do
    const converge = await h.deploy('apply', plan, ['--target', 'all', '--stop-timeout', '30s']);
    expect(converge.exitCode, converge.stderr).toBe(0);
    const again = await h.deploy('plan', plan, ['--target', 'all', '--stop-timeout', '30s']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.json.targets[0].changes, again.stdout).toBe(false);
    expect(await lockedStates(h, 'after the converging apply')).toEqual([]);
  }, 1_800_000);

  it(`GIVEN an applied target WHEN ${PUSH_RUNS} applies, each with a new image, get one SIGINT at a random moment of the pushes before tofu's apply THEN each exits 130 with the Deployment and its pod as before, no process, no lock and an intact state, and the next apply converges`, async () => {
    const next = seededRandom(SEED + 2);
    const args = ['--stop-timeout', '30s'];
    // one image per run (and one for the timed run), each with a layer the registry has not
    // seen: each push uploads, as an operator's new image does
    const fresh: BuiltImage[] = [];
    for (let i = 0; i <= PUSH_RUNS; i++) fresh.push(await images.goodWith(`SIGINT_PUSH=${SEED}-${i}-${Date.now()}`));
    const planOf = (i: number) => h.writePlan(`push-${i}`, { n1: { image: fresh[i]! } });
    // a normal apply with a new image, its lines timed: the pushes' span the signals are drawn over
    const timed = await interruptedRun(h, 'apply', -1, await planOf(0), args, undefined);
    expect(timed.exitCode, timed.stderr).toBe(0);
    expect(timed.pushAt, `the timed apply said no "pushing ... before tofu's apply":\n${timed.stderr.slice(-2000)}`).toBeDefined();
    expect(timed.tofuApplyAt, 'the timed apply said no "tofu apply"').toBeDefined();
    // a little past tofu's start too: a signal as tofu's apply begins is the border of the phase
    const span = Math.max(50, Math.round((timed.tofuApplyAt! - timed.pushAt!) * 1.2));
    let state = await readState(h, 'after the timed apply');
    const runs: Run[] = [];
    let beforeTofu = 0;
    for (let i = 1; i <= PUSH_RUNS; i++) {
      const image = (await h.getJson(['get', 'deployment', 'n1'])).spec.template.spec.containers[0].image as string;
      const pod = (await h.podOf('n1')).metadata.uid as string;
      const delayMs = Math.floor(next() * span);
      const run = await interruptedRun(h, 'apply', i, await planOf(i), args, { delayMs, after: PUSH_LINE });
      runs.push(run);
      console.log(describeRun(run));
      state = await expectStoppedCleanly(h, run, state);
      const why = `seed ${SEED}, push run ${i}, SIGINT ${delayMs} ms after the pushes began (${run.phase})`;
      if (run.sent && run.exitCode === 130 && run.tofuApplyAt === undefined) {
        // stopped before tofu's apply: deploy says so, and the cluster has not changed
        beforeTofu++;
        expect(run.stderr, `${why}: no word that nothing was changed`).toContain("interrupted before tofu's apply: nothing in the cluster was changed");
        expect((await h.getJson(['get', 'deployment', 'n1'])).spec.template.spec.containers[0].image, `${why}: the Deployment's image changed`).toBe(image);
        expect((await h.podOf('n1')).metadata.uid, `${why}: the pod was replaced`).toBe(pod);
      }
    }
    const { interrupted } = report(runs, span);
    console.log(`push moments: ${beforeTofu} of ${runs.length} runs stopped before tofu's apply`);
    expect(interrupted, 'most runs must really be interrupted').toBeGreaterThan(PUSH_RUNS / 2);
    expect(beforeTofu, "no signal landed in the pushes before tofu's apply").toBeGreaterThan(0);

    // the next run converges: the last image applied, then the target as the other tests have it
    for (const [what, p] of [['the last image', await planOf(PUSH_RUNS)], ['the first image', plan]] as const) {
      const converge = await h.deploy('apply', p, ['--target', 'all', ...args]);
      expect(converge.exitCode, `${what}: ${converge.stderr}`).toBe(0);
    }
    const again = await h.deploy('plan', plan, ['--target', 'all', ...args]);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.json.targets[0].changes, again.stdout).toBe(false);
    expect(await lockedStates(h, 'after the converging apply')).toEqual([]);
  }, 1_800_000);

  it(`GIVEN an applied target WHEN ${RUNS} destroys get one SIGINT at a random moment THEN each exits 130 leaving no lock, no process and an intact state, and the next destroy removes everything`, async () => {
    const next = seededRandom(SEED + 1);
    const args = ['--target', 'all', '--stop-timeout', '30s'];
    // a normal destroy, timed, and the target applied again
    const t0 = Date.now();
    const normal = await h.deploy('destroy', plan, args, {}, { json: false });
    let span = Date.now() - t0;
    expect(normal.exitCode, normal.stderr).toBe(0);
    expect((await h.kubectl(['get', 'namespace', h.namespace], { namespace: null })).exitCode).not.toBe(0);

    /** Applies the target again (after a destroy that removed some or all of it). */
    const restore = async (why: string): Promise<StateFacts> => {
      // a namespace still terminating refuses new objects: wait for it to go (at most 2 min)
      for (let t = 0; t < 120; t++) {
        const ns = await h.kubectl(['get', 'namespace', h.namespace, '-o', 'jsonpath={.status.phase}'], { namespace: null });
        if (ns.exitCode !== 0 || ns.stdout !== 'Terminating') break;
        await new Promise((res) => setTimeout(res, 1000));
      }
      const r = await h.deploy('apply', plan, args, {}, { json: false });
      expect(r.exitCode, `${why}: the apply that restores the target: ${r.stderr}`).toBe(0);
      return readState(h, why);
    };
    /** The namespace active and the node's Deployment in it (a destroy may delete before it records). */
    const targetWhole = async (): Promise<boolean> => {
      const ns = await h.kubectl(['get', 'namespace', h.namespace, '-o', 'jsonpath={.status.phase}'], { namespace: null });
      return ns.exitCode === 0 && ns.stdout === 'Active' && (await h.kubectl(['get', 'deployment', 'n1'])).exitCode === 0;
    };
    let applied = await restore('after the timed destroy');
    let state = applied;
    let restores = 0;
    const runs: Run[] = [];
    for (let i = 0; i < RUNS; i++) {
      if (state.serial !== applied.serial || !(await targetWhole())) {
        // the last destroy removed something: apply again, so that this one has all to destroy
        applied = await restore(`seed ${SEED}, before destroy run ${i}`);
        state = applied;
        restores++;
      }
      const delayMs = Math.floor(next() * span);
      const run = await interruptedRun(h, 'destroy', i, plan, ['--stop-timeout', '30s'], { delayMs });
      runs.push(run);
      if (!run.sent) span = Math.min(span, run.durationMs);
      console.log(describeRun(run));
      state = await expectStoppedCleanly(h, run, state);
      if (run.exitCode === 0) {
        // a destroy that says it finished did: no namespace, no resource in the state
        expect((await h.kubectl(['get', 'namespace', h.namespace], { namespace: null })).exitCode, `seed ${SEED}, destroy run ${i}: exit 0 but the namespace is there`).not.toBe(0);
        expect(state.resources, `seed ${SEED}, destroy run ${i}: exit 0 but resources in the state`).toBe(0);
      }
    }
    const { interrupted } = report(runs, span);
    console.log(`destroy: the target was applied again ${restores} times between the runs`);
    expect(interrupted, 'most runs must really be interrupted').toBeGreaterThan(RUNS / 2);
    expect(state.lineage).toBe(lineage);

    // the next destroy converges: exit 0, the namespace gone, nothing left in the state
    const last = await h.deploy('destroy', plan, args, {}, { json: false });
    expect(last.exitCode, last.stderr).toBe(0);
    expect((await h.kubectl(['get', 'namespace', h.namespace], { namespace: null })).exitCode).not.toBe(0);
    const end = await readState(h, 'after the last destroy');
    expect(end.resources).toBe(0);
    expect(end.lineage).toBe(lineage);
    expect(await lockedStates(h, 'after the last destroy')).toEqual([]);
  }, 1_800_000);
});
