/**
 * The typed lines the graph's shell steps (the push: stacks/image-scripts.ts; the SPIRE steps:
 * stacks/spire-scripts.ts) print for deploy: one JSON object a line, with the marker key
 * `deployStep`, as the rollout step's progress already is (src/rollout/progress.ts). deploy
 * reads them with parseStepLine, never by matching the words a step says to people: the
 * words are made here, from the typed value (stepLineWords), so they are the same wherever
 * they are shown (the live view's rows, tofu's diagnostics, the SPIRE failure).
 *
 * The shell side is here too (STEP_LINE_SHELL, sayStepLine, stepLinesOf), so that the two
 * ends of the contract cannot drift apart.
 */
import { z } from 'zod';
import { parseJsonLine } from './parse-json.js';

/** The key every typed line has: a line without it is someone else's (skopeo's, ssh's, a build's). */
export const STEP_LINE_MARK = 'deployStep';

/** The steps that print typed lines. */
export type StepName = 'push' | 'spire';

/**
 * What a line says: `said`, the step tells what it does (building the image); `build`, one
 * line of the image build's own output; `failed`, why the step ends badly (it exits non-zero).
 */
export type StepEvent = 'said' | 'build' | 'failed';

const stepLineSchema = z.object({
  [STEP_LINE_MARK]: z.enum(['push', 'spire']),
  event: z.enum(['said', 'build', 'failed']),
  /** The push: the node it pushes. SPIRE: the spire node it talks to. */
  node: z.string(),
  message: z.string(),
});

export type StepLine = z.infer<typeof stepLineSchema>;

/** One line of a step's output -> its typed value, or undefined for a line that is not ours. */
export function parseStepLine(text: string): StepLine | undefined {
  const line = text.trim();
  if (!line.startsWith(`{"${STEP_LINE_MARK}":`)) return undefined;
  return parseJsonLine(stepLineSchema, line);
}

/** A typed line as deploy prints it (for tests, and anything in deploy that speaks for a step). */
export function formatStepLine(l: StepLine): string {
  return JSON.stringify({ [STEP_LINE_MARK]: l[STEP_LINE_MARK], event: l.event, node: l.node, message: l.message });
}

/**
 * The words for people: `deploy: node <node>: <message>` for the push, `<node>: build: <line>`
 * for a line of its build, `deploy: <message>` for the SPIRE steps (their message names the
 * spire node in its own words).
 */
export function stepLineWords(l: StepLine): string {
  if (l[STEP_LINE_MARK] === 'spire') return `deploy: ${l.message}`;
  return l.event === 'build' ? `${l.node}: build: ${l.message}` : `deploy: node ${l.node}: ${l.message}`;
}

/**
 * A text that holds a step's output (a tofu diagnostic's detail) with each typed line in its
 * words. tofu puts the output after its own words on the same line (`Output: `, `Error
 * Message: `), so a typed line is looked for from its marker to the end of the line.
 */
export function stepLinesInWords(text: string): string {
  const start = `{"${STEP_LINE_MARK}":`;
  return text
    .split('\n')
    .map((line) => {
      const at = line.indexOf(start);
      const l = at < 0 ? undefined : parseStepLine(line.slice(at));
      return l === undefined ? line : `${line.slice(0, at)}${stepLineWords(l)}`;
    })
    .join('\n');
}

/**
 * The shell functions the steps print typed lines with (POSIX sh; the steps run them under
 * tofu's /bin/sh). JSON escaping is done in the shell because the message holds what is only
 * known at run time (a path, a build's line): a backslash and a double quote are escaped, a
 * tab is written `\t`, lines are joined with `\n`, and other control characters (a CR of a
 * progress bar) are dropped. The line goes to stderr: an `external` program's stdout is its
 * answer, and local-exec shows both.
 *
 * - `deploy_line STEP EVENT NODE MESSAGE`: one typed line.
 * - `deploy_lines STEP EVENT NODE`: each line of stdin as a typed line (one sed for them all).
 */
export const STEP_LINE_SHELL: readonly string[] = [
  String.raw`deploy_escape() { tr -d '\000-\010\013-\037' | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e "s/$(printf '\t')/\\\\t/g"; }`,
  String.raw`deploy_json() { printf '%s\n' "$1" | deploy_escape | sed -e '$!s/$/\\n/' | tr -d '\n'; }`,
  String.raw`deploy_line() { printf '{"deployStep":"%s","event":"%s","node":"%s","message":"%s"}\n' "$1" "$2" "$(deploy_json "$3")" "$(deploy_json "$4")" >&2; }`,
  String.raw`deploy_lines() { n=$(deploy_json "$3"); deploy_escape | while IFS= read -r l || [ -n "$l" ]; do printf '{"deployStep":"%s","event":"%s","node":"%s","message":"%s"}\n' "$1" "$2" "$n" "$l"; done >&2; }`,
];

/** The shell that prints one typed line; `node` and `message` are shell words (quoted by the caller). */
export function sayStepLine(step: StepName, event: StepEvent, node: string, message: string): string {
  return `deploy_line ${step} ${event} ${node} ${message}`;
}

/** The shell filter that turns each line of its stdin into a typed line; `node` is a shell word. */
export function stepLinesOf(step: StepName, event: StepEvent, node: string): string {
  return `deploy_lines ${step} ${event} ${node}`;
}
