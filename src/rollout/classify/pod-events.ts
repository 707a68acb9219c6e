/** What a pod's (or a claim's) events say, in the words of the classifier's verdicts (classify-pod.ts). */
import { eventTimeMs, type KubeEvent } from '../../kube/api-objects.js';

/** Oldest first. */
export function byTime(events: readonly KubeEvent[]): KubeEvent[] {
  return [...events].sort((a, b) => eventTimeMs(a) - eventTimeMs(b));
}

/** The message of the newest event with this reason. */
export function lastMessage(events: readonly KubeEvent[], reason: string): string | undefined {
  return byTime(events.filter((e) => e.reason === reason)).at(-1)?.message ?? undefined;
}

/** When the newest event with this reason was first seen (ms since the epoch). */
export function latestTime(events: readonly KubeEvent[], reason: string): number | undefined {
  const e = byTime(events.filter((x) => x.reason === reason)).at(-1);
  return e ? Date.parse(e.firstTimestamp ?? e.eventTime ?? '') || eventTimeMs(e) : undefined;
}

/** The message of the newest Warning. */
export function lastWarning(events: readonly KubeEvent[]): string | undefined {
  return byTime(events.filter((e) => e.type === 'Warning')).at(-1)?.message ?? undefined;
}

/** "Pulling" with no "Pulled"/"Failed" after it: the kubelet is pulling. */
export function pullingMessage(events: readonly KubeEvent[]): string | undefined {
  const pullEvents = byTime(events.filter((e) => e.reason === 'Pulling' || e.reason === 'Pulled' || e.reason === 'Failed'));
  const last = pullEvents.at(-1);
  return last?.reason === 'Pulling' ? (last.message ?? 'pulling the image') : undefined;
}

/** A pod being created, in words: the pull under way, else the last warning. */
export function describeCreating(events: readonly KubeEvent[], pod: string): string {
  const pulling = pullingMessage(events);
  if (pulling) return pulling;
  const warn = lastWarning(events);
  return warn ? `creating pod ${pod} (last warning: ${warn.split('\n')[0]})` : `creating pod ${pod}`;
}
