/**
 * The run slots of the e2e files (issue 49): at most RUN_SLOTS shared files work on the cluster
 * at once, however many workers vitest has (vitest.config.ts gives the e2e project one more).
 * Why: a shared file that waits minutes on the cluster's clock (deploy-spire waits about 6 min
 * for kubelet to renew its pods' tokens) held one of the two workers while it did nothing; now it
 * gives its slot back for that wait (`withoutRunSlot`), the spare worker's file takes it, and the
 * CPU load stays that of two files at a time, the load every shared file's bounds were measured
 * under (docs/tests.md, "e2e files side by side").
 *
 * A slot is one of the files `<cluster state dir>.e2e-slots/<i>` (i < RUN_SLOTS) held with
 * flock(1) by a child process as long as its stdin is open (files-lock.ts): it goes with the
 * worker. A file that waits for one looks every half second, and a free slot goes to the waiting
 * file expected to take longest (takeRunSlot); it says so once, and again when it has one.
 * cluster-share.ts takes a slot for every shared file after the files' lock (an alone file has
 * the cluster to itself and needs none) and lets it go after the file's last hook.
 */
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { processRuns } from '../../src/process-alive.js';
import { stateDir } from './global-setup.js';
import { consoleLine, holdWithFlock, WAIT_S, type HeldByFlock } from './files-lock.js';
import { EXPECTED_SECONDS, RUN_SLOTS } from './side-by-side.js';

/** Where the slots are: beside the cluster's state directory, as the files' lock. */
export const runSlotsDir = (): string => `${stateDir()}.e2e-slots`;

/** Tries every slot once without waiting: `now <i>` and holds it on fd 9 until stdin closes, else exit 1. */
const TRY_SLOTS = `
dir=$1; n=$2
for ((i = 0; i < n; i++)); do
  exec 9>>"$dir/$i"
  if flock -n 9; then echo "now $i"; exec cat >/dev/null; fi
  exec 9>&-
done
exit 1
`;

/** How often a waiting file looks for a free slot. */
const POLL_MS = 500;

export interface RunSlotOptions {
  readonly dir?: string;
  readonly slots?: number;
  readonly log?: (line: string) => void;
  readonly waitSeconds?: number;
  /** Among the files waiting for a slot, the one of the most seconds takes a free one first (default: its EXPECTED_SECONDS). */
  readonly seconds?: number;
  /** How long the file stays in the queue before its first try (default 0; cluster-share.ts: START_GRACE_MS for the files vitest starts at once). */
  readonly graceMs?: number;
}

/**
 * The first files of a run: vitest starts one in each of its E2E_WORKERS workers at the same
 * moment, and a file whose ticket is not yet in the queue cannot be let first. Each of them waits
 * this long before its first try, so that the queue holds them all (their start-up differs by
 * tenths of a second). A file started later starts alone (a worker came free): no wait.
 */
export const START_GRACE_MS = 2_000;
/** How long after the files' start a file counts as one of the first ones. */
export const START_WINDOW_MS = 60_000;

let tickets = 0;

/**
 * Takes a run slot for the e2e file `name`; resolves once one is held, its number in `detail`.
 * A free slot goes to the waiting file expected to take longest (EXPECTED_SECONDS, the
 * longest-first rule of the e2e order, sequencer.ts): vitest starts a file in each of its three
 * workers at once, and the first in the e2e order (deploy-spire, which gives its slot back later)
 * must not lose the race to the third. Each waiting file leaves a ticket
 * `<dir>/waiting/<seconds>-<pid>-<n>`; a ticket whose process is gone does not count.
 */
