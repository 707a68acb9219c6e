/**
 * test/cluster/images/build.sh: the docker archives of the node images (systemd as /sbin/init,
 * the settings the cluster relies on), built once and cached by content, and a new tag from a
 * changed configuration in seconds. `good` is one layer, the debootstrapped tree; a variant or
 * a configuration is that same layer and one small layer of what it adds.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildImage, buildScript, type BuiltImage } from './images-scripts.js';

interface ArchiveManifest {
  Config: string;
  RepoTags: string[];
  Layers: string[];
}
interface ImageConfig {
  architecture: string;
  os: string;
  config: { Cmd?: string[]; Env?: string[]; StopSignal?: string; Entrypoint?: string[] };
  rootfs: { type: string; diff_ids: string[] };
}

async function readMember(archive: string, member: string): Promise<string> {
  const { stdout } = await execa('tar', ['--occurrence=1', '-xOf', archive, member]);
  return stdout;
}

/** The layer's entries as `tar -tv` lines (mode owner size date name). */
async function listLayer(archive: string, layer: string): Promise<string[]> {
  const { stdout } = await execa(
    'sh',
    ['-c', 'tar --occurrence=1 -xOf "$1" "$2" | tar -tv --numeric-owner', 'sh', archive, layer],
    { maxBuffer: 256 * 1024 * 1024 },
  );
  return stdout.split('\n');
}

async function sha256OfMember(archive: string, member: string): Promise<string> {
  const hash = createHash('sha256');
  const child = execa('tar', ['--occurrence=1', '-xOf', archive, member], { buffer: false });
  for await (const chunk of child.stdout) hash.update(chunk as Buffer);
  await child;
  return hash.digest('hex');
}

function entry(lines: string[], name: string): string | undefined {
  return lines.find((l) => l.endsWith(` ${name}`) || l.includes(` ${name} -> `));
}

let good: BuiltImage;
let manifest: ArchiveManifest;
let config: ImageConfig;

beforeAll(async () => {
  // Cold: debootstrap, a few minutes; warm: under a second.
  good = await buildImage('good');
  manifest = (JSON.parse(await readMember(good.archive, 'manifest.json')) as ArchiveManifest[])[0]!;
  config = JSON.parse(await readMember(good.archive, manifest.Config)) as ImageConfig;
});

describe('the good image archive', () => {
  it('is a docker archive of one layer whose diff ID is the layer digest, tagged with the printed tag', async () => {
    expect(manifest.Layers).toHaveLength(1);
    expect(manifest.RepoTags).toEqual([`localhost/deploy-node:${good.tag}`]);
    // the tag follows the content: variant + the start of the image ID
    expect(good.tag).toBe(`good-${good.imageId.slice('sha256:'.length, 'sha256:'.length + 12)}`);
    expect(config.rootfs.diff_ids).toEqual([`sha256:${await sha256OfMember(good.archive, manifest.Layers[0]!)}`]);
    expect(`sha256:${manifest.Config.replace(/\.json$/, '')}`).toBe(good.imageId);
  });

  it('starts systemd as PID 1 the way a container manager must (Cmd, StopSignal, Env)', () => {
    expect(config.os).toBe('linux');
    expect(config.config.Cmd).toEqual(['/sbin/init']);
    expect(config.config.Entrypoint).toBeUndefined();
    expect(config.config.StopSignal).toBe('SIGRTMIN+3');
    expect(config.config.Env).toContain('container=docker');
  });

  it('has an empty machine ID, no SSH host keys, the host-key unit, and networkd masked', async () => {
    const lines = await listLayer(good.archive, manifest.Layers[0]!);
    // `-rw-r--r-- 0/0 0 <date> <time> etc/machine-id`: empty, so systemd takes container_uuid
    expect(entry(lines, 'etc/machine-id')).toMatch(/^-\S+ 0\/0\s+0 /);
    // merged /usr: /sbin -> usr/sbin, and init is systemd
    expect(entry(lines, 'sbin')).toMatch(/-> usr\/sbin$/);
    expect(entry(lines, 'usr/sbin/init')).toMatch(/-> \/lib\/systemd\/systemd$/);
    expect(lines.filter((l) => / etc\/ssh\/ssh_host_/.test(l))).toEqual([]);
    expect(entry(lines, 'etc/ssh/sshd_config.d/10-host-keys-in-var-lib.conf')).toBeDefined();
    expect(entry(lines, 'etc/systemd/system/ssh.service.requires/ssh-host-keys.service')).toBeDefined();
    expect(entry(lines, 'etc/systemd/system/systemd-networkd.service')).toMatch(/-> \/dev\/null$/);
    expect(entry(lines, 'etc/node-config')).toBeUndefined();
    expect(entry(lines, 'etc/systemd/system/broken.service')).toBeUndefined();
    // the runtime provides /dev: no device nodes in the layer
    expect(lines.filter((l) => /^[cb]/.test(l))).toEqual([]);
  });

  it('is read by skopeo as a docker-archive', async () => {
    const { stdout } = await execa('skopeo', ['inspect', '--config', `docker-archive:${good.archive}`]);
    const inspected = JSON.parse(stdout) as ImageConfig;
    expect(inspected.config.Cmd).toEqual(['/sbin/init']);
    expect(inspected.rootfs.diff_ids).toEqual(config.rootfs.diff_ids);
  });

  it('is not built again: a second call prints the same lines within a second', async () => {
    const again = await buildImage('good');
    expect(again).toMatchObject({ archive: good.archive, tag: good.tag, imageId: good.imageId });
    expect(again.ms).toBeLessThan(1_000);
  });
});

