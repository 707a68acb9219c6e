#!/usr/bin/env node
// The job summary of the CD workflow: `deploy plan|apply --json` output -> Markdown.
//
//   node .forgejo/scripts/deploy-summary.mjs <plan|apply> <json-file> <exit-code>
//
// Prints Markdown on stdout (the workflow appends it to $GITHUB_STEP_SUMMARY and also shows
// it in the step log, because Forgejo does not render step summaries). Never fails: a run
// that printed no JSON (usage or tool error) gets a line that says so and points at the log.
// Runs on any Node >= 18 (the runner's own node), with no dependencies.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const MEANING = {
  0: 'success',
  1: 'unexpected error (a bug)',
  2: 'bad input: flags, environment or group plan; nothing was changed',
  3: 'a tool or the cluster failed (tofu, skopeo, the state backend, the API server)',
  4: 'a rollout failed and the Deployment was set back to the previous image',
  5: 'a rollout failed and there was nothing to set back (first deploy of that node)',
  6: 'a rollout failed and setting the Deployment back failed too',
  130: 'interrupted',
};

/** Table cells: one line, no pipe breaking the table. */
export function cell(text) {
  return String(text ?? '').replace(/\r?\n/g, ' ').replace(/\|/g, '\\|').trim();
}

function outcomeWords(r) {
  const units = r.failedUnits?.length ? ` (failed units: ${r.failedUnits.join(', ')})` : '';
  return `${r.outcome}: ${r.message ?? r.reason ?? ''}${units}`;
}

/** The Markdown for one run. `result` is the parsed --json document, or undefined. */
export function renderSummary(verb, result, exitCode) {
  const code = Number.isInteger(exitCode) ? exitCode : Number.parseInt(String(exitCode), 10);
  const meaning = MEANING[code] ?? 'unknown exit code';
  const lines = [`### deploy ${verb}: exit ${code} (${meaning})`, ''];
  if (!result || !Array.isArray(result.targets)) {
    lines.push(`deploy ${verb} printed no result; its messages are in the step log.`, '');
    return lines.join('\n');
  }
  lines.push('| target | namespace | node | change | rollout |', '|---|---|---|---|---|');
  for (const t of result.targets) {
    const rollouts = new Map((t.rollouts ?? []).map((r) => [r.node, r]));
    for (const n of t.nodes ?? []) {
      const r = rollouts.get(n.node);
      const rollout = r ? outcomeWords(r) : verb === 'apply' && t.applied ? 'no pod change' : '-';
      lines.push(`| ${cell(t.target)} | ${cell(t.namespace)} | ${cell(n.node)} | ${cell(n.words)} | ${cell(rollout)} |`);
    }
    if ((t.nodes ?? []).length === 0) lines.push(`| ${cell(t.target)} | ${cell(t.namespace)} | - | ${t.changes ? 'changes' : 'no changes'} | - |`);
  }
  // FR-009: the node names each target's graph outputs (plan: as planned; apply: as applied)
  const named = result.targets.filter((t) => Array.isArray(t.nodeNames));
  if (named.length > 0) {
    lines.push('', verb === 'plan' ? 'Node names (the graph\'s output, as planned):' : 'Node names (the graph\'s output):', '');
    for (const t of named) lines.push(`- ${cell(t.target)} (namespace ${cell(t.namespace)}): ${t.nodeNames.length > 0 ? t.nodeNames.map(cell).join(', ') : 'none'}`);
  }
  const degrade = result.targets.flatMap((t) => (t.degrade ?? []).map((d) => ({ target: t.target, ...d })));
  if (degrade.length > 0) {
    lines.push('', 'Not honoured by the k8s method:', '');
    for (const d of degrade) lines.push(`- ${cell(d.target)} / ${cell(d.node)}: ${cell(d.message)}`);
  }
  lines.push('');
  return lines.join('\n');
}

function main(argv) {
  const [verb, file, exitCode] = argv;
  if (!verb || !file || exitCode === undefined) {
    process.stderr.write('usage: deploy-summary.mjs <plan|apply> <json-file> <exit-code>\n');
    process.exitCode = 2;
    return;
  }
  let result;
  try {
    result = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    result = undefined;
  }
  process.stdout.write(renderSummary(verb, result, exitCode));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main(process.argv.slice(2));
