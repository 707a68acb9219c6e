import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

// A real PostgreSQL server for the tests and the bench: Debian's package (installed by
// toolchain/host-packages.sh, group state-db, when missing: npm test's pretest does it), its own data
// directory in a new temporary directory, listening on 127.0.0.1 (a free port) and on a Unix
// socket in that directory, stopped by its PID and removed at the end. PostgreSQL refuses to
// run as root (https://www.postgresql.org/docs/15/server-start.html), so as root the server
// runs as the `postgres` user the package creates (else `nobody`), started with that uid and
// gid directly (no su, sudo or runuser needed).

export interface Database {
  readonly name: string;
  /** postgres://deploy:<password>@127.0.0.1:<port>/<name> */
  readonly url: string;
  /** The same URL without the password. */
  readonly urlWithoutPassword: string;
  readonly password: string;
}

export interface PostgresServer {
  readonly port: number;
  /** The postmaster's PID while it runs. */
  pid(): number | undefined;
  /** A new database owned by the role `deploy` (not a superuser), which the URL logs in as. */
  createDatabase(name?: string): Promise<Database>;
  /** Runs `sql` as the superuser in database `db`. */
  asSuperuser(db: string, sql: string): Promise<void>;
  /** Fast shutdown (SIGINT to the postmaster): open connections are cut. */
  stop(): Promise<void>;
  /** Starts it again on the same data directory and port. */
  start(): Promise<void>;
  /** Stops it and removes its directory. */
  remove(): Promise<void>;
}

