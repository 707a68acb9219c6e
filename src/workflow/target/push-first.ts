/**
 * The pushes of an apply, before tofu's apply (edge case 2: "the push fails, and the program
 * changes nothing in the cluster"). Every node whose push the saved plan makes is pushed here,
 * by its push step's own script as the graph holds it (the null_resource's local-exec), in the
 * environment and directory tofu gives its steps, at most PUSH_PARALLELISM at once (tofu's own
 * -parallelism). Only when every push succeeded does tofu apply the plan; its push steps then
 * find the digest this run pushed (`$DEPLOY_RUN_DIR/<node>.pushed-digest`) and end at once
 * (stacks/image-scripts.ts), and the digest read after each gives that digest (FR-003).
 *
 * Why here and not as an order of the graph: the graph's namespace came after every push
 * (depends_on), and tofu keeps each resource's transitive dependencies in the state, so every
 * object in the cluster listed every push of the target: a state that grew with the square of
 * the group, which every tofu run decodes (bench/README.md, 2026-12-07: 20.8 of 23.1 MB at 200
 * nodes). It also kept every push in a scoped plan of one node (-target takes a resource's
 * dependencies). The promise is the same: a push that fails stops the apply before tofu runs,
 * with the other pushes ended (as tofu ended the independent ones), and nothing in the cluster
 * changed.
 *
 * The rows show the pushes as they show tofu's: each push step's events are given to the view
 * in the words of tofu's own events for the same step (apply-start, its output, complete or
 * errored), and tofu's events for these steps afterwards are left out (apply-target.ts,
 * withoutPushesOf) but for a failure.
 */
import type { GraphDocument } from '../../contract/graph/graph-document.js';
import { graphPartOf, nodeConstructId } from '../../contract/graph/graph-ids.js';
import { stepLinesInWords } from '../../contract/step-lines.js';
import { DeployError, ExitCode, InterruptedError } from '../../errors.js';
import { runTool } from '../../tools/run.js';
import type { TofuEvent } from '../../tools/tofu/tofu-events.js';
import { tofuEnvironment } from '../../tools/tofu/tofu-process.js';

/** As many pushes at once as tofu's apply ran (its -parallelism, 10 by default; deploy sets none). */
export const PUSH_PARALLELISM = 10;

/** A push's deadline: tofu gave its steps none but its own hour (tofu-process.ts). */
const PUSH_TIMEOUT_MS = 60 * 60_000;

export interface PushFirstOptions {
  readonly target: string;
  readonly graph: GraphDocument;
  /** The nodes whose push the saved plan makes (create or replace). */
  readonly nodes: ReadonlySet<string>;
  /** The environment tofu is given (its steps get it as tofuEnvironment makes it), and its working directory (the graph's). */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly dir: string;
  readonly signal: AbortSignal;
  /** Each push step's events, as tofu's apply would give them. */
  readonly onEvent: (e: TofuEvent) => void;
}

/** One push of the graph: its address and the shell it runs. */
export interface GraphPush {
  readonly node: string;
  readonly address: string;
  readonly script: string;
}

/**
 * Pushes every node of `nodes`; throws when one failed (a DeployError, exit 3, naming each with
 * its output) after all have ended, or an InterruptedError when the run was stopped.
 */
export async function pushFirst(opts: PushFirstOptions): Promise<void> {
  const pushes = graphPushes(opts.graph, opts.nodes);
  // tofu's environment for its steps, made once for all pushes (it looks for the provider mirror's files)
  const env = tofuEnvironment(opts.env);
  const failed: { push: GraphPush; output: string }[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < pushes.length && !opts.signal.aborted) {
      const push = pushes[next++]!;
      const output = await runPush(push, env, opts);
      if (output !== undefined) failed.push({ push, output });
    }
  };
  await Promise.all(Array.from({ length: Math.min(PUSH_PARALLELISM, pushes.length) }, worker));
  if (opts.signal.aborted) {
    throw new InterruptedError(`the image pushes of target ${opts.target} were interrupted before tofu's apply: nothing in the cluster was changed`, {
      hint: 'run deploy apply again: what was pushed is pushed again under the same tag, the same image',
    });
  }
  if (failed.length === 0) return;
  const nodes = failed.map((f) => f.push.node).sort();
  const said = failed.map((f) => `${f.push.node}: ${f.output === '' ? 'no output' : f.output}`).join('\n');
  throw new DeployError(
    `the image push of ${nodes.length === 1 ? 'node' : 'nodes'} ${nodes.join(', ')} failed, so deploy apply of target ${opts.target} stopped before tofu's apply: nothing in the cluster was changed\n${said}`,
    ExitCode.tool,
    { hint: 'the lines above say why each push failed (a registry that does not answer, an archive skopeo cannot read, a build that failed); fix it, then run deploy apply again' },
  );
}

