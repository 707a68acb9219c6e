/**
 * What a target's run shows of tofu's events. Every event feeds the view's rows (a line per
 * node: src/workflow/view/). tofu's own lines (one per resource and phase, with the graph's
 * addresses) only at DEPLOY_LOG_LEVEL=debug; otherwise its errors, its warnings (not init's:
 * provider lookups, the lock file's checksum) and whatever is not tofu JSON (a crash).
 */
import { graphPartOf } from '../../contract/graph/graph-ids.js';
import { causedByTheInterrupt, describeTofuEvent, formatDiagnostic, type TofuEvent } from '../../tools/tofu/tofu-events.js';
import type { RunView } from '../view/run-view.js';

/** tofu's warnings on a plan and apply with -target (the run says itself which nodes it planned alone). */
const TARGETING_WARNINGS = /^(Resource targeting is in effect|Applied changes may be incomplete)$/;

export interface TofuEchoOptions {
  readonly target: string;
  readonly view: RunView;
  readonly progress: (line: string) => void;
  readonly env: NodeJS.ProcessEnv;
  /** Only some nodes are planned (-target): tofu's warnings about it are left out. */
  readonly scoped: boolean;
  /** The run's stop signal: once it is aborted, tofu's errors that only the interrupt caused are left out (the run's last message says what was stopped). */
  readonly signal: AbortSignal;
}

/** The handler of tofu's events; `quietWarnings`: its warnings are left out too (init's chatter). */
export function echoTofu(opts: TofuEchoOptions, quietWarnings = false): (e: TofuEvent) => void {
  const verbose = ['debug', 'trace'].includes(opts.env.DEPLOY_LOG_LEVEL ?? '');
  return (e) => {
    opts.view.tofu(opts.target, e);
    if (verbose) {
      const line = describeTofuEvent(e);
      if (line) opts.progress(`[${opts.target}] ${line}`);
      return;
    }
    if (e.kind === 'unparsed') opts.progress(`[${opts.target}] ${e.line}`);
    if (e.kind !== 'diagnostic' || (e.diagnostic.severity !== 'error' && quietWarnings)) return;
    const d = e.diagnostic;
    // a rollout step's failure: its row and the rollout summary say it (tofu's words are the
    // step's whole output); any other diagnostic names the node and part (formatDiagnostic)
    if (d.address !== undefined && isRolloutStep(d.address)) return;
    // tofu's warnings about -target: the run said why it planned some nodes alone
    if (opts.scoped && d.severity === 'warning' && TARGETING_WARNINGS.test(d.summary)) return;
    // after Ctrl-C: "execution halted", a provider's handshake cut short ("not compiled for
    // this architecture"), a step stopped by the signal; tofu-failure.ts leaves them out too
    if (opts.signal.aborted && d.severity === 'error' && causedByTheInterrupt(d)) return;
    opts.progress(`[${opts.target}] ${formatDiagnostic(d)}`);
  };
}

function isRolloutStep(address: string): boolean {
  const g = graphPartOf(address);
  return g?.scope === 'node' && g.part === 'rollout';
}
