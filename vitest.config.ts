import { defineConfig } from 'vitest/config';

// Three projects, cheapest first. `npm test` runs all of them: the integration and e2e
// projects bring up what they need (tools, state backend, cluster) in their global setup.
export default defineConfig({
  test: {
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
          fileParallelism: false,
        },
      },
    ],
  },
});