/** Runs one push step; undefined when it succeeded, else its output (typed lines in words). */
async function runPush(push: GraphPush, env: Record<string, string | undefined>, opts: PushFirstOptions): Promise<string | undefined> {
  const started = Date.now();
  const elapsedSeconds = () => (Date.now() - started) / 1000;
  const base = { address: push.address, action: 'create' } as const;
  opts.onEvent({ kind: 'apply-start', ...base });
  opts.onEvent({ kind: 'provision', phase: 'start', address: push.address, provisioner: 'local-exec', output: undefined });
  const line = (l: string) => opts.onEvent({ kind: 'provision', phase: 'output', address: push.address, provisioner: 'local-exec', output: l });
  const r = await runTool('/bin/sh', ['-c', push.script], {
    cwd: opts.dir,
    env,
    extendEnv: false,
    signal: opts.signal,
    timeoutMs: PUSH_TIMEOUT_MS,
    // as tofu's steps are stopped under deploy (tofu-process.ts): one SIGINT to the step and all
    // it started (skopeo, a build), in a group of its own that a terminal's Ctrl-C does not reach
    interrupt: 'sigint-once',
    interruptTarget: 'group',
    reject: false,
    keepStdout: true,
    onStdoutLine: line,
    onStderrLine: line,
  }).catch((err: unknown) => (err instanceof InterruptedError ? 'interrupted' : (err as Error).message));
  // (a step that could not start or ran past its deadline is a failed push too: every push is
  // waited for, none left running behind the run's error)
  const ok = typeof r !== 'string' && r.exitCode === 0;
  opts.onEvent({ kind: 'provision', phase: ok ? 'complete' : 'errored', address: push.address, provisioner: 'local-exec', output: undefined });
  opts.onEvent({ kind: ok ? 'apply-complete' : 'apply-errored', ...base, elapsedSeconds: elapsedSeconds() });
  if (ok) return undefined;
  if (typeof r === 'string') return r;
  const how = r.signal !== undefined ? `ended by ${r.signal}` : `exit ${r.exitCode}`;
  return `${stepLinesInWords(r.tail.join('\n'))} (${how})`.trim();
}

/**
 * The push step of each node of `nodes` as the graph holds it: `null_resource.image-<node>_push_<hash>`,
 * its one local-exec command with tofu's template escapes undone. A node without one, or a
 * command that is a template (an interpolation tofu would evaluate), is a defect of deploy's.
 */
export function graphPushes(graph: GraphDocument, nodes: ReadonlySet<string>): GraphPush[] {
  const blocks = graph.resource?.null_resource ?? {};
  const found = new Map<string, GraphPush>();
  for (const [name, block] of Object.entries(blocks)) {
    const g = graphPartOf(name);
    if (g?.scope !== 'node' || g.part !== 'push' || !nodes.has(g.node)) continue;
    found.set(g.node, { node: g.node, address: `null_resource.${name}`, script: untemplate(localExecCommand(block, name)) });
  }
  const missing = [...nodes].filter((n) => !found.has(n));
  if (missing.length > 0) throw new DeployError(`the graph has no push step for ${missing.join(', ')} (${nodeConstructId('image', missing[0]!)}): a defect of deploy's`, ExitCode.tool);
  return [...nodes].sort().map((n) => found.get(n)!);
}

function localExecCommand(block: Record<string, unknown>, name: string): string {
  const provisioners = block.provisioner;
  const one = Array.isArray(provisioners) && provisioners.length === 1 ? (provisioners[0] as Record<string, { command?: unknown }>)['local-exec'] : undefined;
  if (typeof one?.command !== 'string') throw new DeployError(`the graph's push step ${name} has no one local-exec command: a defect of deploy's`, ExitCode.tool);
  return one.command;
}

/**
 * A tofu template string with no interpolation, as tofu gives it to the shell: `$${` and `%%{`
 * are the escapes of `${` and `%{` (stacks: tfEscape); any other `${` or `%{` would be evaluated.
 */
export function untemplate(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const two = text.slice(i, i + 2);
    if ((two === '$$' || two === '%%') && text[i + 2] === '{') {
      out += `${text[i]}{`;
      i += 2;
    } else if (two === '${' || two === '%{') {
      throw new DeployError(`a push step of the graph holds a template (${text.slice(i, i + 20)}...), which only tofu can evaluate: a defect of deploy's`, ExitCode.tool);
    } else out += text[i];
  }
  return out;
}