export async function takeRunSlot(name: string, opts: RunSlotOptions = {}): Promise<HeldByFlock> {
  const dir = opts.dir ?? runSlotsDir();
  const slots = opts.slots ?? RUN_SLOTS;
  const log = opts.log ?? consoleLine;
  const waitS = opts.waitSeconds ?? WAIT_S;
  const seconds = Math.round(opts.seconds ?? EXPECTED_SECONDS[name] ?? 0);
  const queue = join(dir, 'waiting');
  await mkdir(queue, { recursive: true });
  const ticket = `${seconds}-${process.pid}-${++tickets}`;
  await writeFile(join(queue, ticket), `${name}\n`);
  const started = Date.now();
  let said = false;
  try {
    if (opts.graceMs) await new Promise((r) => setTimeout(r, opts.graceMs));
    for (;;) {
      if ((await firstInQueue(queue)) === ticket) {
        const held = await holdWithFlock(TRY_SLOTS, [dir, String(slots)], { what: `${name}: a run slot of ${dir}`, waitS, orNone: true });
        if (held) {
          const waitedMs = said ? Date.now() - started : 0;
          if (said) log(`[e2e side by side] ${name} got run slot ${held.detail} after ${(waitedMs / 1000).toFixed(1)} s of waiting`);
          return { ...held, waitedMs };
        }
      }
      if (!said) {
        log(`[e2e side by side] ${name} waits for a run slot: ${slots} files already work on the cluster`);
        said = true;
      }
      if (Date.now() - started > waitS * 1000) throw new Error(`${name}: no run slot of ${dir} within ${waitS} s; the slots are ${dir}/0..${slots - 1}, the files waiting for one: ${queue}`);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  } finally {
    await rm(join(queue, ticket), { force: true });
  }
}

/** The ticket that goes first: the most seconds, then the oldest process; tickets of processes gone are removed. */
async function firstInQueue(queue: string): Promise<string | undefined> {
  const live: { ticket: string; seconds: number; pid: number; n: number }[] = [];
  for (const t of await readdir(queue).catch(() => [] as string[])) {
    const m = /^(\d+)-(\d+)-(\d+)$/.exec(t);
    if (!m) continue;
    if (!processRuns(Number(m[2]))) {
      await rm(join(queue, t), { force: true });
      continue;
    }
    live.push({ ticket: t, seconds: Number(m[1]), pid: Number(m[2]), n: Number(m[3]) });
  }
  live.sort((a, b) => b.seconds - a.seconds || a.pid - b.pid || a.n - b.n);
  return live[0]?.ticket;
}

/**
 * The run slot of the file this worker runs (cluster-share.ts sets it; forks pool: one process per
 * file, so one file's module state).
 */
let current: { name: string; slot: HeldByFlock | undefined; opts: RunSlotOptions } | undefined;

/** Called by cluster-share.ts: this file holds `slot` (undefined for an alone file). */
export function setFileSlot(name: string, slot: HeldByFlock | undefined, opts: RunSlotOptions = {}): void {
  current = { name, slot, opts };
}

/** Lets this file's slot go (its last hook). */
export async function releaseFileSlot(): Promise<void> {
  const slot = current?.slot;
  if (current) current.slot = undefined;
  await slot?.release();
}

/**
 * Runs `wait` without this file's run slot: for a wait on the cluster's clock that loads neither
 * the CPU nor the cluster (polls of a few seconds apart). The slot goes back before, and the file
 * takes one again after (it may wait for it: another file took it). An alone file holds none and
 * runs `wait` as it is.
 */
export async function withoutRunSlot<T>(why: string, wait: () => Promise<T>): Promise<T> {
  if (current === undefined) throw new Error(`withoutRunSlot(${why}): no e2e file's slot is known here (cluster-share.ts, the e2e project's setup file, did not run in this worker)`);
  const file = current;
  if (file.slot === undefined) return wait();
  const log = file.opts.log ?? consoleLine;
  log(`[e2e side by side] ${file.name} gives back run slot ${file.slot.detail} while it ${why}`);
  await file.slot.release();
  file.slot = undefined;
  try {
    return await wait();
  } finally {
    file.slot = await takeRunSlot(file.name, file.opts);
  }
}
