// Re-renders bench/results/report.md and bench.svg from bench/results/bench.json without
// measuring anything (after a change to the report's layout):  node bench/render.ts
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './lib/bench-env.ts';
import { renderChart } from './lib/chart-svg.ts';
import { renderReport, type BenchResults } from './lib/report-md.ts';

const dir = join(root, 'bench/results');
const results: BenchResults = JSON.parse(readFileSync(join(dir, 'bench.json'), 'utf8'));
writeFileSync(join(dir, 'bench.svg'), renderChart({
  title: `deploy: scale-out and rollback (${results.runs} runs, median with min-max)`,
  scale: results.fleet?.scale ?? [],
  rollback: results.rollback ? [{ name: 'deploy apply', ms: results.rollback.deploy.evidenceToReadyMs }, { name: 'helm --rollback-on-failure', ms: results.rollback.helm.evidenceToReadyMs }] : [],
}));
writeFileSync(join(dir, 'report.md'), renderReport(results, 'bench.svg'));
console.log('wrote bench/results/report.md and bench/results/bench.svg');
