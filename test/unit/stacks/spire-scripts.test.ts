/**
 * The hand-off shell (stacks/spire-scripts.ts), run with a fake kubectl and a fake ssh: the
 * token reaches the spire node only on ssh's stdin, inside a kubeconfig of the namespace; the
 * remote side writes the kubeconfig (0600) and the drop-files of the target's nodes.
 */
import { chmod, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropFile } from '../../../src/contract/spire/spire-names.js';
import { handoffDropFiles, handoffScript } from '../../../stacks/spire-scripts.js';

const TOKEN = 'tok-3f9c2e1-secret';
const spire = { node: 'spire.example', sshUser: 'deploy', hostKey: 'ssh-ed25519 AAAAC3Nz', sshOptions: ['-o', 'Port=2222'], apiServer: 'https://10.0.0.1:6443' };

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'spire-scripts-'));
  // kubectl: answers the CA and the token; ssh: records its argv and runs the remote command
  // locally with / moved under $dir/root
  await writeFile(join(dir, 'kubectl'), `#!/bin/sh\ncase "$*" in *certificate-authority-data*) printf 'Q0E=';; *'create token'*) printf '%s' '${TOKEN}';; esac\n`);
  await writeFile(
    join(dir, 'ssh'),
    `#!/bin/sh\nprintf '%s\\n' "$@" >"${dir}/ssh-args"\nwhile [ "$1" != -- ]; do shift; done; shift 2\nremote=$(printf '%s' "$*" | sed 's#/var/lib/spire#${dir}/root/var/lib/spire#g')\nexec /bin/sh -c "$remote"\n`,
  );
  await chmod(join(dir, 'kubectl'), 0o755);
  await chmod(join(dir, 'ssh'), 0o755);
  await writeFile(join(dir, 'key'), 'not a key', { mode: 0o600 });
  await writeFile(join(dir, 'kubeconfig'), 'unused');
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('the hand-off to the spire node', () => {
  it('GIVEN the target WHEN it runs THEN the kubeconfig with the token arrives 0600 on the node, the token never in an argument, and each node has its drop-file', async () => {
    const script = handoffScript(spire, 'ns1', handoffDropFiles('ns1', ['alpha', 'beta']));
    const r = await execa('/bin/sh', ['-c', script], {
      reject: false,
      env: { PATH: process.env.PATH, DEPLOY_SSH: join(dir, 'ssh'), DEPLOY_KUBECTL: join(dir, 'kubectl'), KUBE_CONFIG_PATH: join(dir, 'kubeconfig'), SSH_PRIVATE_KEY_FILE: join(dir, 'key') },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const nsDir = join(dir, 'root/var/lib/spire/k8s/ns1');
    const kubeconfig = await readFile(join(nsDir, 'kubeconfig'), 'utf8');
    expect(kubeconfig).toContain(`    token: ${TOKEN}\n`);
    expect(kubeconfig).toContain('    server: https://10.0.0.1:6443\n    certificate-authority-data: Q0E=\n');
    expect(kubeconfig).toContain('current-context: ns1\n');
    expect((await stat(join(nsDir, 'kubeconfig'))).mode & 0o777).toBe(0o600);
    expect(await readFile(join(dir, 'ssh-args'), 'utf8')).not.toContain(TOKEN);
    expect(script).not.toContain(TOKEN);
    expect((await readdir(join(nsDir, 'entries'))).sort()).toEqual(['alpha.json', 'beta.json']);
    expect(await readFile(join(nsDir, 'entries', 'beta.json'), 'utf8')).toBe(dropFile('ns1', 'beta'));
  });

  it('GIVEN a node that left the target WHEN it runs again THEN its drop-file is gone', async () => {
    const r = await execa('/bin/sh', ['-c', handoffScript(spire, 'ns1', handoffDropFiles('ns1', ['alpha']))], {
      reject: false,
      env: { PATH: process.env.PATH, DEPLOY_SSH: join(dir, 'ssh'), DEPLOY_KUBECTL: join(dir, 'kubectl'), KUBE_CONFIG_PATH: join(dir, 'kubeconfig'), SSH_PRIVATE_KEY_FILE: join(dir, 'key') },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(await readdir(join(dir, 'root/var/lib/spire/k8s/ns1/entries'))).toEqual(['alpha.json']);
  });
});
