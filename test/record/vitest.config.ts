/**
 * The recording of the planner's records from real runs (record-planner.ts), run by hand:
 * `npx vitest run --config test/record/vitest.config.ts` (docs/tests.md). Not a project of
 * vitest.config.ts, so `npm test` never runs it; the e2e project's global setups bring up (or
 * reuse) the local cluster and build the CLI and tofu first.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    include: ['test/record/record-planner.ts'],
    globalSetup: ['test/e2e/global-setup.ts', 'test/e2e/deploy-setup.ts'],
    testTimeout: 900_000,
    hookTimeout: 3_600_000,
    fileParallelism: false,
  },
});
