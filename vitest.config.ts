import { defineConfig } from 'vitest/config';
import AloneLastSequencer from './test/e2e/sequencer.ts';
import { E2E_WORKERS } from './test/e2e/side-by-side.ts';

// Three projects, cheapest first. `npm test` runs all of them: the integration and e2e
// projects bring up what they need (tools, state backend, cluster) in their global setup.
export default defineConfig({
  test: {
    // vitest's order, but the e2e files that run alone in one block after the others (test/e2e/sequencer.ts)
    sequence: { sequencer: AloneLastSequencer },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'src/**/*.test.ts', 'stacks/**/*.test.ts'],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/integration/global-setup.ts'],
          testTimeout: 300_000,
          hookTimeout: 1_800_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/e2e/global-setup.ts', 'test/e2e/deploy-setup.ts'],
          testTimeout: 600_000,
          hookTimeout: 3_600_000,
          // Two shared files at work at a time on the one cluster (a third worker takes the slot
          // of a file that waits minutes on the cluster's clock), but a file of
          // test/e2e/side-by-side.ts's `alone` list with no other: each file takes the lock of
          // cluster-share.ts first (shared or exclusive) and, if shared, a run slot, which its
          // worker process holds (forks: one per file) until the file's last hook.
          // docs/tests.md, "e2e files side by side".
          fileParallelism: true,
          maxWorkers: E2E_WORKERS,
          pool: 'forks',
          setupFiles: ['test/e2e/cluster-share.ts'],
          // a group of its own: vitest refuses two projects of different maxWorkers in one group
          // (one run of every project on a machine of 4 cores or more, where the unit project
          // gets vitest's default of cores - 1); in one run, vitest runs the groups one after another
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
