/**
 * One rule for every file the operator names (src/paths.ts absoluteFile): `~`, then the run's cwd.
 * Issue 46: a relative --kubeconfig passed deploy's checks and broke tofu, whose cwd is the graph
 * directory; the registry CA was taken against process.cwd() and the SSH key against the run's.
 */
import { describe, expect, it } from 'vitest';
import { absoluteFile } from '../../src/paths.js';
import { requireAbsoluteFile } from '../../src/config/file-coordinate.js';
import { resolveCoordinates } from '../../src/config/coordinates.js';
import { ConfigError } from '../../src/errors.js';

const place = { cwd: '/runs/here', env: { HOME: '/home/op' } };

describe('absoluteFile', () => {
  it('GIVEN ~, ~/x, a relative and an absolute path THEN the home, the home\'s, the cwd\'s and the same', () => {
    expect(absoluteFile('~', place)).toEqual({ ok: true, path: '/home/op' });
    expect(absoluteFile('~/k/admin.kubeconfig', place)).toEqual({ ok: true, path: '/home/op/k/admin.kubeconfig' });
    expect(absoluteFile('admin.kubeconfig', place)).toEqual({ ok: true, path: '/runs/here/admin.kubeconfig' });
    expect(absoluteFile('../demo/group.json', place)).toEqual({ ok: true, path: '/runs/demo/group.json' });
    expect(absoluteFile('/etc/k.yaml', place)).toEqual({ ok: true, path: '/etc/k.yaml' });
  });

  it('GIVEN ~user THEN refused, naming the path (another user\'s home is not guessed)', () => {
    expect(absoluteFile('~root/k', place)).toMatchObject({ ok: false, problem: expect.stringContaining('~root/k') });
    expect(() => requireAbsoluteFile('~root/k', place, '--kubeconfig')).toThrow(ConfigError);
  });
});

describe('the coordinates\' files', () => {
  const env = { K8S_REGISTRY: 'reg.test:5000', HOME: '/home/op' };

  it('GIVEN a relative kubeconfig (flag or variable) THEN it comes back absolute against the run\'s cwd, not the process\'s', () => {
    expect(resolveCoordinates({ kubeconfig: 'admin.kubeconfig' }, env, '/runs/here')).toMatchObject({ ok: true, value: { kubeconfig: '/runs/here/admin.kubeconfig' } });
    expect(resolveCoordinates({}, { ...env, KUBE_CONFIG_PATH: '~/.kube/config' }, '/runs/here')).toMatchObject({ ok: true, value: { kubeconfig: '/home/op/.kube/config' } });
  });

  it('GIVEN a relative SSH key of the SPIRE coordinates THEN absolute against the run\'s cwd', () => {
    const spire = { K8S_SPIRE_NODE: 'spire.test', SSH_USER: 'root', SSH_PRIVATE_KEY_FILE: 'keys/id', SSH_NODES: JSON.stringify({ 'spire.test': { hostKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl' } }) };
    const r = resolveCoordinates({}, { ...env, ...spire }, '/runs/here');
    expect(r.ok ? r.value.spire?.sshPrivateKeyFile : r.issues).toBe('/runs/here/keys/id');
  });

  it('GIVEN ~user as the kubeconfig THEN an issue naming the flag, with the other problems', () => {
    const r = resolveCoordinates({ kubeconfig: '~bob/k' }, env, '/runs/here');
    expect(r.ok ? r.value : r.issues).toEqual([{ where: 'KUBE_CONFIG_PATH (or --kubeconfig)', message: expect.stringContaining('~bob/k') }]);
  });
});
