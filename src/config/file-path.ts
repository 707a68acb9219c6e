/**
 * The one rule for a file the operator names (a flag, a variable, the group plan's path): `~` and
 * `~/...` are the home directory ($HOME), then a relative path is the run's working directory's.
 * Applied once, where the run's inputs are read (coordinates.ts, load-targets.ts): every later
 * reader gets the absolute path, whatever its own cwd (tofu and its provider run in the graph
 * directory, the rollout step under tofu, ssh in the run directory). Before this, a relative
 * `--kubeconfig` passed deploy's checks and failed tofu's provider ("no client config", issue 46).
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { ConfigError } from '../errors.js';

/** Where a run stands: its working directory and the environment that names the home directory. */
export interface PathPlace {
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** The absolute path of `text`, or why it has none (`~user` names another user's home: refused, as go-homedir does). */
export function absoluteFile(text: string, place: PathPlace): { ok: true; path: string } | { ok: false; problem: string } {
  if (text === '~' || text.startsWith('~/')) return { ok: true, path: join(place.env.HOME || homedir(), text.slice(1)) };
  if (text.startsWith('~')) return { ok: false, problem: `${text}: only ~ and ~/... name a home directory; write the path in full` };
  return { ok: true, path: isAbsolute(text) ? text : resolve(place.cwd, text) };
}

/** absoluteFile, or a ConfigError (exit 2) naming `where` the path came from. */
export function requireAbsoluteFile(text: string, place: PathPlace, where: string): string {
  const r = absoluteFile(text, place);
  if (!r.ok) throw new ConfigError(`the file named by ${where} cannot be found`, [{ where, message: r.problem }]);
  return r.path;
}
