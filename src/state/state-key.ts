/**
 * A state key is the URL path after the first `/`: segments of letters, digits, `.`, `_`
 * and `-`, each starting with a letter or digit (so `..` and the backend's own `/_deploy/`
 * routes can never be keys). The graph uses `<group>-<target>`.
 */
import { ConfigError } from '../errors.js';

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
export const MAX_KEY_LENGTH = 255;

export function checkStateKey(key: string): string | undefined {
  if (!key) return 'the state key is empty: address a state as /<key> (e.g. /mygroup-all)';
  if (key.length > MAX_KEY_LENGTH) return `the state key is longer than ${MAX_KEY_LENGTH} characters`;
  if (!key.split('/').every((s) => SEGMENT.test(s))) {
    return `"${key}" is not a state key: use letters, digits, ".", "_" and "-", each "/"-separated part starting with a letter or digit`;
  }
  return undefined;
}

/** A key given to a source: present and well formed (ConfigError, exit 2). */
export function requireStateKey(key: string | undefined): asserts key is string {
  const problem = key === undefined ? 'a state key is needed (see `deploy state list`)' : checkStateKey(key);
  if (problem) throw new ConfigError('bad state key', [{ where: '<key>', message: problem }]);
}