describe('variants from the cached root file system', () => {
  it('broken adds broken.service, enabled, with its own tag', async () => {
    const broken = await buildImage('broken');
    expect(broken.tag).toMatch(/^broken-[0-9a-f]{12}$/);
    expect(broken.archive).not.toBe(good.archive);
    const m = (JSON.parse(await readMember(broken.archive, 'manifest.json')) as ArchiveManifest[])[0]!;
    // the good image's layer, then one of what broken adds, and nothing else
    expect(m.Layers).toHaveLength(2);
    expect(m.Layers[0]).toBe(manifest.Layers[0]);
    const lines = (await listLayer(broken.archive, m.Layers[1]!)).filter((l) => l !== '');
    expect(entry(lines, 'etc/systemd/system/broken.service')).toBeDefined();
    expect(entry(lines, 'etc/systemd/system/multi-user.target.wants/broken.service')).toMatch(/-> \.\.\/broken\.service$/);
    expect(lines.length).toBeLessThan(10);
    const brokenConfig = JSON.parse(await readMember(broken.archive, m.Config)) as ImageConfig;
    expect(brokenConfig.rootfs.diff_ids).toEqual([config.rootfs.diff_ids[0], `sha256:${await sha256OfMember(broken.archive, m.Layers[1]!)}`]);
  });

  it('--config makes a new tag with /etc/node-config, in seconds; the same configuration gives the same tag', async () => {
    const value = `v${Date.now()}`; // a configuration never built before
    const first = await buildImage('good', [`APP_VERSION=${value}`, 'MODE=test']);
    const same = await buildImage('good', [`APP_VERSION=${value}`, 'MODE=test']);
    const other = await buildImage('good', [`APP_VERSION=${value}-2`, 'MODE=test']);
    expect(first.tag).not.toBe(good.tag);
    expect(first.imageId).not.toBe(good.imageId);
    expect(same).toMatchObject({ archive: first.archive, tag: first.tag, imageId: first.imageId });
    expect(other.tag).not.toBe(first.tag);
    // re-tarred from the cached tree: seconds, not a debootstrap
    expect(first.ms).toBeLessThan(30_000);
    const m = (JSON.parse(await readMember(first.archive, 'manifest.json')) as ArchiveManifest[])[0]!;
    // the shared layer, then a layer of the configuration alone (a push or pull of a few KB)
    expect(m.Layers).toHaveLength(2);
    expect(m.Layers[0]).toBe(manifest.Layers[0]);
    const { stdout } = await execa('sh', ['-c', 'tar --occurrence=1 -xOf "$1" "$2" | tar -xO etc/node-config', 'sh', first.archive, m.Layers[1]!]);
    expect(stdout).toBe(`APP_VERSION=${value}\nMODE=test`);
    expect((await listLayer(first.archive, m.Layers[1]!)).filter((l) => l !== '').map((l) => l.split(' ').at(-1))).toEqual(['etc/', 'etc/node-config']);
    await rm(first.archive, { force: true }); // one-off configurations: do not pile up
    await rm(other.archive, { force: true });
  });

  it('GIVEN six new configurations built at once from the cached tree (two e2e files building images at the same moment) THEN all six succeed, on the one shared base layer', async () => {
    // The base layer was hard-linked into each build's work dir: a link made or removed by one
    // build changed its ctime while another's tar read it ("file changed as we read it"):
    // 5 of 6 such builds failed on a cold machine's first e2e run (docker-archive.sh).
    const stamp = `race${Date.now()}`;
    const built = await Promise.allSettled([1, 2, 3, 4, 5, 6].map((i) => buildImage('broken', [`RACE=${stamp}-${i}`])));
    const failed = built.flatMap((b, i) => (b.status === 'rejected' ? [`build ${i + 1}: ${String(b.reason).split('\n').slice(0, 3).join(' ')}`] : []));
    expect(failed).toEqual([]);
    const images = built.map((b) => (b as PromiseFulfilledResult<BuiltImage>).value);
    expect(new Set(images.map((b) => b.tag)).size).toBe(6);
    for (const img of images) {
      const m = (JSON.parse(await readMember(img.archive, 'manifest.json')) as ArchiveManifest[])[0]!;
      expect(m.Layers[0]).toBe(manifest.Layers[0]);
      await rm(img.archive, { force: true });
    }
  });

  it('prune deletes the trees and archives of other inputs and keeps the current ones', async () => {
    const cache = await mkdtemp(join(tmpdir(), 'images-prune-'));
    const current = basename(dirname(good.archive)); // images/<tree key>/node-....tar
    await mkdir(join(cache, 'images', current, 'rootfs'), { recursive: true });
    await mkdir(join(cache, 'images', '0123456789abcdef', 'rootfs'), { recursive: true });
    const r = await execa(buildScript, ['prune'], { env: { ...process.env, DEPLOY_CACHE_DIR: cache } });
    expect(r.exitCode).toBe(0);
    expect(await readdir(join(cache, 'images'))).toEqual([current]);
    await rm(cache, { recursive: true, force: true });
  });

  it('--out FILE puts the archive there too (a link to the cached one): the script serves as image.build', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'images-out-'));
    const r = await execa(buildScript, ['good', '--out', 'images.tar'], { cwd: dir });
    expect(r.stdout).toContain(`ARCHIVE=${good.archive}`);
    expect(await readlink(join(dir, 'images.tar'))).toBe(good.archive);
    const none = await execa(buildScript, ['good', '--out'], { reject: false });
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain('[--out FILE]');
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses a malformed --config and an unknown variant with the usage exit code', async () => {
    const bad = await execa(buildScript, ['good', '--config', 'no-equals'], { reject: false });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('--config wants NAME=VALUE');
    const unknown = await execa(buildScript, ['shiny'], { reject: false });
    expect(unknown.exitCode).toBe(2);
  });
});
