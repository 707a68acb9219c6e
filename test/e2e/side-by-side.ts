/**
 * Which e2e files may run beside another on the one local cluster (issue 49): the e2e project
 * runs two files at a time (vitest.config.ts), and each file takes the lock of
 * test/e2e/cluster-share.ts before its tests: shared for a `shared` file, exclusive for an
 * `alone` one. The one list of the classes; docs/tests.md ("e2e files side by side") says, per
 * file, what it touches beyond its own namespace, state and temporary directory, and why it is
 * in its class. A new e2e file goes into one of the two lists (a unit test checks that every
 * file is in exactly one, test/unit/architecture/e2e-side-by-side.test.ts); until then it runs
 * alone.
 *
 *   shared  touches nothing another file uses (beyond the cluster's capacity and the host's CPU)
 *           and asserts nothing that two files' load could break
 *   alone   takes the cluster itself down and up, or asserts timings (a deadline a few seconds
 *           wide, a soak in which one late readiness probe fails the node, samples of downtime,
 *           a stop measured against the kubelet's clock) that the CPU load of another file
 *           could break
 */
import { isAbsolute, relative, sep } from 'node:path';

export type Share = 'shared' | 'alone';

/** The e2e folder, where the names below are. */
export const E2E_DIR = import.meta.dirname;

/** Files that must run with no other e2e file on the cluster (names under test/e2e/). */
export const ALONE: readonly string[] = [
  'cluster.test.ts',
  'deploy-after.test.ts',
  'deploy-deadline.test.ts',
  'deploy-preflight.test.ts',
  'deploy-soak.test.ts',
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
  'deploy-secrets.test.ts',
  'deploy-spire.test.ts',
  'deploy-status.test.ts',
  'deploy-stock-provider.test.ts',
  'deploy-targets.test.ts',
  'deploy-us1.test.ts',
  'deploy-us2.test.ts',
  'plan-changes-kubernetes.test.ts',
  'rollout.test.ts',
];

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
  const classified = items.filter((i) => classOf(i) !== undefined);
  const order = [...classified.filter((i) => classOf(i) === 'shared'), ...classified.filter((i) => classOf(i) === 'alone')];
  let next = 0;
  return items.map((i) => (classOf(i) === undefined ? i : order[next++]!));
}
