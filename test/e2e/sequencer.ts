/**
 * The order of the test files (vitest.config.ts `sequence.sequencer`; vitest has one sequencer
 * for all projects): vitest's own (failed first, then the slowest first, by the last run's
 * times), except that the e2e project's `alone` files (side-by-side.ts) come after all its
 * `shared` files, in one block.
 *
 * Why a block: vitest hands the files to its two e2e workers in this order, and each file waits
 * in cluster-share.ts for its lock. flock(1) does not queue a waiting exclusive lock before later
 * shared ones, so an alone file between shared files could wait for as long as shared files keep
 * coming. In one block, once the first alone file waits, no shared file is left to start.
 *
 * Why last, not first: npm test runs the unit and integration projects beside the e2e project
 * (test/run.ts), the CPU of this 2-core machine busy with them for the run's first 7 minutes or
 * so. The alone files are alone for their timing (a deadline a few seconds wide, samples
 * of downtime); last, they run on a machine where nothing else does. And the shared block, the
 * slowest first, ends with short files, so the worker that reaches the first alone file waits
 * little for the other to finish.
 *
 * Slowest first by what: a file's time in vitest's results of the last run on this machine, and
 * where a file has none (every file of a fresh clone, as CI's: vitest would then run the largest
 * file first, and a file's size says little of its time), the seconds it took in the last full
 * run (side-by-side.ts EXPECTED_SECONDS).
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { aloneLast, e2eName, EXPECTED_SECONDS, shareOf, slowestFirst } from './side-by-side.ts';

/** The project whose files side-by-side.ts classifies. */
const E2E_PROJECT = 'e2e';

export default class AloneLastSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const isE2e = (spec: TestSpecification) => spec.project.name === E2E_PROJECT;
    const results = new Map(files.map((spec) => [spec, this.ctx.cache.getTestSpecificationResult(spec)]));
    const seconds = (spec: TestSpecification) => {
      const last = results.get(spec);
      return last ? last.duration / 1000 : EXPECTED_SECONDS[e2eName(spec.moduleId) ?? ''];
    };
    const sorted = slowestFirst(await super.sort(files), isE2e, seconds, (spec) => results.get(spec)?.failed === true);
    // unclassified e2e files run alone (cluster-share.ts): in the alone block too
    return aloneLast(sorted, (spec) => (isE2e(spec) ? (shareOf(spec.moduleId) ?? 'alone') : undefined));
  }
}
