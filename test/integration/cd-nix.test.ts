/**
 * The Nix side (nix/, flake.nix), as far as this machine can check it without nixpkgs:
 * every .nix file parses (Debian's nix-instantiate), nix/node-settings.nix evaluates, and its
 * settings match what the Debian node image really contains (test/cluster/images: masked
 * units, empty machine-id, no sshd host keys but HostKey lines under /var/lib/ssh, Cmd and
 * StopSignal) and the probes of src/contract/probes.ts. The module and the image builder take
 * those settings from the file (checked on their parsed form).
 */
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { READINESS_SCRIPT, STARTUP_SCRIPT } from '../../src/contract/probes.js';
import { buildImage, type BuiltImage } from './images-scripts.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

interface NodeSettings {
  maskedUnits: string[];
  debianOnlyMaskedUnits: string[];
  podInterface: string;
  sshHostKeys: { type: string; path: string }[];
  machineIdContents: string;
  runtimeMounts: string[];
  image: { cmd: string[]; stopSignal: string; env: string[] };
  readinessScript: string;
  startupScript: string;
}

async function nixInstantiate(args: string[]) {
  return execa('nix-instantiate', args, { cwd: repoRoot, reject: false, timeout: 60_000 });
}

let settings: NodeSettings;

beforeAll(async () => {
  // Debian's nix-bin (the `tests` group of toolchain/host-packages.list; `npm test` installs
  // it up front, this covers a run of this file alone).
  const tools = await execa('bash', [`${repoRoot}toolchain/host-packages.sh`, 'tests'], { reject: false, timeout: 1_200_000 });
  expect(tools.exitCode, tools.stderr).toBe(0);
  const r = await nixInstantiate(['--eval', '--strict', '--json', 'nix/node-settings.nix']);
  expect(r.exitCode, r.stderr).toBe(0);
  settings = JSON.parse(r.stdout) as NodeSettings;
});

describe('the .nix files', () => {
  it('every one parses', async () => {
    const { stdout } = await execa('git', ['ls-files', '-co', '--exclude-standard', '--', '*.nix'], { cwd: repoRoot });
    const files = stdout.split('\n').filter(Boolean);
    expect(files).toEqual(expect.arrayContaining(['flake.nix', 'nix/package.nix', 'nix/node-module.nix', 'nix/image.nix', 'nix/node-settings.nix', 'nix/tests/k8s-vm-test.nix']));
    for (const f of files) {
      const r = await nixInstantiate(['--parse', f]);
      expect(r.exitCode, `${f}: ${r.stderr}`).toBe(0);
    }
  });

  it('a file that does not parse is caught (the check is not vacuous)', async () => {
    const r = await nixInstantiate(['--parse', '-E', '{ a = ; }']);
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain('syntax error');
  });

  it('the module and the image builder take their settings from node-settings.nix', async () => {
    const moduleAst = (await nixInstantiate(['--parse', 'nix/node-module.nix'])).stdout;
    expect(moduleAst).toMatch(/import \S*\/nix\/node-settings\.nix/);
    for (const use of ['settings).maskedUnits', 'settings).podInterface', 'settings).sshHostKeys', 'settings).machineIdContents', 'settings).readinessScript', 'settings).startupScript']) {
      expect(moduleAst, use).toContain(use);
    }
    for (const option of ['isContainer', 'suppressedSystemUnits', 'trustedInterfaces', 'hostKeys', 'machine-id = {', 'useDHCP']) {
      expect(moduleAst, option).toContain(option);
    }
    const imageAst = (await nixInstantiate(['--parse', 'nix/image.nix'])).stdout;
    expect(imageAst).toMatch(/import \S*\/nix\/node-settings\.nix/);
    for (const use of ['settings).image.cmd', 'settings).image.stopSignal', 'settings).image.env', '/nix/node-module.nix']) {
      expect(imageAst, use).toContain(use);
    }
  });
});

