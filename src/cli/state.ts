import { Command, InvalidArgumentError } from 'commander';
import type { SourceOptions } from '../state/operator.js';
import type { CliContext } from './context.js';

const SERVE_HELP = `
The OpenTofu http backend protocol, one state per path /<key>: GET, POST (?ID=<lock id>
while locked), DELETE (same lock rule; stored as a version, the older ones stay readable),
LOCK and UNLOCK with LockInfo bodies. Every version is kept; a lower serial, the same serial
with other bytes, or another lineage over a non-empty state is refused (409).

Storage (--data, else DEPLOY_STATE_DATABASE_URL, else the default directory below):
  a directory      one SQLite database (WAL, synchronous=FULL); the default
  postgres://...   PostgreSQL: several servers on one database are one backend (every
                   read is a query, every write and lock one transaction)
Database credentials never come from the command line (a URL with a password in --data is
refused) and are never logged. Give them as:
  DEPLOY_STATE_DATABASE_URL=postgres://user:password@host:5432/db?sslmode=verify-full
  DEPLOY_STATE_DATABASE_PASSWORD_FILE=FILE   (its first line; with a URL without password)
  or libpq's PGPASSWORD / ~/.pgpass (PGPASSFILE)
An unreachable database answers 503 (tofu retries), never 404; the server reconnects itself.

Exposure: loopback by default. Basic-auth credentials come only from the environment:
  DEPLOY_STATE_USERNAME, DEPLOY_STATE_PASSWORD   (both or neither)
A non-loopback --listen address without them is refused. Clients (tofu) use
TF_HTTP_USERNAME/TF_HTTP_PASSWORD. Prints the URL on stdout, then serves until SIGINT, SIGTERM
or SIGHUP: it stops taking connections, gives the requests in flight up to 5 s, closes the
store and exits 0 (a signal is how a server ends; a second signal leaves at once, exit 128+n).`;

const DATA_DIR_HELP = `
Default data directory:
  \${DEPLOY_STATE_DIR:-\${XDG_STATE_HOME:-$HOME/.local/state}/k8s-deployer}/state`;

const SOURCE_HELP = `
Where it looks: --data DIR when given; else the backend at TF_HTTP_ADDRESS when set: a base
address, the state <key> is at <base>/<key> as for plan/apply/destroy (credentials from
TF_HTTP_USERNAME/TF_HTTP_PASSWORD; list, versions and unlock without --key need a
\`deploy state serve\` backend); else the embedded backend's data directory,
  \${DEPLOY_STATE_DIR:-\${XDG_STATE_HOME:-$HOME/.local/state}/k8s-deployer}/state
(read directly; safe while a deploy run or a server uses it).`;

const UNLOCK_HELP = `
Every deploy run holds its state lock with Who = DEPLOY_RUN_ID (default user@host:pid). The
CD workflow names each run, and its last step (if: always()) runs
  deploy state unlock --held-by "$DEPLOY_RUN_ID"
so that a cancelled job leaves no lock. A state that is not locked, or locked by no run of
that name (without --key), releases nothing and exits 0. Exit 2: --key is locked by another
run (the message names it), or the ID names no held lock.

A stale lock (its process is gone): --force-stale releases a lock only when its holder was
taken on this host (same host name) by a process that no longer runs: Who user@host:pid, or
deploy's own record of the PID. It never judges a lock taken on another host, nor one that
names no process (tofu's own user@host, a CD run name): those are kept and said. With --key
or an ID, a lock that is not stale is an error naming why (exit 2), and nothing is released.
  deploy state unlock --force-stale                 # every stale lock the backend lists
  deploy state unlock --force-stale --key g1-all    # the lock of that state, if stale`;

const MIGRATE_HELP = `
One laptop -> a shared backend: run \`deploy state serve\` (or any OpenTofu http backend) where
the team reaches it, then
  TF_HTTP_USERNAME=... TF_HTTP_PASSWORD=... deploy state migrate --to https://state.example:8787
and from then on run plan/apply/destroy with TF_HTTP_ADDRESS set to that address.

Per state: both sides are locked (Who = DEPLOY_RUN_ID, default user@host:pid), the target's
state is read, and the source's newest version is copied only when the target has none or an
older serial of the same lineage. Refused (nothing copied for that key, exit 2 at the end):
another lineage at the target, a higher serial there, the same serial with other bytes, a
lock held by another run. The same state already there is a no-op, so running it again is
safe. The states stay at the source. Afterwards \`deploy plan\` against the new backend must
show no changes (the command prints how).

Credentials: the target's from TF_HTTP_USERNAME/TF_HTTP_PASSWORD; a --from backend's from
DEPLOY_MIGRATE_FROM_USERNAME/DEPLOY_MIGRATE_FROM_PASSWORD. Only the newest version of each
state moves (older versions stay at the source). A --from backend that is not a
\`deploy state serve\` cannot list its states: name them with --key.`;

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function parseSerial(v: string): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError('expected a non-negative integer');
  return n;
}

function parseMegabytes(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('expected a positive number of MB');
  return n;
}

