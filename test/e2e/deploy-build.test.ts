/**
 * FR-002 on the deployer (issue 18 item 1): a node's `image.build` is run by the graph's push
 * step, before skopeo, only when the push is replaced (a new tag). The build command is the
 * project's own image builder (test/cluster/images/build.sh, with `--out`): a configuration
 * (`--config`) gives the tag (derived here from the configuration, as a Nix system's store
 * path gives it, before anything is built). Real tofu, registry and cluster.
 */
import { createHash } from 'node:crypto';
import { lstat, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildScript } from '../integration/images-scripts.js';
import { DeployHarness } from './harness.js';

/** The tag a configuration gives: it changes exactly when the configuration does. */
const tagOf = (config: string) => `cfg-${createHash('sha256').update(config).digest('hex').slice(0, 12)}`;
const quoted = (argv: string[]) => argv.map((a) => `'${a}'`).join(' ');

describe('FR-002: the graph builds the node image on the deployer (image.build)', () => {
  let h: DeployHarness;
  const builds = (node: string, config: string) => [buildScript, 'good', '--config', config, '--out', `images/${node}.tar`];
  /** A plan whose node `web` is built from `config`, plus `extra` nodes as they are. */
  const writePlan = async (config: string, extra: Record<string, unknown> = {}) => {
    const file = join(h.dir, 'group.json');
    const web = { image: { archive: 'images/web.tar', tag: tagOf(config), build: builds('web', config) } };
    await writeFile(file, JSON.stringify({ version: 1, group: 'e2e', nodes: { web, ...extra } }, null, 2));
    return file;
  };
  const exists = (path: string) => lstat(path).then(() => true, () => false);
  let firstImage = '';

  beforeAll(async () => (h = await DeployHarness.create('build')));
  afterAll(() => h?.cleanup());

  it('GIVEN a node with image.build and a tag never pushed WHEN applied THEN the build runs, its lines stream to the progress, and that image is pushed and rolled out', async () => {
    const plan = await writePlan('BUILD_E2E=1');
    expect(await exists(join(h.dir, 'images', 'web.tar'))).toBe(false);
    const r = await h.deploy('apply', plan, ['--target', 'all']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain(`deploy: node web: building its image: ${quoted(builds('web', 'BUILD_E2E=1'))} (in ${h.dir})`);
    // the builder's own lines (its stdout and its log on stderr), prefixed with the node
    expect(r.stderr).toMatch(/web: build: ARCHIVE=\S+\.tar\n/);
    expect(r.stderr).toMatch(/web: build: \S+ images\/build: wrote images\/web\.tar -> /);
    // the build comes before the push's end and the rollout
    const lines = r.stderr.split('\n');
    const buildAt = lines.findIndex((l) => l.includes('deploy: node web: building its image'));
    const pushedAt = lines.findIndex((l) => /\] web: image pushed in /.test(l));
    expect(buildAt, r.stderr).toBeGreaterThanOrEqual(0);
    expect(pushedAt, r.stderr).toBeGreaterThan(buildAt);
    expect((await lstat(join(h.dir, 'images', 'web.tar'))).isSymbolicLink()).toBe(true);
    expect(r.json.targets[0].rollouts.map((x: any) => [x.node, x.outcome])).toEqual([['web', 'ready']]);
    // the pod runs the image that this configuration built
    expect(await h.exec('web', 'cat /etc/node-config')).toBe('BUILD_E2E=1');
    firstImage = (await h.getJson(['get', 'deployment', 'web'])).spec.template.spec.containers[0].image;
    expect(await h.registryDigest(`${h.env.K8S_REGISTRY}/${h.namespace}/web:${tagOf('BUILD_E2E=1')}`)).toBe(firstImage.split('@')[1]);
  });

  it('GIVEN the same tag WHEN applied again THEN nothing is built: the archive, removed meanwhile, is not written again, and nothing changes', async () => {
    await rm(join(h.dir, 'images', 'web.tar'));
    const plan = await writePlan('BUILD_E2E=1');
    const r = await h.deploy('apply', plan, ['--target', 'all']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('building its image');
    expect(r.stderr).not.toContain('web: build:');
    expect(await exists(join(h.dir, 'images', 'web.tar'))).toBe(false);
    expect(r.json.targets[0].changes, r.stdout).toBe(false);
    expect((await h.getJson(['get', 'deployment', 'web'])).spec.template.spec.containers[0].image).toBe(firstImage);
  });

  it('GIVEN a changed configuration (a new tag) WHEN applied THEN it is built, pushed and rolled out: the pod runs the new configuration', async () => {
    const plan = await writePlan('BUILD_E2E=2');
    const r = await h.deploy('apply', plan, ['--target', 'all']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain(`deploy: node web: building its image: ${quoted(builds('web', 'BUILD_E2E=2'))}`);
    expect(r.json.targets[0].rollouts.map((x: any) => [x.node, x.outcome])).toEqual([['web', 'ready']]);
    expect(await h.exec('web', 'cat /etc/node-config')).toBe('BUILD_E2E=2');
    expect((await h.getJson(['get', 'deployment', 'web'])).spec.template.spec.containers[0].image).not.toBe(firstImage);
  });

  it('GIVEN a build command that fails WHEN applied THEN exit 3 naming the node, the command and its exit code, and nothing of that node is deployed', async () => {
    const web = (await h.getJson(['get', 'deployment', 'web'])).spec.template.spec.containers[0].image;
    const bad = [buildScript, 'no-such-variant', '--out', 'images/bad.tar'];
    const plan = await writePlan('BUILD_E2E=2', { bad: { image: { archive: 'images/bad.tar', tag: 'bad-1', build: bad } } });
    const r = await h.deploy('apply', plan, ['--target', 'all']);
    expect(r.exitCode, r.stderr).toBe(3);
    expect(r.stderr).toContain(`deploy: node bad: the image build failed (exit 2): ${quoted(bad)}; nothing was pushed for this node`);
    expect(r.stderr).toContain('bad: build: usage: build.sh');
    expect(await h.registryDigest(`${h.env.K8S_REGISTRY}/${h.namespace}/bad:bad-1`)).toBeUndefined();
    expect((await h.kubectl(['get', 'deployment', 'bad'])).exitCode).not.toBe(0);
    expect((await h.kubectl(['get', 'pvc', 'bad-state'])).exitCode).not.toBe(0);
    // the other node is left as it was
    expect((await h.getJson(['get', 'deployment', 'web'])).spec.template.spec.containers[0].image).toBe(web);
    expect(await h.exec('web', 'cat /etc/node-config')).toBe('BUILD_E2E=2');
  });
});
