/** Writes bench/results/: bench.json (all figures), report.md (the table) and bench.svg. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './bench-env.ts';
import { renderChart } from './chart-svg.ts';
import { renderReport, type BenchResults } from './report-md.ts';

export const resultsDir = join(root, 'bench/results');
const SVG = 'bench.svg';

export function writeResults(results: BenchResults, opts: { json: boolean }): void {
  mkdirSync(resultsDir, { recursive: true });
  if (results.fleet || results.rollback) {
    writeFileSync(join(resultsDir, SVG), renderChart({
      title: `deploy: scale-out and rollback (${results.runs} runs, median with min-max)`,
      scale: results.fleet?.scale ?? [],
      rollback: results.rollback ? [{ name: 'deploy apply', ms: results.rollback.deploy.evidenceToReadyMs }, { name: 'helm --rollback-on-failure', ms: results.rollback.helm.evidenceToReadyMs }] : [],
    }));
  }
  if (opts.json) writeFileSync(join(resultsDir, 'bench.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(resultsDir, 'report.md'), renderReport(results, SVG));
}