const READY_TIMEOUT_MS = 60_000;
const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The directory of Debian's PostgreSQL programs (newest major version). When missing, the
 * project's host-package script installs the package (group `state-db`; as root, as `npm
 * test`'s pretest does) or says how.
 */
export function postgresBinDir(): string {
  const found = findBinDir();
  if (found) return found;
  const r = spawnSync('bash', [join(repo, 'toolchain', 'host-packages.sh'), 'state-db'], { encoding: 'utf8', timeout: 15 * 60_000 });
  const after = findBinDir();
  if (!after) throw new Error(`PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/postgres) and installing it failed (exit ${r.status}): ${r.stderr}`);
  return after;
}

function findBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : undefined;
}

/** The uid/gid the server runs as: ours, or an unprivileged user when we are root. */
function serverUser(): { uid: number; gid: number; name: string } {
  const uid = process.getuid?.() ?? 0;
  if (uid !== 0) return { uid, gid: process.getgid?.() ?? 0, name: 'self' };
  const users = readFileSync('/etc/passwd', 'utf8').split('\n').map((l) => l.split(':'));
  for (const name of ['postgres', 'nobody']) {
    const u = users.find((f) => f[0] === name);
    if (u) return { uid: Number(u[2]), gid: Number(u[3]), name };
  }
  throw new Error('running as root, and there is neither a postgres nor a nobody user to run PostgreSQL as');
}

/** TMPDIR when every directory above it lets other users pass (o+x), else /tmp. */
function reachableTmp(): string {
  const t = tmpdir();
  for (let d = t; ; d = dirname(d)) {
    if ((statSync(d).mode & 0o001) === 0) return '/tmp';
    if (dirname(d) === d) return t;
  }
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve, reject) => srv.listen(0, '127.0.0.1', resolve).once('error', reject));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

export async function startPostgres(): Promise<PostgresServer> {
  const bin = postgresBinDir();
  const user = serverUser();
  // the server's user must reach its directory: a TMPDIR inside root's home would not do
  const base = process.getuid?.() === 0 ? reachableTmp() : tmpdir();
  const dir = mkdtempSync(join(base, 'deploy-pg-'));
  const data = join(dir, 'data');
  const adminPassword = randomBytes(18).toString('base64url');
  const deployPassword = randomBytes(18).toString('base64url');
  writeFileSync(join(dir, 'pw'), `${adminPassword}\n`, { mode: 0o600 });
  chownSync(dir, user.uid, user.gid);
  chownSync(join(dir, 'pw'), user.uid, user.gid);
  const asUser = { uid: user.uid, gid: user.gid, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C', LC_ALL: 'C' } };
  // --no-sync: only initdb's final flush of a throwaway cluster; the server itself runs with fsync on
  const init = spawnSync(
    join(bin, 'initdb'),
    ['-D', data, '-U', 'admin', `--pwfile=${join(dir, 'pw')}`, '--auth=scram-sha-256', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'],
    { ...asUser, encoding: 'utf8', timeout: 120_000 },
  );
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb (as ${user.name}) failed: ${init.stdout}${init.stderr}`);
  }
  rmSync(join(dir, 'pw'));

  let port = await freePort();
  let child: ChildProcess | undefined;
  let log = '';
  const stopOnExit = () => child?.pid && child.exitCode === null && process.kill(child.pid, 'SIGQUIT');

  const launch = async (): Promise<void> => {
    log = '';
    const c = spawn(join(bin, 'postgres'), ['-D', data, '-k', dir, '-h', '127.0.0.1', '-p', String(port), '-c', 'max_connections=300', '-c', 'shared_buffers=64MB'], {
      ...asUser,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = c;
    c.stdout!.on('data', (d) => (log += String(d)));
    c.stderr!.on('data', (d) => (log += String(d)));
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      if (c.exitCode !== null) throw new Error(`postgres exited (${c.exitCode}): ${log}`);
      const client = new pg.Client({ host: '127.0.0.1', port, user: 'admin', password: adminPassword, database: 'postgres', connectionTimeoutMillis: 2_000 });
      try {
        await client.connect();
        await client.end();
        return;
      } catch (err) {
        await client.end().catch(() => {});
        if (Date.now() > deadline) throw new Error(`postgres was not ready within ${READY_TIMEOUT_MS} ms: ${(err as Error).message}\n${log}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };

  const stop = async (): Promise<void> => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill('SIGINT'); // fast shutdown
    const timer = setTimeout(() => c.kill('SIGQUIT'), 20_000); // immediate shutdown
    await exited;
    clearTimeout(timer);
  };

  for (let attempt = 1; ; attempt += 1) {
    try {
      await launch();
      break;
    } catch (err) {
      await stop();
      // another process took the port between the probe and the start: take another
      if (attempt < 3 && /could not bind|Address already in use/i.test(log)) {
        port = await freePort();
        continue;
      }
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }
  process.once('exit', stopOnExit);

  const admin = async <T>(fn: (c: pg.Client) => Promise<T>, database = 'postgres'): Promise<T> => {
    const client = new pg.Client({ host: '127.0.0.1', port, user: 'admin', password: adminPassword, database });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  };
  await admin((c) => c.query(`CREATE ROLE deploy LOGIN PASSWORD '${deployPassword}'`));
  let n = 0;

  return {
    get port() {
      return port;
    },
    pid: () => (child && child.exitCode === null && child.signalCode === null ? child.pid : undefined),
    async createDatabase(name?: string) {
      n += 1;
      const db = name ?? `state_${process.pid}_${n}`;
      if (!/^[a-z_][a-z0-9_]*$/.test(db)) throw new Error(`bad database name ${db}`);
      await admin((c) => c.query(`CREATE DATABASE ${db} OWNER deploy`));
      const urlWithoutPassword = `postgres://deploy@127.0.0.1:${port}/${db}`;
      return { name: db, url: `postgres://deploy:${deployPassword}@127.0.0.1:${port}/${db}`, urlWithoutPassword, password: deployPassword };
    },
    async asSuperuser(db: string, sql: string) {
      await admin((c) => c.query(sql), db);
    },
    stop,
    start: launch,
    async remove() {
      await stop();
      process.off('exit', stopOnExit);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let shared: Promise<PostgresServer> | undefined;

/** One PostgreSQL server per test file (or bench run), started on first use; stopSharedPostgres() in afterAll. */
export function sharedPostgres(): Promise<PostgresServer> {
  return (shared ??= startPostgres());
}

export async function stopSharedPostgres(): Promise<void> {
  const p = shared;
  shared = undefined;
  if (p) await (await p).remove();
}
