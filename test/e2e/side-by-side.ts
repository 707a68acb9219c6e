/**
 * Which e2e files may run beside another on the one local cluster (issue 49): the e2e project
 * has two shared files at work at a time (RUN_SLOTS below, vitest.config.ts), and each file
 * takes the lock of test/e2e/cluster-share.ts before its tests: shared for a `shared` file,
 * exclusive for an `alone` one. The one list of the classes; docs/tests.md ("e2e files side by side") says, per
 * file, what it touches beyond its own namespace, state and temporary directory, and why it is
 * in its class. A new e2e file goes into one of the two lists (a unit test checks that every
 * file is in exactly one, test/unit/architecture/e2e-side-by-side.test.ts); until then it runs
 * alone.
 *
 *   shared  touches nothing another file uses (beyond the cluster's capacity and the host's CPU)
 *           and asserts nothing that two files' load could break
 *   alone   takes the cluster itself down and up, or asserts timings (a deadline a few seconds
 *           wide, samples of downtime, a stop measured against the kubelet's clock) that the
 *           CPU load of another file could break
 */
import { isAbsolute, relative, sep } from 'node:path';

export type Share = 'shared' | 'alone';

/**
 * How many shared files work on the cluster at once (run-slots.ts): the two cores' worth, the
 * load every shared file's bounds were measured under. The e2e project has E2E_WORKERS workers,
 * one more: a file that gives its slot back for a long wait on the cluster's clock
 * (`withoutRunSlot`) leaves the spare worker's file the slot.
 */
export const RUN_SLOTS = 2;
export const E2E_WORKERS = RUN_SLOTS + 1;

/** The e2e folder, where the names below are. */
export const E2E_DIR = import.meta.dirname;

/** Files that must run with no other e2e file on the cluster (names under test/e2e/). */
export const ALONE: readonly string[] = [
  'cluster.test.ts',
  'deploy-after.test.ts',
  'deploy-deadline.test.ts',
  'deploy-preflight.test.ts',
  'deploy-stop.test.ts',
];

/** Files that may run beside any other shared file (names under test/e2e/). */
export const SHARED: readonly string[] = [
  'cd-workflow.test.ts',
  'deploy-build.test.ts',
  'deploy-claims-at-risk.test.ts',
  'deploy-claims.test.ts',
  'deploy-destroy.test.ts',
  'deploy-drift-generated.test.ts',
  'deploy-drift.test.ts',
  'deploy-edges.test.ts',
  'deploy-hand-edits.test.ts',
  'deploy-interrupt-random.test.ts',
  'deploy-interrupt.test.ts',
  'deploy-kill9.test.ts',
  'deploy-kubeconfig.test.ts',
  'deploy-live-view.test.ts',
  'deploy-migrate.test.ts',
  'deploy-moved-tag.test.ts',
  'deploy-pod-fate.test.ts',
  'deploy-rbac.test.ts',
  'deploy-registry-tls.test.ts',
  'deploy-runtime-handler.test.ts',
  'deploy-scoped-graph.test.ts',
  'deploy-secrets.test.ts',
  'deploy-soak.test.ts',
  'deploy-spire.test.ts',
  'deploy-status.test.ts',
  'deploy-stock-provider.test.ts',
  'deploy-targets.test.ts',
  'deploy-us1.test.ts',
  'deploy-us2.test.ts',
  'plan-changes-kubernetes.test.ts',
  'rollout.test.ts',
];

/**
 * Seconds of each e2e file's tests and hooks in the last full run, two files at a time (the
 * profile of docs/tests.md, `.ci/run` of 2026-12-06 from a clone of 0730884): the order of
 * the e2e files where vitest has no results of a run before (a fresh clone, as CI's), in place
 * of vitest's fallback, the largest file first. Two workers share the shared files; started
 * longest first, the last to start are the short ones, so the
 * two end close together (the longest-first rule of scheduling): a file of 8 minutes started
 * late would hold its worker alone for minutes while the other waits for the alone block. Only
 * an order: a wrong or missing figure costs time, never a result. A new file without one comes
 * first (as vitest runs unknown files first).
 */
