/**
 * A file coordinate made absolute (src/paths.ts absoluteFile), or the run's configuration error.
 * Apart from paths.ts so that it stays a leaf that scripts run by node alone can import
 * (bench/test-profile.ts: `npm run test:profile`).
 */
import { ConfigError } from '../errors.js';
import { absoluteFile, type PathPlace } from '../paths.js';

/** absoluteFile, or a ConfigError (exit 2) naming `where` the path came from. */
export function requireAbsoluteFile(text: string, place: PathPlace, where: string): string {
  const r = absoluteFile(text, place);
  if (!r.ok) throw new ConfigError(`the file named by ${where} cannot be found`, [{ where, message: r.problem }]);
  return r.path;
}
