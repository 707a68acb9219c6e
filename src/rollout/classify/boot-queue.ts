/**
 * systemd's job queue of a boot that the deadline cuts short, read from the pod: once at the
 * verdict, and every few seconds in the last stretch before the deadline. The samples are
 * needed because the kubelet gives up on the same boot at about the same moment: the
 * startup probe's failureThreshold is the rollout timeout, counted from the container's
 * start, which on a first deploy comes before the step's start. Seen on the local cluster:
 * at the verdict the queue already held the kubelet's stop (umount.target, final.target,
 * halt.target), not the job the boot waited for.
 */
import { CONTAINER_NAME } from '../../contract/node-container.js';
import type { Logger } from '../../log.js';
import { describeApiError } from '../../kube/api-error.js';
import type { KubeApi } from '../../kube/kube-api.js';
import { LIST_JOBS_COMMAND, parseJobLines, type SystemdJob } from './systemd-jobs.js';

/** Sampling starts this long before the deadline (the controller's own deadline may come ~2 s early). */
const SAMPLE_LEAD_MS = 12_000;
const SAMPLE_EVERY_MS = 4_000;
/** One read may delay the verdict's evidence this long at most. */
const READ_MS = 3_000;

/** Targets that only a stop of the whole system queues: the queue of a boot no longer. */
const SHUTDOWN_UNITS = new Set(['shutdown.target', 'halt.target', 'poweroff.target', 'reboot.target', 'kexec.target', 'final.target', 'umount.target']);

export function isShuttingDown(jobs: readonly SystemdJob[]): boolean {
  return jobs.some((j) => j.type === 'start' && SHUTDOWN_UNITS.has(j.unit));
}

export interface BootQueue {
  readonly jobs: readonly SystemdJob[];
  /** How long before the verdict it was read (0: at the verdict). */
  readonly ageMs: number;
}

export interface BootQueueReader {
  /** Called with every waiting verdict of the first wait; samples a booting pod near the deadline. */
  consider(pod: string | undefined, booting: boolean, now: number): void;
  /** The queue that explains the boot: read now, or the last sample when systemd is already stopping. */
  atVerdict(pod: string | undefined, now: number, signal: AbortSignal): Promise<BootQueue | undefined>;
}

export function createBootQueueReader(api: KubeApi, namespace: string, deadline: number, clock: () => number, logger?: Logger): BootQueueReader {
  let last: { pod: string; at: number; jobs: SystemdJob[] } | undefined;
  let inFlight: Promise<void> | undefined;
  let lastTry = Number.NEGATIVE_INFINITY;
  const sampler = new AbortController();

  const read = async (pod: string, signal: AbortSignal): Promise<SystemdJob[] | undefined> => {
    try {
      return parseJobLines(await api.execLines(namespace, pod, CONTAINER_NAME, [...LIST_JOBS_COMMAND], READ_MS, signal));
    } catch (err) {
      logger?.debug({ kind: 'rollout-jobs-unread', pod, err: describeApiError(err) }, 'no systemd job list');
      return undefined;
    }
  };

  return {
    consider(pod, booting, now) {
      if (!pod || !booting || inFlight || now < deadline - SAMPLE_LEAD_MS || now - lastTry < SAMPLE_EVERY_MS) return;
      lastTry = now;
      inFlight = read(pod, sampler.signal).then((jobs) => {
        if (jobs && jobs.length > 0 && !isShuttingDown(jobs)) last = { pod, at: clock(), jobs };
        inFlight = undefined;
      });
    },
    async atVerdict(pod, now, signal) {
      sampler.abort();
      await inFlight;
      const sample = last && last.pod === pod ? last : undefined;
      const fresh = pod ? await read(pod, signal) : undefined;
      if (fresh && fresh.length > 0 && !isShuttingDown(fresh)) return { jobs: fresh, ageMs: 0 };
      if (sample) return { jobs: sample.jobs, ageMs: Math.max(0, now - sample.at) };
      return fresh && fresh.length > 0 ? { jobs: fresh, ageMs: 0 } : undefined;
    },
  };
}
