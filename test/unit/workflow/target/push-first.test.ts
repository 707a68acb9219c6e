/**
 * The pushes before tofu's apply (push-first.ts), as a process wrapper: each push step of the
 * graph found and run as tofu would run it (its template escapes undone, in the directory and
 * environment given), at most PUSH_PARALLELISM at once, its events given to the view; a failed
 * push named with its words after every push ended; an interrupt. The steps here are fixture
 * scripts; the real push steps run against the real registry in e2e (deploy-edges.test.ts:
 * one node's push of two fails; deploy-build.test.ts: a build that fails).
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DeployError, ExitCode, InterruptedError } from '../../../../src/errors.js';
import { formatStepLine } from '../../../../src/contract/step-lines.js';
import type { GraphDocument } from '../../../../src/contract/graph/graph-document.js';
import { graphPushes, PUSH_PARALLELISM, pushFirst, untemplate } from '../../../../src/workflow/target/push-first.js';
import type { TofuEvent } from '../../../../src/tools/tofu/tofu-events.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

/** A graph whose push step of each node runs `script(node)` (written as tofu's template: `$${` for `${`). */
function graphOf(nodes: readonly string[], script: (node: string) => string): GraphDocument {
  const pushes = Object.fromEntries(nodes.map((n, i) => [`image-${n}_push_0A1B2C${String(i).padStart(2, '0')}`, { triggers: { ref: `reg/${n}:t` }, provisioner: [{ 'local-exec': { command: script(n) } }] }]));
  return { resource: { null_resource: { ...pushes, 'node-x_rollout_0A1B2C3F': { provisioner: [{ 'local-exec': { command: 'exit 9' } }] } } } };
}

async function run(nodes: readonly string[], script: (node: string) => string, signal = new AbortController().signal) {
  const dir = await mkdtemp(join(tmpdir(), 'push-first-'));
  dirs.push(dir);
  const events: TofuEvent[] = [];
  const done = pushFirst({ target: 'all', graph: graphOf(nodes, script), nodes: new Set(nodes), env: { PATH: process.env.PATH, DEPLOY_RUN_DIR: dir }, dir, signal, onEvent: (e) => events.push(e) });
  return { dir, events, done };
}

describe('untemplate', () => {
  it("undoes tofu's escapes and keeps the shell's own dollars", () => {
    expect(untemplate('a="$${X:-}"; b=$$; c=%%{ d; e=$$$${Y}')).toBe('a="${X:-}"; b=$$; c=%{ d; e=$$${Y}');
  });
  it('refuses an interpolation, which only tofu could evaluate', () => {
    expect(() => untemplate('echo ${var.x}')).toThrow(/holds a template/);
    expect(() => untemplate('%{ if x }')).toThrow(/holds a template/);
  });
});

describe('graphPushes', () => {
  it("finds each node's push step, and only the nodes asked for", () => {
    const g = graphOf(['a', 'b', 'c'], (n) => `echo $\${${n}}`);
    expect(graphPushes(g, new Set(['c', 'a']))).toEqual([
      { node: 'a', address: 'null_resource.image-a_push_0A1B2C00', script: 'echo ${a}' },
      { node: 'c', address: 'null_resource.image-c_push_0A1B2C02', script: 'echo ${c}' },
    ]);
  });
  it('a node without a push step in the graph is a defect, said as one', () => {
    expect(() => graphPushes(graphOf(['a'], () => 'true'), new Set(['a', 'zz']))).toThrow(/no push step for zz/);
  });
});

describe('pushFirst', () => {
  it('runs each push in the directory and environment given, at most PUSH_PARALLELISM at once, and gives its events', async () => {
    const nodes = Array.from({ length: PUSH_PARALLELISM + 5 }, (_, i) => `n${i}`);
    // each step counts the steps running with it (a file each), then leaves its digest
    const { dir, events, done } = await run(nodes, (n) => `touch "$DEPLOY_RUN_DIR/running-${n}"; sleep 0.3; ls "$DEPLOY_RUN_DIR" | grep -c running- >"$DEPLOY_RUN_DIR/seen-${n}"; rm "$DEPLOY_RUN_DIR/running-${n}"; echo "step ${n} in $(pwd)"; echo sha256:1 >"$\${DEPLOY_RUN_DIR}/${n}.pushed-digest"`);
    await done;
    const seen = await Promise.all(nodes.map(async (n) => Number(await readFile(join(dir, `seen-${n}`), 'utf8'))));
    expect(Math.max(...seen)).toBeLessThanOrEqual(PUSH_PARALLELISM);
    expect(Math.max(...seen)).toBeGreaterThan(1);
    expect((await readdir(dir)).filter((f) => f.endsWith('.pushed-digest'))).toHaveLength(nodes.length);
    const ofN0 = events.filter((e) => 'address' in e && e.address === 'null_resource.image-n0_push_0A1B2C00').map((e) => (e.kind === 'provision' ? `provision ${e.phase}${e.output ? ` ${e.output}` : ''}` : e.kind));
    expect(ofN0).toEqual(['apply-start', 'provision start', `provision output step n0 in ${dir}`, 'provision complete', 'apply-complete']);
  });

  it('a failed push fails the apply after every push ended, naming each failed node with its words', async () => {
    const line = formatStepLine({ deployStep: 'push', event: 'failed', node: 'b', message: 'image archive /x.tar is missing or unreadable' });
    const { dir, events, done } = await run(['a', 'b', 'c'], (n) => (n === 'b' ? `echo '${line}' >&2; exit 1` : `sleep 0.3; echo sha256:1 >"$DEPLOY_RUN_DIR/${n}.pushed-digest"`));
    const err = (await done.catch((e: unknown) => e)) as DeployError;
    expect(err).toBeInstanceOf(DeployError);
    expect(err.exitCode).toBe(ExitCode.tool);
    expect(err.message).toBe("the image push of node b failed, so deploy apply of target all stopped before tofu's apply: nothing in the cluster was changed\nb: deploy: node b: image archive /x.tar is missing or unreadable (exit 1)");
    // the other pushes ended as tofu would have ended them: they are independent of b's
    expect((await readdir(dir)).filter((f) => f.endsWith('.pushed-digest')).sort()).toEqual(['a.pushed-digest', 'c.pushed-digest']);
    expect(events.filter((e) => e.kind === 'apply-errored').map((e) => 'address' in e && e.address)).toEqual(['null_resource.image-b_push_0A1B2C01']);
  });

  it('a push step that cannot start is a failed push too, said with why', async () => {
    const events: TofuEvent[] = [];
    const err = (await pushFirst({ target: 'all', graph: graphOf(['a'], () => 'true'), nodes: new Set(['a']), env: { PATH: process.env.PATH }, dir: '/nonexistent/graph', signal: new AbortController().signal, onEvent: (e) => events.push(e) }).catch((e: unknown) => e)) as DeployError;
    expect(err.exitCode).toBe(ExitCode.tool);
    expect(err.message).toMatch(/^the image push of node a failed, .*\na: could not start \/bin\/sh -c true: its working directory \/nonexistent\/graph does not exist$/);
    expect(events.map((e) => e.kind).at(-1)).toBe('apply-errored');
  });

  it('an interrupt stops the pushes and says nothing in the cluster was changed', async () => {
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 300);
    const stopped = await run(['a', 'b'], () => 'sleep 30', stop.signal);
    const started = Date.now();
    const err = await stopped.done.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InterruptedError);
    expect((err as Error).message).toMatch(/interrupted before tofu's apply: nothing in the cluster was changed/);
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});
