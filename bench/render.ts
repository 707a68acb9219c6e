// Re-renders bench/results/report.md and bench.svg from bench/results/bench.json without
// measuring anything (after a change to the report's layout):  node bench/render.ts
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchResults } from './lib/report-md.ts';
import { resultsDir, writeResults } from './lib/write-results.ts';

const results: BenchResults = JSON.parse(readFileSync(join(resultsDir, 'bench.json'), 'utf8'));
writeResults(results, { json: false });
console.log('wrote bench/results/report.md and bench/results/bench.svg');
