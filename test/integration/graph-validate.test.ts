/**
 * Every example graph initialises offline from the provider mirror, against the embedded
 * state backend, and passes `tofu validate` (real tofu, real providers).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTargets, loadCoordinates, readGroupPlan } from '../../src/config/load.js';
import { writeGraph } from '../../src/graph/synth.js';
import { startEmbeddedBackend } from '../../src/state/embedded.js';
import { providerEnv } from '../../src/tools/providers.js';
import { initGraph, validateGraph } from '../../src/tools/tofu/tofu.js';
import { tempDir } from '../support/cli.js';
import { tofuBackendVariables } from '../../src/config/backend-coordinates.js';

const examples = join(import.meta.dirname, '..', '..', 'examples');

/** `tofu init` against the embedded backend (offline, from the mirror), then `tofu validate`: no error. */
async function expectValid(stateKey: string, graphDir: string, dataDir: string, env: NodeJS.ProcessEnv): Promise<void> {
  const backend = await startEmbeddedBackend({ key: stateKey, dataDir });
  try {
    const tofuEnv = { ...process.env, ...env, ...tofuBackendVariables(backend.http) };
    await initGraph({ dir: graphDir, env: tofuEnv });
    const r = await validateGraph({ dir: graphDir, env: tofuEnv });
    expect(r.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(r.valid).toBe(true);
  } finally {
    await backend.close();
  }
}

describe('example graphs with the real tofu', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => ({ dir, cleanup } = await tempDir('deploy-validate-')));
  afterAll(() => cleanup());

  // The roster and the SPIRE coordinates must agree (src/config/identity-rules.ts): each
  // example is synthesized with the coordinates its roster asks for, and both kinds must exist.
  const examplesWithProvider = async (withProvider: boolean) => {
    const chosen: string[] = [];
    for (const f of (await readdir(examples)).filter((x) => x.endsWith('.json'))) {
      if (((await readGroupPlan(join(examples, f))).roster.spiffeProvider !== null) === withProvider) chosen.push(f);
    }
    expect(chosen.length, `examples ${withProvider ? 'with' : 'without'} a spiffe provider`).toBeGreaterThanOrEqual(1);
    return chosen;
  };

  it('GIVEN each example plan without a spiffe provider WHEN synthesized THEN tofu init (offline) and tofu validate pass for every target', async () => {
    const files = await examplesWithProvider(false);
    const env = providerEnv(process.env);
    // offline: the mirror is the only provider source (no `direct` block in tofu.rc)
    expect(env.TF_CLI_CONFIG_FILE).toBeDefined();
    let validated = 0;
    for (const f of files) {
      const plan = await readGroupPlan(join(examples, f));
      const coords = loadCoordinates({}, { K8S_REGISTRY: 'registry.invalid:5000' }, process.cwd());
      for (const model of buildTargets(plan, coords, join(examples, f), ['*'])) {
        const graphDir = await writeGraph(model, join(dir, 'graphs'));
        await expectValid(model.stateKey, graphDir, join(dir, 'state'), env);
        validated++;
      }
    }
    expect(validated).toBeGreaterThanOrEqual(3);
  });

  it('GIVEN the SPIRE coordinates WHEN each example whose roster names a spiffe provider is synthesized THEN tofu validate passes, and the key path is in no graph', async () => {
    const env = providerEnv(process.env);
    const key = join(dir, 'secret-key-dir', 'id_ed25519');
    const coords = loadCoordinates({}, {
      K8S_REGISTRY: 'registry.invalid:5000',
      K8S_SPIRE_NODE: 'spire.example.org',
      SSH_USER: 'deploy',
      SSH_PRIVATE_KEY_FILE: key,
      SSH_NODES: JSON.stringify({ 'spire.example.org': { hostKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHnU1vq8oTjWkDmmXG0vWq4m7Kq8lYk3dQ2dN3bq7c0X', sshOpts: ['-o', 'Port=2222'] } }),
    }, process.cwd());
    let validated = 0;
    for (const f of await examplesWithProvider(true)) {
      const plan = await readGroupPlan(join(examples, f));
      for (const model of buildTargets(plan, coords, join(examples, f), ['*'])) {
        expect(model.spire?.node).toBe('spire.example.org');
        const graphDir = await writeGraph(model, join(dir, 'spire-graphs'));
        expect(await readFile(join(graphDir, 'cdk.tf.json'), 'utf8')).not.toContain('secret-key-dir');
        await expectValid(model.stateKey, graphDir, join(dir, 'spire-state'), env);
        validated++;
      }
    }
    expect(validated).toBeGreaterThanOrEqual(3);
  });
});
