import { describe, expect, it } from 'vitest';
import { resolveSpireCoordinates } from '../../../src/config/spire-coordinates.js';
import { buildTargets, loadCoordinates, parseGroupPlan } from '../../../src/config/load.js';
import { ConfigError } from '../../../src/errors.js';
import { samplePlan, spirePlan } from '../../support/cli.js';

const HOST_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHnU1vq8oTjWkDmmXG0vWq4m7Kq8lYk3dQ2dN3bq7c0X';

function spireEnv(over: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  return {
    K8S_SPIRE_NODE: 'spire.central.example.org',
    SSH_USER: 'deploy',
    SSH_PRIVATE_KEY_FILE: '/run/keys/id_ed25519',
    SSH_NODES: JSON.stringify({ 'spire.central.example.org': { hostKey: `${HOST_KEY} root@spire`, sshOpts: ['-o', 'Port=2222'] } }),
    ...over,
  };
}

function issuesOf(env: NodeJS.ProcessEnv) {
  const r = resolveSpireCoordinates(env, process.cwd());
  if (r.ok) throw new Error(`expected issues, got ${JSON.stringify(r.value)}`);
  return r.issues;
}

describe('SPIRE coordinates', () => {
  it('GIVEN no K8S_SPIRE_NODE WHEN resolved THEN SPIRE is off, even with the ssh layers set for other methods', () => {
    const r = resolveSpireCoordinates({ SSH_USER: 'deploy', SSH_PRIVATE_KEY_FILE: '/k', SSH_NODES: '{}' }, process.cwd());
    expect(r).toEqual({ ok: true, value: undefined });
    expect(resolveSpireCoordinates({ K8S_SPIRE_NODE: '' }, process.cwd())).toEqual({ ok: true, value: undefined });
  });

  it('GIVEN all of them WHEN resolved THEN the host key loses its comment and the ssh options stay', () => {
    const r = resolveSpireCoordinates(spireEnv({ K8S_SPIRE_API_SERVER: 'https://10.255.254.1:6443/' }), process.cwd());
    expect(r).toEqual({
      ok: true,
      value: {
        node: 'spire.central.example.org',
        sshUser: 'deploy',
        sshPrivateKeyFile: '/run/keys/id_ed25519',
        hostKey: HOST_KEY,
        sshOptions: ['-o', 'Port=2222'],
        apiServer: 'https://10.255.254.1:6443',
        tokenSeconds: 3600,
      },
    });
  });

  it('GIVEN an IP address as the spire node and no API server THEN the kubeconfig server is left to run time', () => {
    const r = resolveSpireCoordinates(spireEnv({ K8S_SPIRE_NODE: '10.253.0.2', SSH_NODES: JSON.stringify({ '10.253.0.2': { hostKey: HOST_KEY } }) }), process.cwd());
    expect(r.ok && r.value).toMatchObject({ node: '10.253.0.2', sshOptions: [], apiServer: undefined });
  });

  it('GIVEN K8S_SPIRE_NODE alone WHEN resolved THEN every missing layer is named at once', () => {
    const issues = issuesOf({ K8S_SPIRE_NODE: 'spire.example.org' });
    expect(issues.map((i) => i.where)).toEqual(['SSH_USER', 'SSH_PRIVATE_KEY_FILE', 'SSH_NODES']);
    expect(issues[2]!.message).toContain('{"spire.example.org": {"hostKey"');
  });

  it('GIVEN K8S_SPIRE_API_SERVER without K8S_SPIRE_NODE THEN it is refused, naming both', () => {
    const issues = issuesOf({ K8S_SPIRE_API_SERVER: 'https://api:6443' });
    expect(issues).toEqual([{ where: 'K8S_SPIRE_API_SERVER', message: expect.stringContaining('K8S_SPIRE_NODE is not') }]);
  });

  it.each([
    ['600', 600],
    ['86400', 86_400],
    [' 1800 ', 1800],
    ['', 3600],
    [undefined, 3600],
  ])('GIVEN K8S_SPIRE_TOKEN_SECONDS=%j THEN the token lives %i s', (text, seconds) => {
    const r = resolveSpireCoordinates(spireEnv({ K8S_SPIRE_TOKEN_SECONDS: text }), process.cwd());
    expect(r.ok && r.value?.tokenSeconds).toBe(seconds);
  });

  it.each([
    ['599', 'shorter than the API server accepts for a projected token (600 s)'],
    ['0', 'shorter than the API server accepts'],
    ['86401', 'longer than 86400 s (24 h)'],
    ['10m', 'is not a whole number of seconds'],
    ['3600.5', 'is not a whole number of seconds'],
    ['-600', 'is not a whole number of seconds'],
    ['1e3', 'is not a whole number of seconds'],
  ])('GIVEN K8S_SPIRE_TOKEN_SECONDS=%s THEN it is refused, naming the variable and the range', (text, why) => {
    const issues = issuesOf(spireEnv({ K8S_SPIRE_TOKEN_SECONDS: text }));
    expect(issues).toEqual([{ where: 'K8S_SPIRE_TOKEN_SECONDS', message: expect.stringContaining(why) }]);
    expect(issues[0]!.message).toContain('whole number of seconds from 600 to 86400');
    expect(issues[0]!.message.startsWith(`"${text}" `)).toBe(true);
  });

  it('GIVEN K8S_SPIRE_TOKEN_SECONDS without K8S_SPIRE_NODE THEN it is refused, naming both (with K8S_SPIRE_API_SERVER, both are named)', () => {
    expect(issuesOf({ K8S_SPIRE_TOKEN_SECONDS: '600' })).toEqual([{ where: 'K8S_SPIRE_TOKEN_SECONDS', message: 'is set but K8S_SPIRE_NODE is not: set K8S_SPIRE_NODE to the spire node, or unset K8S_SPIRE_TOKEN_SECONDS' }]);
    expect(issuesOf({ K8S_SPIRE_TOKEN_SECONDS: '600', K8S_SPIRE_API_SERVER: 'https://api:6443' }).map((i) => i.where)).toEqual(['K8S_SPIRE_API_SERVER', 'K8S_SPIRE_TOKEN_SECONDS']);
  });

  it('GIVEN bad values everywhere THEN each is reported with the variable it came from', () => {
    const issues = issuesOf(
      spireEnv({
        K8S_SPIRE_NODE: 'spire_node!',
        SSH_USER: 'Root User',
        SSH_NODES: JSON.stringify({ 'spire_node!': { hostKey: 'not a key', extra: 1 } }),
        K8S_SPIRE_API_SERVER: 'http://api:6443',
        K8S_SPIRE_TOKEN_SECONDS: 'an hour',
      }),
    );
    expect(issues.map((i) => i.where)).toEqual(['K8S_SPIRE_NODE', 'SSH_USER', 'SSH_NODES["spire_node!"].hostKey', 'SSH_NODES["spire_node!"].extra', 'K8S_SPIRE_API_SERVER', 'K8S_SPIRE_TOKEN_SECONDS']);
  });

  it('GIVEN SSH_NODES without the spire node THEN the message lists the entries it has', () => {
    const issues = issuesOf(spireEnv({ SSH_NODES: JSON.stringify({ 'other.example.org': { hostKey: HOST_KEY } }) }));
    expect(issues).toEqual([{ where: 'SSH_NODES', message: expect.stringMatching(/no entry for the spire node "spire.central.example.org".*other\.example\.org/) }]);
  });

  it.each([
    ['not json', '{', 'is not valid JSON'],
    ['an array', '[]', 'must be a JSON object'],
  ])('GIVEN SSH_NODES as %s THEN it is refused', (_what, text, message) => {
    expect(issuesOf(spireEnv({ SSH_NODES: text }))).toEqual([{ where: 'SSH_NODES', message: expect.stringContaining(message) }]);
  });

  it.each([
    [['-o', 'StrictHostKeyChecking=no']],
    [['-oUserKnownHostsFile=/dev/null']],
    [['-o', 'ProxyCommand nc %h %p']],
    [['-i', '/other/key']],
  ])('GIVEN ssh options %j that would bypass the host key or the key THEN they are refused', (opts) => {
    const issues = issuesOf(spireEnv({ SSH_NODES: JSON.stringify({ 'spire.central.example.org': { hostKey: HOST_KEY, sshOpts: opts } }) }));
    expect(issues).toEqual([{ where: 'SSH_NODES["spire.central.example.org"].sshOpts', message: expect.stringContaining('not allowed') }]);
  });
});

