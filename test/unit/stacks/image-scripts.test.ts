/**
 * The push and digest shell (stacks/image-scripts.ts), run with a fake skopeo: the arguments
 * skopeo gets, the TLS switch, and the failure that names the node when the archive is missing.
 */
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIGEST_PROGRAM_NAME, digestScript, pushScript } from '../../../stacks/image-scripts.js';

let dir: string;
let skopeo: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'image-scripts-'));
  skopeo = join(dir, 'skopeo');
  // one argument a line, so that quoting mistakes show
  await writeFile(skopeo, `#!/bin/sh\nprintf '%s\\n' "$@" >"${dir}/args"\nprintf '{"digest":"sha256:abc"}'\n`);
  await chmod(skopeo, 0o755);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const run = (script: string, args: string[] = []) =>
  execa('/bin/sh', ['-c', script, ...args], { reject: false, env: { PATH: process.env.PATH, DEPLOY_SKOPEO: skopeo } });
const args = async () => (await readFile(join(dir, 'args'), 'utf8')).trimEnd().split('\n');

describe('the push of a node image', () => {
  it("GIVEN an archive whose path has a quote and a space THEN skopeo copies exactly it to the tag, without TLS checks when asked", async () => {
    const archive = join(dir, "it's alpha.tar");
    await writeFile(archive, 'x');
    const r = await run(pushScript({ name: 'alpha', archive, tagRef: 'reg.test:5000/ns/alpha:a1' }, false));
    expect(r.exitCode, r.stderr).toBe(0);
    expect(await args()).toEqual(['copy', '--quiet', '--retry-times', '3', '--dest-tls-verify=false', `docker-archive:${archive}`, 'docker://reg.test:5000/ns/alpha:a1']);
    expect(pushScript({ name: 'alpha', archive, tagRef: 'r/a:1' }, true)).not.toContain('tls-verify');
  });

  it('GIVEN a missing archive THEN it fails naming the node and what to do, and skopeo does not run', async () => {
    await rm(join(dir, 'args'), { force: true });
    const r = await run(pushScript({ name: 'beta', archive: join(dir, 'missing.tar'), tagRef: 'r/beta:1' }, true));
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe(`deploy: node beta: image archive ${join(dir, 'missing.tar')} is missing or unreadable; build the node image, or fix image.archive in the group plan`);
    await expect(readFile(join(dir, 'args'))).rejects.toThrow();
  });
});

describe('the digest read', () => {
  it('GIVEN the tag as $1 THEN skopeo inspects it and the output is the JSON object the external data source needs', async () => {
    const r = await run(digestScript(false), [DIGEST_PROGRAM_NAME, 'reg.test:5000/ns/alpha:a1']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ digest: 'sha256:abc' });
    expect(await args()).toEqual(['inspect', '--tls-verify=false', '--format', '{"digest":"{{.Digest}}"}', 'docker://reg.test:5000/ns/alpha:a1']);
    expect(digestScript(true)).not.toContain('tls-verify');
  });
});
