/**
 * Exec credential plugins (exec-credential.ts) run as kubectl runs them, with a small fixture
 * plugin (test/fixtures/token-plugin.sh) that prints a token from a file and counts its runs.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ToolError } from '../../../src/errors.js';
import { clearExecCredentials, execCredentialSource, type ExecPluginContext } from '../../../src/kube/exec-credential.js';
import type { ExecEntry } from '../../../src/kube/kubeconfig-file.js';
import { tempDir } from '../../support/cli.js';

const PLUGIN = resolve(import.meta.dirname, '../../fixtures/token-plugin.sh');
const TOKEN = 'sekret-token-0123456789';

let dir = '';
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('deploy-exec-credential-'));
  await writeFile(join(dir, 'token'), `${TOKEN}\n`);
});
afterAll(() => cleanup());
beforeEach(() => clearExecCredentials());

let n = 0;
/** A plugin configuration with its own calls file; the env entries name the token file and the calls file. */
function plugin(extra: Partial<ExecEntry> = {}, env: Record<string, string> = {}): { exec: ExecEntry; calls: string } {
  const calls = join(dir, `calls-${++n}`);
  const exec: ExecEntry = {
    apiVersion: 'client.authentication.k8s.io/v1',
    command: PLUGIN,
    args: ['--cluster', 'c1', 'with space'],
    env: [
      { name: 'PLUGIN_TOKEN_FILE', value: join(dir, 'token') },
      { name: 'PLUGIN_CALLS', value: calls },
      ...Object.entries(env).map(([name, value]) => ({ name, value })),
    ],
    interactiveMode: 'Never',
    ...extra,
  };
  return { exec, calls };
}

const runs = async (calls: string) => (await readFile(calls, 'utf8').catch(() => '')).split('\n').filter((l) => l !== '');

function ctx(over: Partial<ExecPluginContext> = {}): ExecPluginContext {
  return { user: 'u', where: 'env KUBE_CONFIG_PATH (/kc)', cluster: { server: 'https://127.0.0.1:6443', 'certificate-authority-data': 'Q0E=' }, env: { PATH: process.env.PATH, RUN_VAR: 'from-the-run' }, ...over };
}

describe('execCredentialSource', () => {
  it('GIVEN a plugin with args and env THEN it runs with them and KUBERNETES_EXEC_INFO, and its token is the credential', async () => {
    const { exec, calls } = plugin({ provideClusterInfo: true }, { PLUGIN_TTL: '600' });
    const cred = await execCredentialSource(exec, ctx()).get();
    expect(cred.token).toBe(TOKEN);
    expect(cred.expiresAt).toBeGreaterThan(Date.now() + 500_000);
    expect(await runs(calls)).toEqual(['run --cluster c1 with space']);
    const info = JSON.parse(await readFile(`${calls}.info`, 'utf8'));
    expect(info).toEqual({
      kind: 'ExecCredential',
      apiVersion: 'client.authentication.k8s.io/v1',
      spec: { interactive: false, cluster: { server: 'https://127.0.0.1:6443', 'certificate-authority-data': 'Q0E=' } },
    });
  });

  it('GIVEN no provideClusterInfo THEN the plugin is told no cluster', async () => {
    const { exec, calls } = plugin();
    await execCredentialSource(exec, ctx()).get();
    expect(JSON.parse(await readFile(`${calls}.info`, 'utf8')).spec).toEqual({ interactive: false });
  });

  it('GIVEN a credential with an expiry THEN it is reused until then, and the plugin runs again after', async () => {
    const { exec, calls } = plugin({}, { PLUGIN_TTL: '60' });
    let now = Date.now();
    const source = execCredentialSource(exec, ctx({ now: () => now }));
    await source.get();
    await source.get();
    // another source of the same configuration (another lister of the run) shares the cache
    await execCredentialSource(exec, ctx({ now: () => now })).get();
    expect(await runs(calls)).toHaveLength(1);
    now += 61_000;
    await source.get();
    expect(await runs(calls)).toHaveLength(2);
  });

  it('GIVEN requests at once THEN one run serves them all', async () => {
    const { exec, calls } = plugin();
    const source = execCredentialSource(exec, ctx());
    const creds = await Promise.all([source.get(), source.get(), source.get()]);
    expect(creds.map((c) => c.token)).toEqual([TOKEN, TOKEN, TOKEN]);
    expect(await runs(calls)).toHaveLength(1);
  });

  it('GIVEN the API server refused the credential THEN the next get runs the plugin again', async () => {
    const { exec, calls } = plugin();
    const source = execCredentialSource(exec, ctx());
    source.invalidate(await source.get());
    await source.get();
    expect(await runs(calls)).toHaveLength(2);
  });

  it('GIVEN a command that is not there THEN the error names it and the kubeconfig installHint', async () => {
    const { exec } = plugin({ command: 'no-such-credential-plugin', installHint: '\u001b[1mInstall it\u001b[0m with: apt install no-such-credential-plugin' });
    const err = await execCredentialSource(exec, ctx()).get().then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).message).toContain('no-such-credential-plugin');
    expect((err as ToolError).message).toContain('user "u"');
    expect((err as ToolError).hint).toContain('Install it with: apt install no-such-credential-plugin');
    expect((err as ToolError).hint).not.toContain('\u001b');
  });

  it('GIVEN a plugin that prints its token and fails THEN the message quotes its stderr, never the token', async () => {
    const { exec } = plugin({}, { PLUGIN_FAIL: 'the login expired' });
    const err = (await execCredentialSource(exec, ctx()).get().then(() => undefined, (e: unknown) => e)) as ToolError;
    expect(err.message).toContain('plugin: the login expired');
    expect(JSON.stringify({ message: err.message, hint: err.hint, cause: String((err as { cause?: unknown }).cause) })).not.toContain(TOKEN);
  });

  it('GIVEN a plugin that prints another apiVersion THEN it is refused, and the token is not quoted', async () => {
    const { exec } = plugin({ apiVersion: 'client.authentication.k8s.io/v1beta1' });
    const err = (await execCredentialSource(exec, ctx()).get().then(() => undefined, (e: unknown) => e)) as ToolError;
    expect(err.message).toContain('configured to use API version client.authentication.k8s.io/v1beta1, and returned version client.authentication.k8s.io/v1');
    expect(err.message).not.toContain(TOKEN);
  });

  it('GIVEN interactiveMode Always THEN it is refused without a run (deploy has no terminal to give it)', async () => {
    const { exec, calls } = plugin({ interactiveMode: 'Always' });
    await expect(execCredentialSource(exec, ctx()).get()).rejects.toThrow(/needs a terminal/);
    expect(await runs(calls)).toEqual([]);
  });
});
