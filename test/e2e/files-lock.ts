/**
 * The lock of the e2e files (issue 49): `<state>/cluster.e2e-files.lock`, beside the cluster's
 * state directory (global-setup.ts names `<state>/cluster.e2e.lock`, the lock of a whole run,
 * the same way). A `shared` file holds it shared, an `alone` one exclusive (side-by-side.ts);
 * cluster-share.ts takes it before each e2e file and lets it go after the file's last hook.
 *
 * flock(1) holds the lock in a child process for as long as that child's stdin is open (as
 * global-setup.ts's lockCluster does): it goes when release() closes it, or when the process
 * that took it dies (vitest's forks pool: one process per test file), whatever its tests did.
 *
 * A file that has to wait says so on a line of its own, naming its class and the files that
 * hold the lock (each holder leaves a note, `<holders dir>/<pid of its flock>`: name, class,
 * since when), and again when it gets the lock, with the seconds it waited: what a slow run
 * spent waiting, and for whom.
 */
import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { stateDir } from './global-setup.js';
import { processRuns } from '../../src/process-alive.js';
import type { Share } from './side-by-side.js';

/** Longer than any e2e file takes (the slowest took 6 min), shorter than the e2e hook timeout (1 h). */
export const WAIT_S = 3_000;

/** The lock of the e2e files: beside the cluster's state directory. */
export const filesLockFile = (): string => `${stateDir()}.e2e-files.lock`;

/**
 * Holds the lock on fd 9 and says how it went: `now` (at once), else `waiting`, then `locked`
 * (or exit 1 when flock gave up). `exec cat` keeps fd 9, and so the lock, until stdin closes.
 */
const HOLDER = `
exec 9>>"$1"
if flock -n "$2" 9; then echo now; else echo waiting; flock -w "$3" "$2" 9 || exit 1; echo locked; fi
exec cat >/dev/null
`;

export interface FilesLockOptions {
  /** The lock file (default filesLockFile()); its holders' notes go to `<lock file>.holders/`. */
  readonly lockFile?: string;
  /** Where the waiting lines go (default: the console, which vitest shows under the file). */
  readonly log?: (line: string) => void;
  readonly waitSeconds?: number;
}

export interface FilesLock {
  /** How long the lock took, in ms (0 when it was free). */
  readonly waitedMs: number;
  release(): Promise<void>;
}

/** Takes the lock for the e2e file `name` of class `share` (shared or exclusive); resolves once it is held. */
export async function takeFilesLock(name: string, share: Share, opts: FilesLockOptions = {}): Promise<FilesLock> {
  const file = opts.lockFile ?? filesLockFile();
  const notes = `${file}.holders`;
  const log = opts.log ?? consoleLine;
  const waitS = opts.waitSeconds ?? WAIT_S;
  await mkdir(dirname(file), { recursive: true });
  await mkdir(notes, { recursive: true });
  const held = await holdWithFlock(HOLDER, [file, share === 'alone' ? '-x' : '-s', String(waitS)], {
    what: `${name} (${share}): the lock ${file}`,
    waitS,
    waiting: async () => log(waitingLine(name, share, await holders(notes))),
    hint: `its holders' notes: ${notes}`,
  });
  if (held.waitedMs > 0) log(`[e2e side by side] ${name} (${share}) got the lock after ${(held.waitedMs / 1000).toFixed(1)} s of waiting`);
  const note = join(notes, String(held.pid));
  await writeFile(note, `${name} (${share}, since ${new Date().toISOString().slice(11, 19)})\n`);
  return {
    waitedMs: held.waitedMs,
    release: async () => {
      await rm(note, { force: true });
      await held.release();
    },
  };
}

/** Where the e2e files' waiting lines go unless told otherwise: the console, which vitest shows under the file. */
export const consoleLine = (line: string): void => console.log(line);

interface HoldOptions {
  /** Names the lock in an error. */
  readonly what: string;
  readonly waitS: number;
  /** Called once when the script says `waiting` (a script that never waits needs none). */
  readonly waiting?: () => Promise<void>;
  /** Added to the error when the lock was not held in time. */
  readonly hint?: string;
}

/** A lock held by a flock(1) child (a HOLDER-like script): its pid, the wait, and how to let it go. */
export interface HeldByFlock {
  readonly pid: number;
  /** 0 when the script said `now`. */
  readonly waitedMs: number;
  /** The rest of the script's first line after `now`/`locked` (e.g. which slot). */
  readonly detail: string;
  release(): Promise<void>;
}

/**
 * Runs a holder script (bash) that prints `now[ detail]` when it got its lock at once, else
 * `waiting` and later `locked[ detail]` (or exits non-zero: no lock within `waitS`), and then
 * holds the lock until its stdin closes. `waiting` is called once, before the wait is over.
 */
export async function holdWithFlock(script: string, args: readonly string[], o: HoldOptions): Promise<HeldByFlock>;
/** The same with `orNone`: undefined, not an error, when the script exits 1 before it holds the lock (nothing free). */
export async function holdWithFlock(script: string, args: readonly string[], o: HoldOptions & { orNone: true }): Promise<HeldByFlock | undefined>;
export async function holdWithFlock(script: string, args: readonly string[], o: HoldOptions & { orNone?: boolean }): Promise<HeldByFlock | undefined> {
  const started = Date.now();
  const child = spawn('bash', ['-c', script, 'e2e-files-lock', ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  /** The waiting line, once said. */
  let said: Promise<void> | undefined;
  const detail = await new Promise<string | undefined>((resolve, reject) => {
    child.once('error', (err) => reject(new Error(`${o.what}: cannot run flock(1) through bash: ${err.message}`)));
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const m = /^(now|locked)(?: (.*))?$/.exec(line);
      if (line === 'waiting') {
        said = o.waiting?.() ?? Promise.resolve();
      } else if (m) {
        lines.close();
        resolve(m[2] ?? '');
      }
    });
    void exited.then((code) => (o.orNone && code === 1 ? resolve(undefined) : reject(new Error(`${o.what}: not held within ${o.waitS} s (flock exit ${code})${o.hint ? `; ${o.hint}` : ''}`))));
  });
  if (detail === undefined) return undefined;
  const waited = said !== undefined;
  await said;
  return {
    pid: child.pid!,
    waitedMs: waited ? Date.now() - started : 0,
    detail,
    release: async () => {
      child.stdin!.end();
      await exited;
    },
  };
}

/** The files that hold the lock now, from the notes of holders whose flock still runs (a dead one's note is removed). */
async function holders(notes: string): Promise<string[]> {
  const out: string[] = [];
  for (const pid of await readdir(notes).catch(() => [] as string[])) {
    if (!/^\d+$/.test(pid)) continue;
    if (!processRuns(Number(pid))) {
      await rm(join(notes, pid), { force: true });
      continue;
    }
    const note = (await readFile(join(notes, pid), 'utf8').catch(() => '')).trim();
    if (note) out.push(note);
  }
  return out.sort();
}

function waitingLine(name: string, share: Share, others: readonly string[]): string {
  const held = others.length > 0 ? others.join(', ') : '(no note yet: a holder that just started or just ended)';
  return share === 'alone'
    ? `[e2e side by side] ${name} (alone) waits until no other e2e file runs; running now: ${held}`
    : `[e2e side by side] ${name} (shared) waits while a file runs alone: ${held}`;
}