/** `deploy state serve|list|versions|show|migrate|unlock`. */
export function registerState(program: Command, ctx: CliContext): void {
  const state = program
    .command('state')
    .description('The state backend: serve it, inspect, move or unlock the states it keeps.');

  state
    .command('serve')
    .description('Serve the OpenTofu http state backend (what deploy embeds when TF_HTTP_ADDRESS is unset).')
    .option('--listen <host:port>', 'address to listen on (port 0: any free port)', '127.0.0.1:8787')
    .option('--data <dir|url>', 'data directory, or postgres://user@host/db (no password: see below)')
    .option('--max-body-mb <n>', 'largest accepted state, in MB (larger: 413)', parseMegabytes, 64)
    .addHelpText('after', SERVE_HELP + DATA_DIR_HELP)
    .action(async (opts: { listen: string; data?: string; maxBodyMb: number }) => {
      ctx.held.exact = true; // it takes no lock (the locks it keeps are its clients')
      const { serveState } = await import('../state/server/serve.js');
      await serveState({ ...opts, env: ctx.env, signal: ctx.signal, logger: ctx.logger(), onServing: (url) => ctx.stdout.write(`${url}\n`) });
    });

  const source = (cmd: Command) => cmd.option('--data <dir>', 'read this data directory directly').addHelpText('after', SOURCE_HELP);
  // where to read: --data, else the backend's coordinates, parsed once here (only without --data)
  const where = async (data: string | undefined): Promise<SourceOptions> => {
    if (data) return { data };
    const { parseBackendCoordinates } = await import('../config/backend-coordinates.js');
    return { backend: parseBackendCoordinates(ctx.env) };
  };

  source(state.command('list'))
    .description('List the states: newest serial, versions kept, last update, size, and the lock holder if any.')
    .option('--json', 'print JSON')
    .action(async (opts: { data?: string; json?: boolean }) => {
      const { listStates } = await import('../state/operator.js');
      const { reportStates } = await import('./report/state-report.js');
      reportStates(ctx, await listStates(ctx, await where(opts.data)), opts.json);
    });

  source(state.command('versions'))
    .description('List every kept version of a state: serial, time, size.')
    .argument('<key>', 'state key (e.g. <group>-<target>)')
    .option('--json', 'print JSON')
    .action(async (key: string, opts: { data?: string; json?: boolean }) => {
      const { listVersions } = await import('../state/operator.js');
      const { reportVersions } = await import('./report/state-report.js');
      reportVersions(ctx, key, await listVersions(ctx, key, await where(opts.data)), opts.json);
    });

  source(state.command('show'))
    .description('Print a state as JSON with every secret value hidden (sensitive outputs and attributes, secret-looking names, provider private data).')
    .argument('<key>', 'state key (e.g. <group>-<target>)')
    .option('--serial <n>', 'an older kept version', parseSerial)
    .action(async (key: string, opts: { data?: string; serial?: number }) => {
      const { showState } = await import('../state/operator.js');
      const { reportState } = await import('./report/state-report.js');
      reportState(ctx, await showState(ctx, key, { serial: opts.serial, ...(await where(opts.data)) }));
    });

  state
    .command('migrate')
    .description('Copy every state (newest version, serial and lineage unchanged) to another backend, under the same keys.')
    .requiredOption('--to <base address>', 'the target backend: the base address runs will use as TF_HTTP_ADDRESS')
    .option('--from <base address>', 'read the states from this backend instead of the data directory')
    .option('--data <dir>', "read the states from this data directory (default: the embedded backend's)")
    .option('--key <key>', 'only this state (repeatable; needed when --from cannot list its states)', collect, [] as string[])
    .option('--json', 'print one JSON record per state')
    .addHelpText('after', MIGRATE_HELP + DATA_DIR_HELP)
    .action(async (opts: { to: string; from?: string; data?: string; key: string[]; json?: boolean }) => {
      ctx.held.exact = true; // migrate records each lock it takes (a second Ctrl-C names them)
      const { migrateStates } = await import('../state/migrate.js');
      const { defaultStateDataDir, parseMigrateBackends } = await import('../config/backend-coordinates.js');
      const { reportMigration, reportOutcome } = await import('./report/state-report.js');
      const backends = parseMigrateBackends(opts, ctx.env);
      const migrate = { ...backends, data: opts.data, key: opts.key, defaultDataDir: defaultStateDataDir(ctx.env) };
      reportMigration(ctx, await migrateStates(ctx, migrate, (outcome) => reportOutcome(ctx, outcome, opts.json)), opts.json);
    });

  source(state.command('unlock'))
    .description('Release a lock left by a run that is gone: by its ID (tofu prints it; `deploy state list` shows it), or as the run that holds it (--held-by).')
    .argument('[id]', 'the lock ID (optional with --held-by)')
    .option('--key <key>', 'the state the lock is on (default: found by the ID; with --held-by: every state the backend lists)')
    .option('--held-by <who>', "release only a lock taken by this run: its DEPLOY_RUN_ID (default of a run: user@host:pid); a named --key locked by another run is an error naming the holder")
    .option('--force-stale', 'release only locks whose holder is gone: taken on this host by a PID that no longer runs (see below)')
    .addHelpText('after', UNLOCK_HELP)
    .action(async (id: string | undefined, opts: { data?: string; key?: string; heldBy?: string; forceStale?: boolean }) => {
      ctx.held.exact = true; // it takes no lock
      const { unlockState } = await import('../state/operator.js');
      const { reportKept, reportNothingReleased, reportNothingStale, reportReleased } = await import('./report/state-report.js');
      const { where: from, released } = await unlockState(ctx, id, { key: opts.key, heldBy: opts.heldBy, forceStale: opts.forceStale, ...(await where(opts.data)) }, (lock) => reportReleased(ctx, lock), (kept) => reportKept(ctx, kept));
      if (released === 0 && opts.heldBy !== undefined) reportNothingReleased(ctx, opts.heldBy, opts.key, from);
      if (released === 0 && opts.forceStale) reportNothingStale(ctx, opts.key, from);
    });
}
