import { join } from 'node:path';
import { stateDir } from '../paths.js';

/** The embedded backend's data directory: `<deploy state dir>/state` (see src/paths.ts). */
export function defaultStateDataDir(env: NodeJS.ProcessEnv): string {
  return join(stateDir(env), 'state');
}
