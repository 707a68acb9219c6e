/**
 * A tofu failure of the graph's SPIRE steps, in the operator's words. The steps
 * (stacks/spire-scripts.ts) print one `deploy: ...` line naming the spire node, then ssh's own
 * complaint, on stderr; tofu wraps that in its diagnostic (the external data source: "Error
 * Message: ... State: exit status 1"; local-exec: "Error running command '<the whole
 * script>': exit status 1. Output: ..."). The script text would bury our line, so only what
 * the step printed is kept.
 */
import { ToolError } from '../errors.js';

interface DiagnosticLike {
  readonly severity: string;
  readonly detail: string;
}

/** What a SPIRE step printed, from one diagnostic's detail; undefined when it is not ours. */
export function spireStepOutput(detail: string): string[] | undefined {
  let text: string | undefined;
  const output = detail.lastIndexOf('Output: ');
  const message = detail.indexOf('Error Message: ');
  if (output >= 0) text = detail.slice(output + 'Output: '.length);
  else if (message >= 0) text = detail.slice(message + 'Error Message: '.length).split(/\n\s*State: /)[0];
  if (text === undefined) return undefined;
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  return lines.some((l) => l.startsWith('deploy: ') && /spire node|SPIRE server/.test(l)) ? lines : undefined;
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
  for (const d of diagnostics) {
    if (d.severity !== 'error') continue;
    for (const l of spireStepOutput(d.detail) ?? []) if (!lines.includes(l)) lines.push(l);
  }
  if (lines.length === 0) return undefined;
  const node = spireNode ?? /spire node (\S+)/.exec(lines.join('\n'))?.[1] ?? '(unknown)';
  return new ToolError([`tofu ${verb} failed at the SPIRE steps with the spire node ${node}:`, ...lines.slice(0, 12).map((l) => `  ${l}`)].join('\n'), {
    hint: 'make the spire node reachable over ssh (K8S_SPIRE_NODE, SSH_USER, SSH_NODES, SSH_PRIVATE_KEY_FILE) and its SPIRE server healthy, then run the command again (a failed hand-off is tried again; the Deployments wait for it)',
    cause: err,
  });
}
