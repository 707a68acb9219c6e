import { readFileSync } from 'node:fs';
import type { InputIssue } from '../../errors.js';
import type { Logger } from '../../log.js';
import { PostgresStateStore } from './postgres-store.js';
import { SqliteStateStore } from './sqlite-store.js';
import type { StateStore } from './store.js';

/** The PostgreSQL database of `deploy state serve` when --data is not given (may carry the password). */
export const DATABASE_URL_ENV = 'DEPLOY_STATE_DATABASE_URL';
/** A file whose first line is the database password (for a URL without one). */
export const DATABASE_PASSWORD_FILE_ENV = 'DEPLOY_STATE_DATABASE_PASSWORD_FILE';

export type StoreLocation =
  | { readonly kind: 'sqlite'; readonly dataDir: string }
  | {
      readonly kind: 'postgres';
      readonly connectionString: string;
      /** The address without credentials: for messages and logs. */
      readonly where: string;
      readonly passwordFile: string | undefined;
    };

export function isDatabaseUrl(s: string): boolean {
  return /^postgres(ql)?:\/\//i.test(s);
}

/** Query parameters of a libpq URL that carry a secret. */
const SECRET_PARAMS = ['password', 'sslpassword'];

/**
 * Where `deploy state serve` keeps its states: `--data` (a directory, or a postgres:// URL
 * without a password: argv is readable by every local user), else DEPLOY_STATE_DATABASE_URL
 * (the password may be in it), else `defaultDir` (SQLite). Flags win over the environment.
 */
export function resolveStoreLocation(data: string | undefined, env: NodeJS.ProcessEnv, defaultDir: string): StoreLocation | { issues: InputIssue[] } {
  const passwordFile = env[DATABASE_PASSWORD_FILE_ENV] || undefined;
  if (data !== undefined && isDatabaseUrl(data)) {
    const parsed = parseDatabaseUrl(data, '--data');
    if ('issue' in parsed) return { issues: [parsed.issue] };
    if (parsed.secret) {
      return {
        issues: [
          {
            where: '--data',
            message: `the URL carries a password, and a command line is visible to every local user: put the URL in ${DATABASE_URL_ENV}, or the password in a file named by ${DATABASE_PASSWORD_FILE_ENV} (or ~/.pgpass)`,
          },
        ],
      };
    }
    return { kind: 'postgres', connectionString: data, where: parsed.where, passwordFile };
  }
  if (data !== undefined) return { kind: 'sqlite', dataDir: data };
  const url = env[DATABASE_URL_ENV];
  if (url) {
    if (!isDatabaseUrl(url)) return { issues: [{ where: DATABASE_URL_ENV, message: 'expected postgres://[user[:password]@]host[:port]/database[?sslmode=...]' }] };
    const parsed = parseDatabaseUrl(url, DATABASE_URL_ENV);
    if ('issue' in parsed) return { issues: [parsed.issue] };
    return { kind: 'postgres', connectionString: url, where: parsed.where, passwordFile };
  }
  return { kind: 'sqlite', dataDir: defaultDir };
}

/** The URL without its password (for messages), and whether it had one. */
function parseDatabaseUrl(url: string, where: string): { where: string; secret: boolean } | { issue: InputIssue } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    // the message must not echo the URL: it may hold a password
    return { issue: { where, message: 'not a valid URL: expected postgres://[user@]host[:port]/database' } };
  }
  const secretParams = SECRET_PARAMS.filter((p) => u.searchParams.has(p));
  const secret = u.password !== '' || secretParams.length > 0;
  u.password = '';
  for (const p of secretParams) u.searchParams.delete(p);
  return { where: u.toString(), secret };
}

/** Opens the store; PostgreSQL: connects and creates its tables when missing. */
export async function openStore(location: StoreLocation, logger?: Logger): Promise<StateStore> {
  if (location.kind === 'sqlite') return SqliteStateStore.open(location.dataDir);
  let connectionString = location.connectionString;
  const url = new URL(connectionString);
  if (location.passwordFile && url.password === '') {
    let password: string;
    try {
      password = readFileSync(location.passwordFile, 'utf8').split(/\r?\n/)[0] ?? '';
    } catch (err) {
      throw new Error(`cannot read ${DATABASE_PASSWORD_FILE_ENV} (${location.passwordFile}): ${(err as Error).message}`, { cause: err });
    }
    // into the URL, in memory only: the client lets a URL's empty password win over a separate one
    url.password = encodeURIComponent(password);
    connectionString = url.toString();
  }
  return PostgresStateStore.open({ connectionString, where: location.where, logger });
}

/** For messages: the data directory or the database address (never a password). */
export function describeLocation(location: StoreLocation): string {
  return location.kind === 'sqlite' ? location.dataDir : location.where;
}
