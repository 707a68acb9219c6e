import { defineConfig } from 'vitest/config';

// The generated drift test (test/drift/): `npm run test:drift`, apart from `npm test` for now.
// The same global setup as the e2e project: the local cluster, the CLI compiled, the tools.
export default defineConfig({
  test: {
    include: ['test/drift/**/*.test.ts'],
    globalSetup: ['test/e2e/global-setup.ts', 'test/e2e/deploy-setup.ts'],
    testTimeout: 600_000,
    hookTimeout: 3_600_000,
    fileParallelism: false,
  },
});
