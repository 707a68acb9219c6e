/**
 * The log of a failed node's pod, read before the rollback replaces it: the container log
 * (the previous run's when the container restarted), else the journal of the failed units.
 */
import { CONTAINER_NAME } from '../contract/node-container.js';
import type { Logger } from '../log.js';
import { describeApiError } from '../kube/api-error.js';
import type { KubeApi } from '../kube/kube-api.js';
import type { LastState } from './report.js';

const LOG_LINES = 20;
/** The journal read of a degraded pod may delay the rollback this long at most. */
const JOURNAL_MS = 3_000;

export async function readLogTail(
  api: KubeApi,
  namespace: string,
  state: LastState | null,
  failedUnits: readonly string[],
  signal: AbortSignal,
  logger?: Logger,
): Promise<string[]> {
  if (!state || state.container === null || state.container.startsWith('waiting: ContainerCreating')) return [];
  // A container that is not running now: its previous run has the log that explains it.
  const previous = state.container !== 'running' && state.restartCount > 0;
  let lines: string[] = [];
  try {
    lines = await api.readLogTail(namespace, state.pod, { container: CONTAINER_NAME, lines: LOG_LINES, previous }, signal);
  } catch (err) {
    logger?.debug({ kind: 'rollout-log-tail-unread', pod: state.pod, err: describeApiError(err) }, 'no log tail');
  }
  if (lines.length > 0 || failedUnits.length === 0 || state.container !== 'running') return lines;
  // systemd as PID 1 writes to /dev/console, which a pod does not have: the container log is
  // empty. The journal of the failed units says why they failed; read it before the rollback
  // replaces the pod (bounded: the rollback waits for this).
  try {
    const units = failedUnits.slice(0, 5).flatMap((u) => ['-u', u]);
    return await api.execLines(namespace, state.pod, CONTAINER_NAME, ['journalctl', '--no-pager', '--quiet', '-o', 'short-precise', '-n', String(LOG_LINES), ...units], JOURNAL_MS, signal);
  } catch (err) {
    logger?.debug({ kind: 'rollout-journal-unread', pod: state.pod, err: describeApiError(err) }, 'no journal of the failed units');
    return [];
  }
}
