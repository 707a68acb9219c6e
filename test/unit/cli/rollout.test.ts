import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../../src/errors.js';
import { runCli } from '../../support/cli.js';

const rollout = (args: string[], env: NodeJS.ProcessEnv) => runCli(['rollout', ...args], env);

describe('deploy rollout: bad input is refused before any request (exit 2)', () => {
  it('names KUBE_CONFIG_PATH when there is no kubeconfig', async () => {
    const r = await rollout(['--namespace', 'ns', '--node', 'web'], {});
    expect(r.code).toBe(ExitCode.usage);
    expect(r.stderr).toContain('env KUBE_CONFIG_PATH: is not set');
    expect(r.stdout).toBe('');
  });

  it('refuses a timeout that is not a duration', async () => {
    const r = await rollout(['--namespace', 'ns', '--node', 'web', '--timeout', '0s'], {});
    expect(r.code).toBe(ExitCode.usage);
    expect(r.stderr).toContain('--timeout: not a duration: 0s');
  });

  it('wants the namespace and the node', async () => {
    const r = await rollout(['--node', 'web'], {});
    expect(r.code).toBe(ExitCode.usage);
    expect(r.stderr).toContain("required option '--namespace <ns>' not specified");
  });

  it('names the Deployment and the server when the API cannot be reached (exit 3)', async () => {
    const { mkdtemp, writeFile, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = await mkdtemp(join(tmpdir(), 'rollout-cli-'));
    try {
      // a loopback port nothing listens on: connection refused at once
      const kubeconfig = join(dir, 'kubeconfig');
      await writeFile(kubeconfig, 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "http://127.0.0.1:9"}}]\nusers: [{name: u, user: {}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n');
      const r = await rollout(['--namespace', 'ns', '--node', 'web'], { KUBE_CONFIG_PATH: kubeconfig, DEPLOY_RUN_DIR: dir });
      expect(r.code).toBe(ExitCode.tool);
      expect(r.stderr).toContain('Reading Deployment ns/web failed against the API server http://127.0.0.1:9');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
