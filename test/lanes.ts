/**
 * The lanes of `npm test` (test/run.ts): vitest projects that run in one process, the lanes
 * side by side. Only the e2e project uses the cluster (its setup holds the cluster's lock and
 * brings it up); a project added to vitest.config.ts goes into a lane here
 * (test/unit/bench/test-profile.test.ts checks that every project is in exactly one).
 */
export interface Lane {
  readonly name: string;
  readonly projects: readonly string[];
  /** Its output on the console as it comes (one lane), else kept in a log shown when it ends. */
  readonly live: boolean;
}

export const LANES: readonly Lane[] = [
  { name: 'unit-integration', projects: ['unit', 'integration'], live: false },
  { name: 'e2e', projects: ['e2e'], live: true },
];
