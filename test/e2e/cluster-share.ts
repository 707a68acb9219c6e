/**
 * Setup file of the e2e project (vitest.config.ts `setupFiles`), run before each e2e file is
 * imported: takes the lock of the e2e files (files-lock.ts), shared for a `shared` file and
 * exclusive for an `alone` one (side-by-side.ts; a file in neither list runs alone), then, for a
 * shared file, a run slot (run-slots.ts: at most RUN_SLOTS shared files at work at once), and
 * lets both go after the file's last hook (hooks run in stack order: this afterAll, registered
 * first, runs last). The waits, if any, are in the file's setup time in the run's profile
 * (test/support/profile-reporter.ts) and said on the console.
 */
import { afterAll, expect, inject } from 'vitest';
import { takeFilesLock } from './files-lock.js';
import { releaseFileSlot, setFileSlot, START_GRACE_MS, START_WINDOW_MS, takeRunSlot } from './run-slots.js';
import { e2eName, shareOf } from './side-by-side.js';

const testPath = expect.getState().testPath;
if (testPath === undefined) throw new Error('cluster-share.ts: vitest names no test file (expect.getState().testPath); it is a setup file of the e2e project');
const name = e2eName(testPath) ?? testPath;
const share = shareOf(testPath);
if (share === undefined) console.log(`[e2e side by side] ${name} is in neither list of test/e2e/side-by-side.ts: it runs alone`);
const lock = await takeFilesLock(name, share ?? 'alone');
const firstFiles = Date.now() - inject('e2eFilesFrom') < START_WINDOW_MS;
setFileSlot(name, share === 'shared' ? await takeRunSlot(name, { graceMs: firstFiles ? START_GRACE_MS : 0 }) : undefined);
afterAll(async () => {
  await releaseFileSlot();
  await lock.release();
});