describe('node-settings.nix against the Debian test image and the Deployment', () => {
  let image: BuiltImage;
  let layerListing: string[];
  let config: { config: { Cmd: string[]; StopSignal: string; Env: string[] } };
  let layerPath: string;

  async function fromArchive(member: string): Promise<string> {
    return (await execa('tar', ['-xOf', image.archive, member], { maxBuffer: 64 * 1024 * 1024 })).stdout;
  }
  async function fromLayer(member: string): Promise<string> {
    const r = await execa('sh', ['-c', 'tar -xOf "$1" "$2" | tar -xOf - "$3"', 'sh', image.archive, layerPath, member]);
    return r.stdout;
  }

  beforeAll(async () => {
    image = await buildImage('good');
    const manifest = JSON.parse(await fromArchive('manifest.json')) as { Config: string; Layers: string[] }[];
    expect(manifest[0]?.Layers).toHaveLength(1);
    layerPath = manifest[0]!.Layers[0]!;
    config = JSON.parse(await fromArchive(manifest[0]!.Config));
    const list = await execa('sh', ['-c', 'tar -xOf "$1" "$2" | tar -tvf -', 'sh', image.archive, layerPath], { maxBuffer: 256 * 1024 * 1024, timeout: 300_000 });
    layerListing = list.stdout.split('\n');
  }, 1_800_000);

  it('masks the same units (the Debian-only ones are named as such)', () => {
    const masked = layerListing
      .map((l) => / etc\/systemd\/system\/([^/ ]+) -> \/dev\/null$/.exec(l)?.[1])
      .filter((u): u is string => u !== undefined)
      .sort();
    expect(masked).toEqual([...settings.maskedUnits, ...settings.debianOnlyMaskedUnits].sort());
    expect(settings.debianOnlyMaskedUnits.every((u) => /^(apt-|e2scrub)/.test(u))).toBe(true);
  });

  it('has an empty /etc/machine-id (FR-013)', () => {
    const line = layerListing.find((l) => / etc\/machine-id$/.test(l));
    expect(line, 'etc/machine-id in the layer').toBeDefined();
    expect(line!.split(/\s+/)[2]).toBe(String(settings.machineIdContents.length));
  });

  it('carries no sshd host keys and points sshd at the same keys under /var/lib/ssh (FR-014)', async () => {
    expect(layerListing.filter((l) => / etc\/ssh\/ssh_host_/.test(l))).toEqual([]);
    const conf = await fromLayer('etc/ssh/sshd_config.d/10-host-keys-in-var-lib.conf');
    const hostKeys = conf.split('\n').filter((l) => l.startsWith('HostKey ')).map((l) => l.slice('HostKey '.length));
    expect(hostKeys).toEqual(settings.sshHostKeys.map((k) => k.path));
    for (const k of settings.sshHostKeys) expect(k.path).toBe(`/var/lib/ssh/ssh_host_${k.type}_key`);
  });

  it('has the same Cmd, StopSignal and container env', () => {
    expect(config.config.Cmd).toEqual(settings.image.cmd);
    expect(config.config.StopSignal).toBe(settings.image.stopSignal);
    for (const e of settings.image.env) expect(config.config.Env).toContain(e);
    // /sbin/init exists (Debian: sbin -> usr/sbin, usr/sbin/init -> systemd; NixOS: the system's init)
    expect(layerListing.some((l) => / (usr\/)?sbin\/init( -> \S+)?$/.test(l))).toBe(true);
  });

  it('uses the readiness and startup checks of the Deployment (src/contract/probes.ts)', () => {
    expect(settings.readinessScript).toBe(READINESS_SCRIPT);
    expect(settings.startupScript).toBe(STARTUP_SCRIPT);
    expect(settings.podInterface).toBe('eth0');
  });
});

describe('nix/group-plan.nix: the group plan whose nodes are built by `nix build` (FR-002)', () => {
  // a stub for image.nix (no nixpkgs here): the tag and the .drv a real evaluation would give
  const stubImage = '{ configuration, name }: { tag = "${name}-0123456789ab"; drvPath = "/nix/store/00000000000000000000000000000000-${name}.tar.gz.drv"; }';

  it('evaluates to a plan deploy accepts, each node built by `nix build` of its image derivation into image.archive', async () => {
    const r = await nixInstantiate([
      '--eval', '--strict', '--json', 'nix/group-plan.nix',
      '--argstr', 'group', 'demo',
      '--arg', 'nodes', '{ web = { configuration = ./nix/node-settings.nix; apps = [ "web" ]; persistentPaths = [ "/var/lib/web" ]; }; }',
      '--arg', 'nodeImage', stubImage,
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const { parseGroupPlan } = await import('../../src/config/load.js');
    const plan = parseGroupPlan(r.stdout, 'group.json');
    expect(plan.nodes.web).toMatchObject({ apps: ['web'], persistentPaths: ['/var/lib/web'] });
    expect(plan.nodes.web!.image).toEqual({
      archive: 'images/web.tar',
      tag: 'web-0123456789ab',
      build: ['nix', '--extra-experimental-features', 'nix-command', 'build', '/nix/store/00000000000000000000000000000000-web.tar.gz.drv^out', '--out-link', 'images/web.tar'],
    });
  });
});
