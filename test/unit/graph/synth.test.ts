import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildTargets, loadCoordinates, parseGroupPlan } from '../../../src/config/load.js';
import type { TargetModel } from '../../../src/config/target-model.js';
import { GRAPH_FILE } from '../../../src/contract/graph/graph-ids.js';
import { GRAPH_KEY_FILE, graphKey, keepGraphKey } from '../../../src/graph/graph-cache.js';
import { renderGraph } from '../../../src/graph/render.js';
import { writeGraph, writeTargetGraph } from '../../../src/graph/synth.js';
import { samplePlan } from '../../support/cli.js';

function model(planOverride: (p: any) => void = () => {}): TargetModel {
  const plan = samplePlan();
  planOverride(plan);
  const coords = loadCoordinates({}, { K8S_REGISTRY: 'reg.test:5000', DEPLOY_ROLLOUT_TIMEOUT: '90s' }, process.cwd());
  return buildTargets(parseGroupPlan(JSON.stringify(plan), '/plans/group.json'), coords, '/plans/group.json', ['*'])[0]!;
}

const dirs: string[] = [];
function outDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'graph-cache-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('writeGraph and its cache (graph-cache.ts)', () => {
  it('GIVEN no graph yet WHEN written THEN cdk.tf.json is the rendered graph and the key file names its model and bytes', async () => {
    const m = model();
    const dir = await writeGraph(m, outDir());
    expect(readFileSync(join(dir, GRAPH_FILE), 'utf8')).toBe(renderGraph(m));
    expect(JSON.parse(readFileSync(join(dir, GRAPH_KEY_FILE), 'utf8')).key).toBe(graphKey(m));
  });

  it('GIVEN a graph kept for the same model and code WHEN written again THEN the file is taken as it is, not rendered', async () => {
    const m = model();
    const dir = await writeGraph(m, outDir());
    // a text no render makes, kept under this model's key: only the cache can leave it there
    const kept = '{"kept": "as the cache found it"}\n';
    writeFileSync(join(dir, GRAPH_FILE), kept);
    await keepGraphKey(dir, graphKey(m), kept);
    await writeGraph(m, join(dir, '..'));
    expect(readFileSync(join(dir, GRAPH_FILE), 'utf8')).toBe(kept);
  });

  it('GIVEN cdk.tf.json edited by hand WHEN written again THEN it is rendered again (the key names the bytes it was written with)', async () => {
    const m = model();
    const dir = await writeGraph(m, outDir());
    writeFileSync(join(dir, GRAPH_FILE), readFileSync(join(dir, GRAPH_FILE), 'utf8').replace('"resource"', '"resource" '));
    await writeGraph(m, join(dir, '..'));
    expect(readFileSync(join(dir, GRAPH_FILE), 'utf8')).toBe(renderGraph(m));
  });

  it('GIVEN a model that differs in one node tag WHEN written into the same directory THEN its own graph is rendered', async () => {
    const before = model();
    const out = outDir();
    await writeGraph(before, out);
    const after = model((p) => {
      const first = Object.keys(p.nodes)[0]!;
      p.nodes[first].image.tag = 'other-tag';
    });
    expect(graphKey(after)).not.toBe(graphKey(before));
    const dir = await writeGraph(after, out);
    expect(readFileSync(join(dir, GRAPH_FILE), 'utf8')).toBe(renderGraph(after));
    expect(readFileSync(join(dir, GRAPH_FILE), 'utf8')).not.toBe(renderGraph(before));
  });

  it('GIVEN a key file that is not JSON, or is gone WHEN written again THEN the graph is rendered again and the key written anew', async () => {
    const m = model();
    const dir = await writeGraph(m, outDir());
    const forged = '{"not": "the graph"}\n';
    for (const spoil of [() => writeFileSync(join(dir, GRAPH_KEY_FILE), 'not json'), () => rmSync(join(dir, GRAPH_KEY_FILE))]) {
      writeFileSync(join(dir, GRAPH_FILE), forged);
      spoil();
      await writeGraph(m, join(dir, '..'));
      expect(readFileSync(join(dir, GRAPH_FILE), 'utf8')).toBe(renderGraph(m));
      expect(existsSync(join(dir, GRAPH_KEY_FILE))).toBe(true);
    }
  });

  it('GIVEN cached: false (deploy synth) THEN the graph is rendered even under a matching key, and no key file is written', async () => {
    const m = model();
    const fresh = await writeGraph(m, outDir(), { cached: false });
    expect(existsSync(join(fresh, GRAPH_KEY_FILE))).toBe(false);
    const dir = await writeGraph(m, outDir());
    const kept = '{"kept": "as the cache found it"}\n';
    writeFileSync(join(dir, GRAPH_FILE), kept);
    await keepGraphKey(dir, graphKey(m), kept);
    await writeGraph(m, join(dir, '..'), { cached: false });
    expect(readFileSync(join(dir, GRAPH_FILE), 'utf8')).toBe(renderGraph(m));
  });
});

describe('writeTargetGraph: the graph a run keeps in memory', () => {
  it('GIVEN a graph rendered, then one the cache takes THEN the run holds the file\'s bytes and its document, without reading the file back', async () => {
    const m = model();
    const out = outDir();
    const rendered = await writeTargetGraph(m, out);
    expect(rendered.text).toBe(readFileSync(join(rendered.dir, GRAPH_FILE), 'utf8'));
    expect(rendered.document).toEqual(JSON.parse(rendered.text));
    const kept = '{"resource": {}, "kept": "as the cache found it"}\n';
    writeFileSync(join(rendered.dir, GRAPH_FILE), kept);
    await keepGraphKey(rendered.dir, graphKey(m), kept);
    const taken = await writeTargetGraph(m, out);
    expect(taken).toEqual({ dir: rendered.dir, text: kept, document: { resource: {}, kept: 'as the cache found it' } });
  });
});
