/**
 * What a failed or interrupted tofu command says: the TofuError (exit 3) with the diagnostics
 * and the resources that failed, and the InterruptedError (exit 130) that says what state
 * tofu left. Pure: the words only, from what the -json stream and the run reported. An answer
 * of the API server that the kubernetes provider relayed is said, and advised on, by its class
 * (src/contract/api/api-status.ts: its status and reason, never its words).
 */
import { InterruptedError, ToolError, type ErrorDetails } from '../../errors.js';
import { INSTALL_HINTS } from '../discover.js';
import type { RunResult } from '../run.js';
import { describeGraphAddress } from '../../contract/graph/graph-ids.js';
import { FORBIDDEN_HINT, forbiddenIn, forbiddenWords } from '../../contract/api/forbidden.js';
import { adviseApiFailure, apiFailuresRelayed, isQuotaRefusal, QUOTA_HINT, type ApiAdvice } from '../../contract/api/api-status.js';
import { causedByTheInterrupt, formatDiagnostic, type TofuDiagnostic } from './tofu-events.js';

/** A failed tofu command: its diagnostics and the resources that failed. */
export class TofuError extends ToolError {
  readonly diagnostics: readonly TofuDiagnostic[];
  /** Addresses of resources whose apply failed (apply_errored), in order. */
  readonly failedAddresses: readonly string[];
  constructor(message: string, diagnostics: readonly TofuDiagnostic[], failedAddresses: readonly string[], details: ErrorDetails = {}) {
    super(message, details);
    this.diagnostics = diagnostics;
    this.failedAddresses = failedAddresses;
  }
}

/** What one tofu command reported on its way to failing. */
export interface FailureFacts {
  readonly verb: string;
  readonly dir: string;
  readonly diagnostics: readonly TofuDiagnostic[];
  /** apply_errored addresses, in order. */
  readonly failed: readonly string[];
  /** tofu's own log lines about an interrupt. */
  readonly interrupts: readonly string[];
  /** Where the state tofu could not save is kept (tofu-errored-state.ts). */
  readonly stateNotes: readonly string[];
}

/** tofu exited with a failure (or saved no state): a TofuError naming what failed. */
export function tofuFailure(facts: FailureFacts, r: RunResult): TofuError {
  const errors = facts.diagnostics.filter((d) => d.severity === 'error');
  const api = apiAnswers(errors);
  // what the provider passed on as text only (its typed resources): a 403 of the RBAC
  // authorizer names the permission the identity lacks (src/contract/api/forbidden.ts)
  const text = api.others.map((d) => `${d.summary}\n${d.detail}`).join('\n');
  const refused = forbiddenIn(text);
  const message = [describeFailure(facts, r, errors, api.said), ...refused.map((f) => `  ${forbiddenWords(f)}`)].join('\n');
  return new TofuError(message, errors, facts.failed, {
    hint: facts.stateNotes.length
      ? 'push the saved state as shown before anything else, then run the command again'
      : (api.advice?.hint ?? (refused.length > 0 ? FORBIDDEN_HINT : isQuotaRefusal(text) ? QUOTA_HINT : failureHint(facts.verb, api.others))),
  });
}

/** The API server's answers the provider relayed (a kubernetes_manifest's), and the other diagnostics. */
interface ApiAnswers {
  /** Each relayed answer's first diagnostic, said as its class says it; the rest of its diagnostics are in it. */
  readonly said: ReadonlyMap<TofuDiagnostic, TofuDiagnostic | null>;
  /** The advice of the first answer of a known class. */
  readonly advice: ApiAdvice | undefined;
  readonly others: readonly TofuDiagnostic[];
}

function apiAnswers(errors: readonly TofuDiagnostic[]): ApiAnswers {
  const said = new Map<TofuDiagnostic, TofuDiagnostic | null>();
  let advice: ApiAdvice | undefined;
  for (const { failure, diagnostics } of apiFailuresRelayed(errors)) {
    const a = adviseApiFailure(failure);
    // (a Status without its reason, as the provider relays one without details: listed as it came)
    if (a.class === 'other') continue;
    advice ??= a;
    const [first, ...rest] = diagnostics;
    said.set(first!, { ...first!, summary: a.what, detail: '' });
    for (const d of rest) said.set(d, null);
  }
  return { said, advice, others: errors.filter((d) => !said.has(d)) };
}

/**
 * tofu was interrupted: it stopped after the operations in flight, or it did not stop within
 * the grace period and was killed (`killedAfterMs`).
 */
export function tofuInterrupted(facts: FailureFacts, cause: InterruptedError, killedAfterMs: number | undefined): InterruptedError {
  const { verb, dir, stateNotes } = facts;
  if (killedAfterMs !== undefined) {
    return new InterruptedError(
      [`tofu ${verb} was interrupted in ${dir} and did not stop within ${formatGrace(killedAfterMs)}, so it was killed: the state may lack the last changes and the state lock may still be held.`, ...stateNotes].join('\n'),
      { hint: 'release the lock (`deploy state unlock`), then run the command again: it plans from the state that was saved', cause },
    );
  }
  const what = facts.interrupts.length > 0 ? 'tofu stopped after the operations in flight (one interrupt)' : 'tofu stopped';
  // what the interrupt itself caused is no problem to report: tofu's "execution halted", a
  // step or a data source's program stopped by the signal ("State: signal: interrupt")
  const problems = facts.diagnostics.filter((d) => d.severity === 'error' && !causedByTheInterrupt(d));
  // a plan writes neither the cluster nor the state (the plan file of an apply is not applied)
  const left = stateNotes.length
    ? { after: '', hint: 'push the saved state as shown, then run the command again' }
    : verb === 'plan'
      ? { after: '; a plan changes nothing, and the lock is released', hint: 'run the command again' }
      : { after: '; the state it reached is saved and the lock released', hint: 'run the command again to finish (it converges from the saved state)' };
  const lines = [`tofu ${verb} was interrupted in ${dir}: ${what}${left.after}.`];
  for (const d of problems.slice(0, 10)) lines.push(`  - ${formatDiagnostic(d)}`);
  lines.push(...stateNotes);
  return new InterruptedError(lines.join('\n'), {
    hint: left.hint,
    cause,
  });
}

