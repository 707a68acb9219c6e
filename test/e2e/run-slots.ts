/**
 * The run slots of the e2e files (issue 49): at most RUN_SLOTS shared files work on the cluster
 * at once, however many workers vitest has (vitest.config.ts gives the e2e project one more).
 * Why: a shared file that waits minutes on the cluster's clock (deploy-spire waits about 6 min
 * for kubelet to renew its pods' tokens) held one of the two workers while it did nothing; now it
 * gives its slot back for that wait (`withoutRunSlot`), the spare worker's file takes it, and the
 * CPU load stays that of two files at a time, the load every shared file's bounds were measured
 * under (docs/tests.md, "e2e files side by side").
 *
 * A slot is one of the files `<state>.e2e-slots/<i>` (i < RUN_SLOTS) held with flock(1) by a
 * child process as long as its stdin is open (files-lock.ts): it goes with the worker. A file
 * that waits for one tries each in turn (half a second on each) until one is free; it says so
 * once, and again when it has one. cluster-share.ts takes a slot for every shared file after the
 * files' lock (an alone file has the cluster to itself and needs none) and lets it go after the
 * file's last hook.
 */
import { mkdir } from 'node:fs/promises';
import { stateDir } from './global-setup.js';
import { holdWithFlock, WAIT_S, type HeldByFlock } from './files-lock.js';
import { RUN_SLOTS } from './side-by-side.js';

/** Where the slots are: beside the cluster's state directory, as the files' lock. */
export const runSlotsDir = (): string => `${stateDir()}.e2e-slots`;

/** Tries every slot without waiting (`now <i>`), then in turn with a wait of half a second on each (`locked <i>`); holds it on fd 9 until stdin closes. */
const SLOT_HOLDER = `
dir=$1; n=$2; end=$((SECONDS + $3))
try() {
  for ((i = 0; i < n; i++)); do
    exec 9>>"$dir/$i"
    if flock $1 9; then echo "$2 $i"; exec cat >/dev/null; fi
    exec 9>&-
  done
}
try -n now
echo waiting
while ((SECONDS < end)); do try '-w 0.5' locked; done
exit 1
`;

export interface RunSlotOptions {
  readonly dir?: string;
  readonly slots?: number;
  readonly log?: (line: string) => void;
  readonly waitSeconds?: number;
}

/** Takes a run slot for the e2e file `name`; resolves once one is held, with its number. */
export async function takeRunSlot(name: string, opts: RunSlotOptions = {}): Promise<HeldByFlock> {
  const dir = opts.dir ?? runSlotsDir();
  const slots = opts.slots ?? RUN_SLOTS;
  const log = opts.log ?? ((line: string) => console.log(line));
  const waitS = opts.waitSeconds ?? WAIT_S;
  await mkdir(dir, { recursive: true });
  const held = await holdWithFlock(SLOT_HOLDER, [dir, String(slots), String(waitS)], {
    what: `${name}: a run slot of ${dir}`,
    waitS,
    waiting: async () => log(`[e2e side by side] ${name} waits for a run slot: ${slots} files already work on the cluster`),
    hint: `the slots are ${dir}/0..${slots - 1}`,
  });
  if (held.waitedMs > 0) log(`[e2e side by side] ${name} got run slot ${held.detail} after ${(held.waitedMs / 1000).toFixed(1)} s of waiting`);
  return held;
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
  const log = file.opts.log ?? ((line: string) => console.log(line));
  log(`[e2e side by side] ${file.name} gives back run slot ${file.slot.detail} while it ${why}`);
  await file.slot.release();
  file.slot = undefined;
  try {
    return await wait();
  } finally {
    file.slot = await takeRunSlot(file.name, file.opts);
  }
}
