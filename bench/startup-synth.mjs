#!/usr/bin/env node
// Benchmark (not a test): start-up and synth. Prints the median and spread of
//   deploy --help, and deploy synth of 1, 50 and 200 nodes (wall time and peak RSS),
// each run as a fresh process like an operator runs it. Goals (issue 3): --help < 150 ms;
// synth of 200 nodes < 1 s and < 300 MB.
// Usage: npm run bench:synth [-- --runs N] [--json FILE]   (--json: also write the rows as JSON)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const runs = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 7;
const jsonOut = process.argv.includes('--json') ? process.argv[process.argv.indexOf('--json') + 1] : undefined;
const rows = [];
const TIME = '/usr/bin/time';
if (!existsSync(TIME)) {
  console.error('bench: /usr/bin/time is missing: apt-get install -y time');
  process.exit(2);
}
if (!existsSync(join(root, 'dist/src/cli/main.js'))) {
  console.error('bench: run `npm run build` first');
  process.exit(2);
}

const work = mkdtempSync(join(tmpdir(), 'deploy-bench-'));
function plan(n) {
  const nodes = {};
  for (let i = 0; i < n; i++) nodes[`node-${String(i).padStart(3, '0')}`] = { image: { archive: 'images/node.tar', tag: `t${i}` }, apps: [i % 2 ? 'web' : 'mail'] };
  const file = join(work, `plan-${n}.json`);
  writeFileSync(file, JSON.stringify({ version: 1, group: 'bench', nodes }));
  return file;
}

// process.execPath: the node running this script (npm scripts run it on Node 24)
function measure(args) {
  const r = spawnSync(TIME, ['-f', '%e %M', process.execPath, join(root, 'bin/deploy.js'), ...args], {
    encoding: 'utf8',
    env: { ...process.env, K8S_REGISTRY: 'bench.invalid:5000', DEPLOY_STATE_DIR: work },
  });
  if (r.status !== 0) throw new Error(`deploy ${args.join(' ')} failed: ${r.stderr}`);
  const [secs, kb] = r.stderr.trim().split('\n').at(-1).split(' ').map(Number);
  return { ms: secs * 1000, mb: kb / 1024 };
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const cases = [
  { name: 'deploy --help', args: ['--help'], goal: (m) => m.ms < 150, goalText: '< 150 ms' },
  // one graph of n nodes (target all), the figure the goal is about
  ...[1, 50, 200].map((n) => ({ name: `synth ${n} node${n > 1 ? 's' : ''} (target all)`, args: ['synth', '--plan', plan(n), '--target', 'all', '--out', join(work, `out-${n}`)], goal: n === 200 ? (m) => m.ms < 1000 && m.mb < 300 : undefined, goalText: n === 200 ? '< 1000 ms, < 300 MB' : '' })),
  // and every target of that plan: all + 2 apps, i.e. 400 node graphs in 3 stacks
  { name: 'synth 200 nodes (every target: 3 graphs)', args: ['synth', '--plan', plan(200), '--out', join(work, 'out-200-all')], goalText: '' },
];
console.log(`node ${process.versions.node}, ${runs} runs each (first run discarded as warm-up); load average ${(await import('node:os')).loadavg().map((l) => l.toFixed(1)).join(' ')}\n`);
console.log('| case | median ms | min-max ms | peak RSS MB (median) | goal | met |');
console.log('|---|---:|---:|---:|---|---|');
for (const c of cases) {
  measure(c.args);
  const ms = [];
  const mb = [];
  for (let i = 0; i < runs; i++) {
    const m = measure(c.args);
    ms.push(m.ms);
    mb.push(m.mb);
  }
  const med = { ms: median(ms), mb: median(mb) };
  const met = c.goal ? (c.goal(med) ? 'yes' : 'NO') : '';
  rows.push({ name: c.name, medianMs: med.ms, minMs: Math.min(...ms), maxMs: Math.max(...ms), rssMb: med.mb, goal: c.goalText, met: c.goal ? c.goal(med) : null, runs: ms });
  console.log(`| ${c.name} | ${med.ms.toFixed(0)} | ${Math.min(...ms).toFixed(0)}-${Math.max(...ms).toFixed(0)} | ${med.mb.toFixed(0)} | ${c.goalText} | ${met} |`);
}
rmSync(work, { recursive: true, force: true });
if (jsonOut) writeFileSync(jsonOut, `${JSON.stringify({ node: process.versions.node, runs, rows }, null, 2)}\n`);