describe('SPIRE coordinates in a run', () => {
  it('GIVEN a bad registry and a bad SPIRE layer WHEN loaded THEN both are in one ConfigError', () => {
    let err: unknown;
    try {
      loadCoordinates({}, spireEnv({ K8S_REGISTRY: 'http://bad', SSH_USER: undefined }), process.cwd());
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues.map((i) => i.where)).toEqual([expect.stringContaining('K8S_REGISTRY'), 'SSH_USER']);
  });

  it('GIVEN no SPIRE coordinates THEN the coordinates carry no spire field (the graph is as before)', () => {
    expect(loadCoordinates({}, { K8S_REGISTRY: 'r' }, process.cwd())).not.toHaveProperty('spire');
  });

  it('GIVEN SPIRE coordinates WHEN targets are built THEN every target carries them, without the key path', () => {
    const plan = parseGroupPlan(JSON.stringify(spirePlan()), '/p/group.json');
    const coords = loadCoordinates({}, spireEnv({ K8S_REGISTRY: 'r', K8S_SPIRE_API_SERVER: 'https://10.0.0.1:6443', K8S_SPIRE_TOKEN_SECONDS: '600' }), process.cwd());
    expect(coords.spire?.sshPrivateKeyFile).toBe('/run/keys/id_ed25519');
    const targets = buildTargets(plan, coords, '/p/group.json', ['*']);
    expect(targets.map((t) => t.target)).toEqual(['all', 'mail', 'web']);
    for (const t of targets) {
      expect(t.spire).toEqual({ node: 'spire.central.example.org', sshUser: 'deploy', hostKey: HOST_KEY, sshOptions: ['-o', 'Port=2222'], apiServer: 'https://10.0.0.1:6443', tokenSeconds: 600 });
      expect(JSON.stringify(t)).not.toContain('/run/keys');
    }
  });

  it('GIVEN no SPIRE coordinates WHEN targets are built THEN the models have no spire field', () => {
    const plan = parseGroupPlan(JSON.stringify(samplePlan()), '/p/group.json');
    for (const t of buildTargets(plan, loadCoordinates({}, { K8S_REGISTRY: 'r', SSH_PRIVATE_KEY_FILE: '/k' }, process.cwd()), '/p/group.json', ['*'])) expect(t).not.toHaveProperty('spire');
  });
});
