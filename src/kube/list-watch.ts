/**
 * List, then watch from the list's resourceVersion; on a watch that ends (server timeout,
 * network) reconnect from the last resourceVersion seen; on 410 Gone list again. The
 * client's own informer (ListWatch) gives up on the first non-410 error and mixes typed list
 * items with raw watch objects, so this keeps raw JSON throughout and retries with backoff
 * until stopped. Watch semantics: https://kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes
 */
import type { Logger } from '../log.js';
import { sleep } from '../deadline.js';

/** The one method of @kubernetes/client-node's Watch this needs. */
export interface WatchClient {
  watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    callback: (type: string, obj: any) => void,
    done: (err: any) => void,
  ): Promise<AbortController>;
}

export interface ListResult {
  readonly items: readonly unknown[];
  readonly resourceVersion: string;
}

export interface ListWatchOptions {
  /** For log lines: `pods`, `events`, ... */
  readonly name: string;
  /** The collection path, e.g. /api/v1/namespaces/<ns>/pods. */
  readonly path: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly list: () => Promise<ListResult>;
  readonly watch: WatchClient;
  /** Called after the first list and after every change. */
  readonly onChange: () => void;
  readonly logger?: Logger;
  /** Server-side end of one watch request, after which it is reopened (default 25 s: before the client's 30 s inactivity timeout). */
  readonly watchSeconds?: number;
}

export interface ListWatchHandle {
  /** The current objects, raw as the API server sent them. */
  objects(): unknown[];
  /** How many times the watch was (re)opened: 1 when it never dropped. */
  connections(): number;
  /** Since when (ms) and why the watch keeps failing; undefined while it works. */
  failing(): { since: number; message: string } | undefined;
  stop(): Promise<void>;
}

const MIN_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 5_000;

/** Lists once (errors of that first list reach the caller), then watches in the background. */
export async function startListWatch(opts: ListWatchOptions): Promise<ListWatchHandle> {
  const objects = new Map<string, unknown>();
  const stopper = new AbortController();
  let resourceVersion = '';
  let current: AbortController | undefined;
  let opened = 0;
  let failingSince: { since: number; message: string } | undefined;

  const keyOf = (obj: any): string | undefined => obj?.metadata?.uid ?? (obj?.metadata?.name ? `${obj.metadata.namespace}/${obj.metadata.name}` : undefined);

  async function relist(): Promise<void> {
    const l = await opts.list();
    objects.clear();
    for (const item of l.items) {
      const k = keyOf(item);
      if (k) objects.set(k, item);
    }
    resourceVersion = l.resourceVersion;
    opts.onChange();
  }

  await relist();

  const watchOnce = () =>
    new Promise<{ err: any; events: number }>((resolve) => {
      let events = 0;
      const done = (err: any) => resolve({ err, events });
      opened += 1;
      opts.watch
        .watch(
          opts.path,
          {
            resourceVersion,
            allowWatchBookmarks: true,
            timeoutSeconds: opts.watchSeconds ?? 25,
            labelSelector: opts.labelSelector,
            fieldSelector: opts.fieldSelector,
          },
          (type, obj) => {
            if (type === 'ERROR') {
              // A Status object; the server ends the watch after it. 410 Gone (too old) and
              // "Too large resource version" (a recreated API server) both need a fresh list.
              resourceVersion = '';
              return;
            }
            const rv = obj?.metadata?.resourceVersion;
            if (type !== 'BOOKMARK') {
              const k = keyOf(obj);
              if (k && (type === 'ADDED' || type === 'MODIFIED')) objects.set(k, obj);
              else if (k && type === 'DELETED') objects.delete(k);
              events += 1;
            }
            if (typeof rv === 'string' && rv) resourceVersion = rv;
            failingSince = undefined;
            if (type !== 'BOOKMARK') opts.onChange();
          },
          done,
        )
        .then(
          (c) => {
            current = c;
            if (stopper.signal.aborted) c.abort();
          },
          done,
        );
    });

  const loop = (async () => {
    let backoff = MIN_BACKOFF_MS;
    while (!stopper.signal.aborted) {
      const started = Date.now();
      let failure: unknown;
      try {
        if (!resourceVersion) await relist();
        const { err, events } = await watchOnce();
        current = undefined;
        if (stopper.signal.aborted) break;
        // The server answered with an error status (410 Gone: too old; 504 "Too large resource
        // version": a recreated API server; ...): list again rather than retry the same version.
        if (typeof err?.statusCode === 'number' || err?.code === 410) resourceVersion = '';
        if (err && err.name !== 'TimeoutError' && err.statusCode !== 410 && err.code !== 410) failure = err;
        else if (events === 0 && Date.now() - started < 1000) failure = new Error('watch closed at once');
        if (!failure) {
          backoff = MIN_BACKOFF_MS;
          failingSince = undefined;
        }
      } catch (err) {
        failure = err;
      }
      if (failure !== undefined) {
        failingSince ??= { since: started, message: String((failure as Error)?.message ?? failure) };
        opts.logger?.debug({ kind: 'rollout-watch-reconnecting', watch: opts.name, err: String((failure as Error)?.message ?? failure), retryInMs: backoff }, 'watch ended; reconnecting');
        await sleep(backoff, stopper.signal);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  })();

  return {
    objects: () => [...objects.values()],
    connections: () => opened,
    failing: () => failingSince,
    async stop() {
      stopper.abort();
      current?.abort();
      // A watch request still connecting cannot be cancelled from here; do not wait for it.
      await Promise.race([loop, sleep(2_000)]);
    },
  };
}
