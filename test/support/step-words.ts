/**
 * A step's stderr as the operator reads it: each typed line (src/contract/step-lines.ts) in
 * its words. A line that is not typed is marked, so a test of a step's own line fails when
 * the step prints words instead of its typed line.
 */
import { parseStepLine, stepLineWords } from '../../src/contract/step-lines.js';

export function stepWords(stderr: string): string {
  return stderr
    .split('\n')
    .map((l) => {
      const typed = parseStepLine(l);
      return typed === undefined ? `(not typed) ${l}` : stepLineWords(typed);
    })
    .join('\n');
}