export const EXPECTED_SECONDS: Readonly<Record<string, number>> = {
  'cd-workflow.test.ts': 245,
  'cluster.test.ts': 41,
  'deploy-after.test.ts': 86,
  'deploy-build.test.ts': 18,
  'deploy-claims-at-risk.test.ts': 40,
  'deploy-claims.test.ts': 35,
  'deploy-deadline.test.ts': 94,
  'deploy-destroy.test.ts': 64,
  'deploy-drift-generated.test.ts': 317,
  'deploy-drift.test.ts': 38,
  'deploy-edges.test.ts': 141,
  'deploy-hand-edits.test.ts': 385,
  'deploy-interrupt-random.test.ts': 320,
  'deploy-interrupt.test.ts': 12,
  'deploy-kill9.test.ts': 76,
  'deploy-kubeconfig.test.ts': 11,
  'deploy-live-view.test.ts': 31,
  'deploy-migrate.test.ts': 21,
  'deploy-moved-tag.test.ts': 11,
  'deploy-pod-fate.test.ts': 50,
  'deploy-preflight.test.ts': 4,
  'deploy-rbac.test.ts': 59,
  'deploy-registry-tls.test.ts': 24,
  'deploy-runtime-handler.test.ts': 30,
  'deploy-scoped-graph.test.ts': 45,
  'deploy-secrets.test.ts': 25,
  'deploy-soak.test.ts': 366,
  'deploy-spire.test.ts': 597,
  'deploy-status.test.ts': 27,
  'deploy-stock-provider.test.ts': 42,
  'deploy-stop.test.ts': 55,
  'deploy-targets.test.ts': 24,
  'deploy-us1.test.ts': 40,
  'deploy-us2.test.ts': 41,
  'plan-changes-kubernetes.test.ts': 5,
  'rollout.test.ts': 51,
};

/** A file's name under test/e2e/ ('a/b.test.ts'), from its absolute path or that name; undefined outside test/e2e/. */
export function e2eName(file: string): string | undefined {
  if (!isAbsolute(file)) return file.split(sep).join('/');
  const rel = relative(E2E_DIR, file);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return undefined;
  return rel.split(sep).join('/');
}

/** The class of an e2e file (absolute path or name under test/e2e/); undefined when it is in neither list. */
export function shareOf(file: string): Share | undefined {
  const name = e2eName(file);
  if (name === undefined) return undefined;
  if (ALONE.includes(name)) return 'alone';
  if (SHARED.includes(name)) return 'shared';
  return undefined;
}

/**
 * The files in the order given, but the classified ones (`classOf` not undefined) in their own
 * places refilled with the `shared` ones first and the `alone` ones after them, each group in
 * its given order; the others stay where they are. The e2e sequencer's rule (sequencer.ts).
 */
export function aloneLast<T>(items: readonly T[], classOf: (item: T) => Share | undefined): T[] {
  return refilled(items, (i) => classOf(i) !== undefined, (picked) => [...picked.filter((i) => classOf(i) === 'shared'), ...picked.filter((i) => classOf(i) === 'alone')]);
}

/** The items in the order given, the places of those `inScope` refilled with `reorder` of them (in their order). */
function refilled<T>(items: readonly T[], inScope: (item: T) => boolean, reorder: (picked: T[]) => T[]): T[] {
  const order = reorder(items.filter(inScope));
  let next = 0;
  return items.map((i) => (inScope(i) ? order[next++]! : i));
}

/**
 * The items in the order given, but those `inScope` in their own places refilled slowest first:
 * failed first (as vitest does), then by `seconds` descending, an item without a figure before
 * every item with one; ties keep their order. The e2e sequencer's fallback order (sequencer.ts).
 */
export function slowestFirst<T>(items: readonly T[], inScope: (item: T) => boolean, seconds: (item: T) => number | undefined, failed: (item: T) => boolean = () => false): T[] {
  const rank = (i: T) => [failed(i) ? 0 : 1, seconds(i) === undefined ? 0 : 1, -(seconds(i) ?? 0)] as const;
  return refilled(items, inScope, (picked) =>
    picked.sort((a, b) => {
      const [x, y] = [rank(a), rank(b)];
      return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
    }),
  );
}
