/** The SPIRE coordinates at the command line: --help lists them; synth takes them into the graph. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { baseEnv, runCli, spirePlan, tempDir, writeJson } from '../../support/cli.js';

const HOST_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHnU1vq8oTjWkDmmXG0vWq4m7Kq8lYk3dQ2dN3bq7c0X';

describe('deploy and the SPIRE coordinates', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(() => cleanup());

  it.each(['plan', 'apply', 'destroy'])('%s --help lists the SPIRE variables', async (verb) => {
    const r = await runCli([verb, '--help'], baseEnv);
    expect(r.code).toBe(0);
    for (const v of ['K8S_SPIRE_NODE', 'SSH_USER', 'SSH_PRIVATE_KEY_FILE', 'SSH_NODES', 'K8S_SPIRE_API_SERVER', 'K8S_SPIRE_TOKEN_SECONDS', 'DEPLOY_SSH']) expect(r.stdout).toContain(`  ${v} `);
    expect(r.stdout).toContain('Workload identity with SPIRE');
    expect(r.stdout).toContain('roster.spiffeProvider must name the spire node exactly when K8S_SPIRE_NODE is set');
    expect(r.stdout).toContain('"identity": true needs both');
  });

  it('GIVEN the coordinates WHEN synthesized THEN the run is not refused and the graph has the SPIRE part, without the key path', async () => {
    const file = await writeJson(join(dir, 'group.json'), spirePlan());
    const env = {
      ...baseEnv,
      K8S_SPIRE_NODE: 'spire.example.org',
      SSH_USER: 'deploy',
      SSH_PRIVATE_KEY_FILE: 'keys/relative_id',
      SSH_NODES: JSON.stringify({ 'spire.example.org': { hostKey: HOST_KEY } }),
    };
    const r = await runCli(['synth', '--plan', file, '--out', join(dir, 'out'), '--target', 'all'], env, dir);
    expect(r.code, r.stderr).toBe(0);
    const graph = await readFile(join(dir, 'out', 'g1-all', 'cdk.tf.json'), 'utf8');
    expect(graph).toContain('"name": "spire-agent"');
    expect(graph).not.toContain('relative_id');
  });
});
