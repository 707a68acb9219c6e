/**
 * A tofu failure of the graph's SPIRE steps, in the operator's words. The steps
 * (stacks/spire-scripts.ts) print one typed line naming the spire node (src/contract/step-lines.ts),
 * then ssh's own complaint, on stderr; tofu wraps that in its diagnostic (the external data
 * source: "Error Message: ... State: exit status 1"; local-exec: "Error running command '<the
 * whole script>': exit status 1. Output: ..."). The script text would bury our line, so only
 * what the step printed is kept: where it starts is tofu's frame, whose it is and which spire
 * node it names come from the typed line, never from its words.
 */
import { ToolError } from '../errors.js';
import { parseStepLine, stepLineWords } from '../contract/step-lines.js';

interface DiagnosticLike {
  readonly severity: string;
  readonly detail: string;
}

/** What a SPIRE step printed (its lines for people, and the spire node its typed line names); undefined when it is not ours. */
export function spireStepOutput(detail: string): { lines: string[]; node: string } | undefined {
  let text: string | undefined;
  const output = detail.lastIndexOf('Output: ');
  const message = detail.indexOf('Error Message: ');
  if (output >= 0) text = detail.slice(output + 'Output: '.length);
  else if (message >= 0) text = detail.slice(message + 'Error Message: '.length).split(/\n\s*State: /)[0];
  if (text === undefined) return undefined;
  let node: string | undefined;
  const lines: string[] = [];
  for (const raw of text.split('\n')) {
    const l = raw.trim();
    if (l === '') continue;
    const typed = parseStepLine(l);
    if (typed?.deployStep === 'spire') node ??= typed.node;
    lines.push(typed === undefined ? l : stepLineWords(typed));
  }
  return node === undefined ? undefined : { lines, node };
}

/**
 * The error to report for a failed tofu command when its errors come from the SPIRE steps:
 * their lines, once each, under one sentence naming the spire node. Undefined otherwise (the
 * caller reports tofu's own error).
 */
export function spireFailure(err: unknown, verb: string, spireNode: string | undefined): ToolError | undefined {
  const diagnostics = (err as { diagnostics?: readonly DiagnosticLike[] } | undefined)?.diagnostics;
  if (!Array.isArray(diagnostics)) return undefined;
  const lines: string[] = [];
  let named: string | undefined;
  for (const d of diagnostics) {
    if (d.severity !== 'error') continue;
    const out = spireStepOutput(d.detail);
    if (out === undefined) continue;
    named ??= out.node;
    for (const l of out.lines) if (!lines.includes(l)) lines.push(l);
  }
  if (named === undefined) return undefined;
  // without coordinates (a hand-off retired after SPIRE was turned off) the step's line names it
  const node = spireNode ?? named;
  return new ToolError([`tofu ${verb} failed at the SPIRE steps with the spire node ${node}:`, ...lines.slice(0, 12).map((l) => `  ${l}`)].join('\n'), {
    hint: 'make the spire node reachable over ssh (K8S_SPIRE_NODE, SSH_USER, SSH_NODES, SSH_PRIVATE_KEY_FILE) and its SPIRE server healthy, then run the command again (a failed hand-off is tried again; the Deployments wait for it)',
    cause: err,
  });
}
