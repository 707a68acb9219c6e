import { describe, expect, it } from 'vitest';
import type { SpireCoordinates } from '../../../../src/config/spire-coordinates.js';
import { knownHostsLine, SPIRE_HOST_KEY_ALIAS, sshArgs } from '../../../../src/contract/spire/spire-ssh-options.js';

const spire: SpireCoordinates = {
  node: 'spire.central.example.org',
  sshUser: 'deploy',
  sshPrivateKeyFile: '/run/keys/staged-1234/id_ed25519',
  hostKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHnU1vq8oTjWkDmmXG0vWq4m7Kq8lYk3dQ2dN3bq7c0X',
  sshOptions: ['-o', 'Port=2222', '-o', 'StrictHostKeyChecking=no'],
  apiServer: undefined,
  tokenSeconds: 3600,
};

describe('ssh to the spire node', () => {
  it('GIVEN the coordinates THEN known_hosts holds exactly the host key of SSH_NODES under the alias', () => {
    expect(knownHostsLine(spire)).toBe(`${SPIRE_HOST_KEY_ALIAS} ${spire.hostKey}\n`);
  });

  it('GIVEN node ssh options WHEN the arguments are built THEN our checks come first (ssh keeps the first value) and the node is after --', () => {
    const args = sshArgs(spire, '/tmp/kh', ['cat', '/etc/machine-id']);
    const strict = args.indexOf('StrictHostKeyChecking=yes');
    const loose = args.indexOf('StrictHostKeyChecking=no');
    expect(strict).toBeGreaterThan(0);
    expect(strict).toBeLessThan(loose);
    expect(args).toContain('UserKnownHostsFile=/tmp/kh');
    expect(args).toContain(`HostKeyAlias=${SPIRE_HOST_KEY_ALIAS}`);
    expect(args.slice(0, 2)).toEqual(['-i', spire.sshPrivateKeyFile]);
    expect(args.slice(-5)).toEqual(['deploy', '--', 'spire.central.example.org', 'cat', '/etc/machine-id']);
  });
});