/** The message: what failed where, each error (an API answer the provider relayed as one line, in its class's words). */
function describeFailure(facts: FailureFacts, r: RunResult, errors: readonly TofuDiagnostic[], said: ApiAnswers['said']): string {
  const lines: string[] = [];
  const end = r.signal ? `killed by ${r.signal}` : `exit code ${r.exitCode}`;
  // the graph's resources by node and part (`mail: image push`), as every message says them
  const names = [...new Set([...facts.failed, ...errors.map((d) => d.address).filter((a): a is string => !!a)].map((a) => describeGraphAddress(a) ?? a))];
  lines.push(`tofu ${facts.verb} failed in ${facts.dir} (${end})${names.length ? ` at ${names.join(', ')}` : ''}:`);
  const shown = errors.map((d) => (said.has(d) ? said.get(d) : d)).filter((d): d is TofuDiagnostic => d !== null && d !== undefined);
  for (const d of shown.slice(0, 10)) lines.push(`  - ${formatDiagnostic(d).split('\n').slice(0, 6).join('\n    ')}`);
  if (shown.length > 10) lines.push(`  - ... and ${shown.length - 10} more errors`);
  if (errors.length === 0) {
    // no diagnostics: tofu crashed or printed something else; show its stderr tail
    for (const l of r.tail) lines.push(`  | ${l}`);
  }
  lines.push(...facts.stateNotes);
  return lines.join('\n');
}

/**
 * tofu's diagnostics have no code, but a diagnostic's summary is tofu's fixed title for its
 * kind (the detail carries the particulars): these are matched as the whole field, not by
 * words found anywhere in it. A word search took "Inconsistent dependency lock file" for the
 * state lock, and any init error naming a provider for a mirror problem. The titles are
 * OpenTofu 1.12.6's (internal/command/init.go, internal/command/clistate/state.go), read
 * from its source.
 */
const PROVIDER_INSTALL_SUMMARIES: ReadonlySet<string> = new Set([
  'Failed to query available provider packages',
  'Failed to resolve provider packages',
  'Failed to install provider',
  'Failed to install provider from shared cache',
  'Invalid provider registry host',
]);
const STATE_LOCK_SUMMARY = 'Error acquiring the state lock';

function failureHint(verb: string, errors: readonly TofuDiagnostic[]): string {
  if (verb === 'init' && errors.some((d) => PROVIDER_INSTALL_SUMMARIES.has(d.summary))) {
    return `the providers must come from the offline mirror: ${INSTALL_HINTS.tofu}; or unset TF_CLI_CONFIG_FILE on a machine with network access`;
  }
  if (errors.some((d) => d.summary === STATE_LOCK_SUMMARY)) {
    return 'another run holds the state lock: wait for it, or release a stale lock with `deploy state unlock`';
  }
  const text = errors.map((d) => `${d.summary}\n${d.detail}`).join('\n');
  const cls = ERROR_CLASSES.find((c) => c.test.test(text));
  return cls?.hint ?? 'read the errors above (each names the node and the part of the graph); fix what they say, then run the command again: it starts from the state tofu saved';
}

/**
 * What to do, per class of failure that is not an answer of the API server: the words of
 * tofu, the provider, skopeo and the network. These stay text rules because nothing here has a
 * structured field to read: a provider's error and a step's output (skopeo's, the network's)
 * reach tofu's diagnostic as text only. The API server's answers are classified by their
 * status and reason (src/contract/api/api-status.ts; the kubernetes provider relays them for a
 * kubernetes_manifest), never by words here: a 422's message holds the word "Forbidden". The
 * typed resources pass on the message only: its RBAC permission and quota words are read in
 * their one place each (forbidden.ts, api-status.ts isQuotaRefusal). The first that matches wins.
 */
export const ERROR_CLASSES: readonly { readonly name: string; readonly test: RegExp; readonly hint: string }[] = [
  {
    name: 'inconsistent result',
    test: /Provider produced inconsistent result after apply/,
    hint: 'another writer holds fields of that object (a hand edit, possibly made while this apply ran): run `deploy plan`, which names each hand edit and its writer, then `deploy apply` again, which removes them before tofu runs',
  },
  {
    // before 'unreachable' and 'image': skopeo's words for a registry certificate it does not trust
    name: 'registry certificate',
    test: /x509: |certificate signed by unknown authority|tls: failed to verify certificate/i,
    hint: "the registry's TLS certificate did not verify: for a registry with a private CA, set K8S_REGISTRY_CA_FILE to the PEM file of the CA that signed it (if it is set, it names another CA); for a plain-http registry, K8S_REGISTRY_TLS_VERIFY=false",
  },
  {
    name: 'unreachable',
    test: /connection refused|no such host|i\/o timeout|context deadline exceeded|dial tcp|TLS handshake timeout/i,
    hint: 'the API server (or the registry) named above could not be reached: check the kubeconfig (KUBE_CONFIG_PATH) and the network, then run the command again',
  },
  {
    name: 'image',
    test: /manifest unknown|unauthorized: authentication required|skopeo|image/i,
    hint: "the image push or digest read failed: check the node's image archive, REGISTRY_AUTH_FILE and that K8S_REGISTRY is reachable, then run the command again",
  },
];

function formatGrace(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 1000)}s` : `${ms}ms`;
}
