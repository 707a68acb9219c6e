import { createHash, timingSafeEqual } from 'node:crypto';

/** Where `deploy state serve` reads its basic-auth credentials (never argv, URLs or logs). */
export const USERNAME_ENV = 'DEPLOY_STATE_USERNAME';
export const PASSWORD_ENV = 'DEPLOY_STATE_PASSWORD';

export interface Credentials {
  readonly username: string;
  readonly password: string;
}

/**
 * Credentials from the environment: both set, or neither. Returns a problem sentence when
 * only one is set (a half-configured exposure is a mistake, not "no auth").
 */
export function credentialsFromEnv(env: NodeJS.ProcessEnv): Credentials | undefined | { problem: string } {
  const username = env[USERNAME_ENV] ?? '';
  const password = env[PASSWORD_ENV] ?? '';
  if (!username && !password) return undefined;
  if (!username || !password) {
    return { problem: `set both ${USERNAME_ENV} and ${PASSWORD_ENV}, or neither (only ${username ? USERNAME_ENV : PASSWORD_ENV} is set)` };
  }
  if (username.includes(':')) return { problem: `${USERNAME_ENV} must not contain ":" (HTTP basic auth separates user and password with it)` };
  return { username, password };
}

/** Whether an `Authorization` header carries these credentials (constant-time compare). */
export function checkBasicAuth(header: string | undefined, expected: Credentials): boolean {
  if (!header) return false;
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!m) return false;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return false;
  // compare digests, so the lengths are equal and the time does not depend on the secret
  const same = (a: string, b: string) => timingSafeEqual(digest(a), digest(b));
  const userOk = same(decoded.slice(0, colon), expected.username);
  const passOk = same(decoded.slice(colon + 1), expected.password);
  return userOk && passOk;
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}
