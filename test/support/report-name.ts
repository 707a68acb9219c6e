/**
 * Where `npm test` keeps what a run leaves: <state>/test-reports/<run start>, a stem to which
 * test/run.ts adds `.<lane>.json` (the profile reporter's report) and `.<lane>.log`. No vitest
 * import: test/run.ts loads it in plain Node.
 */
import { join } from 'node:path';
import { stateDir } from '../../src/paths.ts';

export function reportStem(at: Date, env: Readonly<Record<string, string | undefined>> = process.env): string {
  return join(stateDir(env), 'test-reports', at.toISOString().replace(/[:.]/g, '-'));
}
