/**
 * The probe protocol between a node's pod and the rollout step: the scripts the kubelet runs
 * in the pod (stacks/pod-template.ts, and bench/'s hand-made Deployments) and the output they
 * print, which the kubelet puts into the pod's "Unhealthy" event and the rollout step reads
 * (src/rollout/classify/probe-output.ts): a line `systemd: <state>` (SYSTEMD_STATE_PREFIX), then, when
 * not running, the failed units of `systemctl --failed --no-legend --plain`, one a line.
 */

/** The first line of every probe's output: `systemd: <state of systemctl is-system-running>`. */
export const SYSTEMD_STATE_PREFIX = 'systemd: ';

/** systemctl is-system-running states (systemctl(1)); `unknown` when it printed nothing. */
export const SYSTEMD_STATES = ['initializing', 'starting', 'running', 'degraded', 'maintenance', 'stopping', 'offline', 'unknown'] as const;
export type SystemdState = (typeof SYSTEMD_STATES)[number];

/**
 * Readiness: ready only when systemd says `running` (FR-005). On failure the probe prints the
 * state and the failed units; the kubelet puts that output in the "Readiness probe failed"
 * event, which is how the rollout report names the failed unit.
 */
export const READINESS_SCRIPT =
  'state=$(systemctl is-system-running 2>/dev/null); echo "systemd: ${state:-unknown}"; ' +
  '[ "$state" = running ] && exit 0; systemctl --failed --no-legend --plain 2>/dev/null; exit 1';

/** Startup: the boot is over once systemd leaves `initializing`/`starting`, whatever the verdict. */
export const STARTUP_SCRIPT =
  'state=$(systemctl is-system-running 2>/dev/null); echo "systemd: ${state:-unknown}"; ' +
  'case "$state" in running|degraded|maintenance) exit 0;; esac; exit 1';

/**
 * Liveness: PID 1 answers on its bus, whatever its verdict. A degraded node is not restarted
 * in a loop (that would hide the failed unit); readiness and the rollout step deal with it.
 */
export const LIVENESS_SCRIPT = 'systemctl show --property=Version >/dev/null';

/**
 * Probe periods. Every exec probe is a runc exec plus a systemctl call in the pod: at 2 s
 * (readiness) and 10 s (liveness), 50 node pods were 30 execs a second and held a 2-core
 * machine at load 95-137 (issue 11's bench); at 10 s and 30 s, 200 pods are 27 a second and
 * did the same (issue 32's bench). The rollout does not wait on these periods: the
 * startup probe (every 1 s) ends the boot, and the kubelet runs the readiness probe at once
 * when startup succeeds (prober_manager UpdatePodStatus), so a node is Ready, or its
 * "Readiness probe failed: systemd: degraded" event is out, within about a second of its
 * boot ending. The periods only bound how soon a later fall from `running` is seen (the
 * readiness period: --probe-period, default 10 s, config/duration.ts) and how soon a hung
 * PID 1 is killed (3 x the liveness period, LIVENESS_PERIOD_FACTOR x the readiness period).
 */
export const STARTUP_PERIOD_SECONDS = 1;

/**
 * The longest rollout timeout deploy accepts (config/duration.ts takes its bound from here).
 * The kubelet's bound on a boot (the startup probe) and the Deployment's progress deadline are
 * this ceiling, not the run's timeout: the timeout is a value the operator sets per run (FR-006),
 * and a value in the pod template replaces every pod when it changes. The run's timeout is
 * enforced by the rollout step, which sets the Deployment back at its deadline
 * (docs/decisions.md, "The rollout timeout is a per-run value").
 */
export const MAX_ROLLOUT_TIMEOUT_SECONDS = 6 * 3600;
/** The startup probe's failure threshold: a boot may take up to the ceiling before the kubelet restarts it. */
export const STARTUP_FAILURE_THRESHOLD = MAX_ROLLOUT_TIMEOUT_SECONDS / STARTUP_PERIOD_SECONDS;
export const LIVENESS_PERIOD_FACTOR = 3;
/** Each probe's own time limit. */
export const PROBE_TIMEOUT_SECONDS = 5;
