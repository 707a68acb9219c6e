/**
 * Durations like `90s`, `5m`, `1h30m` or a bare number of seconds: parsed once, at the boundary
 * (the coordinates of plan/apply/destroy, the flags of `deploy rollout`), into a `Duration` that
 * every layer below takes as it is; each reads `.seconds`, `.ms` or `.text` at its last use.
 * The rules of each setting (bounds, default, the words of a refusal) are in one table,
 * DURATION_RULES. No zod here: `--help` loads this file (the defaults) and stays fast.
 */
import { MAX_ROLLOUT_TIMEOUT_SECONDS } from '../contract/probes.js';

/** A whole number of seconds (never negative), made only by parseDuration and durationOf. */
export interface Duration {
  readonly seconds: number;
  readonly ms: number;
  /** `<seconds>s`: the form the graph passes to `deploy rollout --timeout`. */
  readonly text: string;
  readonly kind: 'duration';
}

/** The duration of `seconds` (a whole number, at least 0). */
export function durationOf(seconds: number): Duration {
  return Object.freeze({ seconds, ms: seconds * 1000, text: `${seconds}s`, kind: 'duration' as const });
}

/** The syntax alone: `90`, `90s`, `5m`, `1h30m` (blanks around it allowed); undefined when it is none. */
export function parseDuration(text: string): Duration | undefined {
  const t = text.trim();
  if (/^\d+$/.test(t)) return durationOf(Number(t));
  const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(t);
  if (!m || t === '') return undefined;
  const [, h, min, s] = m;
  return durationOf(Number(h ?? 0) * 3600 + Number(min ?? 0) * 60 + Number(s ?? 0));
}

/** What one setting accepts: its bounds and default, and what a refusal says. */
export interface DurationRule {
  /** The default, as `--help` shows it. */
  readonly defaultText?: string;
  /** Said when the text is no duration. */
  readonly notADuration: string;
  readonly min: { readonly seconds: number; readonly message: string };
  readonly max?: { readonly seconds: number; readonly message: string };
}

/**
 * Every duration deploy reads. `deploy rollout` (the graph's step, run with the rollout
 * timeout of the apply, so always within its bounds) takes any positive duration by hand, as
 * it always did.
 */
export const DURATION_RULES = {
  /** DEPLOY_ROLLOUT_TIMEOUT / --rollout-timeout: how long a node may take to become ready. */
  rolloutTimeout: {
    defaultText: '5m',
    notADuration: 'must be a duration such as 90s, 5m or 1h',
    min: { seconds: 10, message: 'must be at least 10s: systemd needs time to boot' },
    max: { seconds: MAX_ROLLOUT_TIMEOUT_SECONDS, message: `must be at most ${MAX_ROLLOUT_TIMEOUT_SECONDS / 3600}h` },
  },
  /** DEPLOY_STOP_TIMEOUT / --stop-timeout: the pod's terminationGracePeriodSeconds. */
  stopTimeout: {
    defaultText: '30s',
    notADuration: 'must be a duration such as 30s or 2m',
    min: { seconds: 1, message: 'must be at least 1s: at 0 the kubelet kills systemd without letting it stop its units' },
  },
  /**
   * DEPLOY_PROBE_PERIOD / --probe-period: how often the kubelet asks a booted node's systemd
   * for its state (the readiness probe; liveness every LIVENESS_PERIOD_FACTOR x that, contract/probes.ts). At most 1h: beyond it a
   * node that fell from `running` would look Ready for most of a working day.
   */
  probePeriod: {
    defaultText: '10s',
    notADuration: 'must be a duration such as 10s or 1m',
    min: { seconds: 1, message: 'must be at least 1s (the kubelet\'s smallest probe period)' },
    max: { seconds: 3600, message: 'must be at most 1h: a node that fell from `running` would look Ready that long' },
  },
  /**
   * DEPLOY_SOAK / --soak (and the group plan's `soak`): how long a node must stay `running`
   * once Ready before its rollout counts (rollout/soak.ts). 0: no soak. At most 1h: the next
   * wave, and the run's state lock, wait that long for every wave.
   */
  soak: {
    defaultText: '0s',
    notADuration: 'must be a duration such as 40s or 5m (0 for no soak)',
    min: { seconds: 0, message: 'must be a duration such as 40s or 5m (0 for no soak)' },
    max: { seconds: 3600, message: 'must be at most 1h: every wave waits for the soak of the one before, with the state locked' },
  },
  /** `deploy rollout --timeout` and `--rollback-timeout`, given by hand. */
  rolloutStep: {
    notADuration: 'not a duration',
    min: { seconds: 1, message: 'not a duration' },
  },
} as const satisfies Record<string, DurationRule>;

/** The one default of the rollout timeout, for apply (coordinates) and `deploy rollout` alike. */
export const DEFAULT_ROLLOUT_TIMEOUT: Duration = parseDuration(DURATION_RULES.rolloutTimeout.defaultText)!;

/** What `rule` says against `d` (undefined: accepted). */
export function durationProblem(d: Duration | undefined, rule: DurationRule): string | undefined {
  if (d === undefined) return rule.notADuration;
  if (d.seconds < rule.min.seconds) return rule.min.message;
  if (rule.max !== undefined && d.seconds > rule.max.seconds) return rule.max.message;
  return undefined;
}

/** Parses `text` and checks it against `rule`. */
export function readDuration(text: string, rule: DurationRule): { ok: true; value: Duration } | { ok: false; problem: string } {
  const d = parseDuration(text);
  const problem = durationProblem(d, rule);
  return problem === undefined ? { ok: true, value: d! } : { ok: false, problem };
}
