import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { baseEnv, listTree, runCli, samplePlan, tempDir, writeJson } from '../../support/cli.js';

// Automation never uses the embedded state backend by accident: a CI runner's home (where
// that backend keeps the state) may not outlive the job.
describe('plan|apply|destroy under CI: the state backend', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(() => cleanup());

  /** A run that would reach tofu (a valid plan, a readable kubeconfig) but for the state choice. */
  async function deploy(verb: string, env: NodeJS.ProcessEnv) {
    const file = await writeJson(join(dir, 'group.json'), samplePlan());
    const kubeconfig = await writeJson(join(dir, 'kubeconfig'), 'apiVersion: v1\n');
    return runCli([verb, '--plan', file, '--out', join(dir, 'out'), '--kubeconfig', kubeconfig], { ...baseEnv, DEPLOY_STATE_DIR: join(dir, 'state'), PATH: '/nonexistent', ...env });
  }

  it.each([
    ['plan', 'CI', 'true'],
    ['apply', 'GITHUB_ACTIONS', 'true'],
    ['destroy', 'FORGEJO_ACTIONS', '1'],
    ['apply', 'CI', '1'],
  ])('GIVEN %s with %s=%s and no TF_HTTP_ADDRESS THEN exit 2 naming TF_HTTP_ADDRESS and DEPLOY_STATE=embedded; nothing written', async (verb, variable, value) => {
    const r = await deploy(verb, { [variable]: value });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('refusing the embedded state backend under automation');
    expect(r.stderr).toContain(`TF_HTTP_ADDRESS: is not set, and ${variable}=${value} says this runs under automation`);
    expect(r.stderr).toContain('opt in with DEPLOY_STATE=embedded');
    expect(r.stdout).toBe('');
    expect(await listTree(join(dir, 'state'))).toEqual([]);
    expect(await listTree(join(dir, 'out'))).toEqual([]);
  });

  it('GIVEN CI and a broken group plan THEN the refusal comes first: before anything is read', async () => {
    const r = await runCli(['plan', '--plan', join(dir, 'missing.json')], { ...baseEnv, CI: 'true' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('refusing the embedded state backend under automation');
    expect(r.stderr).not.toContain('missing.json');
  });

  it.each([
    ['DEPLOY_STATE=embedded', { CI: 'true', DEPLOY_STATE: 'embedded' }],
    ['TF_HTTP_ADDRESS', { CI: 'true', TF_HTTP_ADDRESS: 'http://127.0.0.1:9/states' }],
    ['no automation variable', {}],
    ['CI set but empty', { CI: '' }],
  ])('GIVEN %s THEN the run goes on to the next steps (here: exit 3, tofu is not found or the backend does not answer)', async (_, env) => {
    const r = await deploy('plan', env as NodeJS.ProcessEnv);
    expect(r.stderr).not.toContain('refusing the embedded state backend');
    expect(r.stderr).toMatch(/tofu|127\.0\.0\.1:9/);
    expect(r.code).toBe(3);
  });

  it('GIVEN DEPLOY_STATE with another value THEN exit 2 naming DEPLOY_STATE and its one value, also without CI', async () => {
    const r = await deploy('apply', { DEPLOY_STATE: 'http' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('DEPLOY_STATE: "http" is not a choice: the only value is "embedded"');
    expect(await listTree(join(dir, 'state'))).toEqual([]);
  });

  it('GIVEN CI THEN synth (which keeps no state) still works', async () => {
    const file = await writeJson(join(dir, 'group.json'), samplePlan());
    const r = await runCli(['synth', '--plan', file, '--out', join(dir, 'out')], { ...baseEnv, CI: 'true' });
    expect(r.code).toBe(0);
  });
});
