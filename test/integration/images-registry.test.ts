/**
 * The loopback registry (test/cluster/registry.sh) with the good node image: a skopeo push
 * gives a digest file, and the registry then serves that digest for the tag; `up` is
 * idempotent, data survives down/up, and the basic-auth mode refuses anonymous pushes.
 */
import { mkdtemp, readFile, rm, writeFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTagDigests } from '../../src/tools/registry-digest.js';
import { buildImage, freePort, parseKeyValues, registry, type BuiltImage } from './images-scripts.js';

let stateDir: string;
let env: NodeJS.ProcessEnv;
let port: number;
let good: BuiltImage;

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'images-registry-'));
  port = await freePort();
  env = { ...process.env, DEPLOY_STATE_DIR: stateDir, K8S_LOCAL_REGISTRY_PORT: String(port) };
  good = await buildImage('good');
});

afterAll(async () => {
  // Stop whatever this file started, then drop its state directory.
  await registry(['down', '--purge'], { env });
  await registry(['down', '--name', 'auth', '--purge'], { env });
  await rm(stateDir, { recursive: true, force: true });
});

async function pushWithDigestFile(ref: string, extra: string[] = []) {
  const dir = await mkdtemp(join(tmpdir(), 'images-push-'));
  const digestFile = join(dir, 'digest');
  const result = await execa(
    'skopeo',
    ['copy', '--dest-tls-verify=false', '--digestfile', digestFile, ...extra, `docker-archive:${good.archive}`, `docker://${ref}`],
    { timeout: 300_000, reject: false },
  );
  const digest = result.exitCode === 0 ? (await readFile(digestFile, 'utf8')).trim() : undefined;
  await rm(dir, { recursive: true, force: true });
  return { result, digest };
}

async function inspectDigest(ref: string, extra: string[] = []): Promise<string> {
  const { stdout } = await execa('skopeo', ['inspect', '--tls-verify=false', ...extra, `docker://${ref}`], { timeout: 60_000 });
  const parsed = JSON.parse(stdout) as { Digest?: unknown };
  if (typeof parsed.Digest !== 'string') throw new Error(`skopeo inspect gave no Digest: ${stdout}`);
  return parsed.Digest;
}

describe('registry.sh with the good node image', () => {
  it('starts on loopback and prints the coordinates; a second up keeps the same process', async () => {
    // GIVEN no registry WHEN up twice
    const first = await registry(['up'], { env });
    expect(first.exitCode, first.stderr).toBe(0);
    const status1 = await registry(['status'], { env });
    const second = await registry(['up'], { env });
    const status2 = await registry(['status'], { env });
    // THEN both print the same exports and the same process serves
    expect(parseKeyValues(first.stdout)).toEqual({ K8S_REGISTRY: `127.0.0.1:${port}`, K8S_REGISTRY_TLS_VERIFY: 'false' });
    expect(second.stdout).toBe(first.stdout);
    expect(status1.exitCode).toBe(0);
    expect(status1.stdout).toMatch(/running, pid \d+, 127\.0\.0\.1:\d+, auth none/);
    expect(status2.stdout).toBe(status1.stdout);
    const v2 = await fetch(`http://127.0.0.1:${port}/v2/`);
    expect(v2.status).toBe(200);
  });

  it('serves, for the pushed tag, the digest skopeo wrote to --digestfile; the data survives down and up', async () => {
    const ref = `127.0.0.1:${port}/fediversity/node:${good.tag}`;
    // WHEN the archive is pushed
    const { result, digest } = await pushWithDigestFile(ref);
    expect(result.exitCode, result.stderr).toBe(0);
    // THEN the registry gives the same digest for the tag
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await inspectDigest(ref)).toBe(digest);
    // AND by digest the manifest is there too
    const byDigest = await fetch(`http://127.0.0.1:${port}/v2/fediversity/node/manifests/${digest}`, {
      method: 'HEAD',
      headers: { accept: 'application/vnd.docker.distribution.manifest.v2+json' },
    });
    expect(byDigest.status).toBe(200);
    // AND the in-process client of the no-op check (one for all nodes) reads the same digest,
    // over plain http with TLS verification off, and says a tag that is not there is gone
    const missing = `127.0.0.1:${port}/fediversity/node:not-pushed`;
    const read = await readTagDigests([ref, missing], { tlsVerify: false, env: { HOME: stateDir } });
    expect(read.get(ref)).toEqual({ kind: 'digest', digest });
    expect(read.get(missing)).toEqual({ kind: 'gone' });
    // with TLS verification on, a plain-http registry is no answer (the full plan's skopeo says why)
    expect((await readTagDigests([ref], { tlsVerify: true, env: { HOME: stateDir } })).get(ref)?.kind).toBe('unsure');

    // WHEN the registry restarts
    const down = await registry(['down'], { env });
    expect(down.exitCode, down.stderr).toBe(0);
    const stopped = await registry(['status'], { env });
    expect(stopped.exitCode).toBe(1);
    expect(stopped.stdout).toContain('stopped');
    await expect(fetch(`http://127.0.0.1:${port}/v2/`)).rejects.toThrow();
    const again = await registry(['up'], { env });
    expect(again.exitCode, again.stderr).toBe(0);
    // THEN the tag still has the same digest
    expect(await inspectDigest(ref)).toBe(digest);
  });

  it('down twice is fine and up after it starts a new process', async () => {
    const before = (await registry(['status'], { env })).stdout;
    expect((await registry(['down'], { env })).exitCode).toBe(0);
    expect((await registry(['down'], { env })).exitCode).toBe(0);
    const up = await registry(['up'], { env });
    expect(up.exitCode, up.stderr).toBe(0);
    const after = (await registry(['status'], { env })).stdout;
    expect(after).toMatch(/running/);
    expect(after).not.toBe(before); // another PID
  });

  it('refuses a port taken by another program', async () => {
    const taken = await registry(['up', '--name', 'other', '--port', String(port)], { env });
    expect(taken.exitCode).toBe(3);
    expect(taken.stderr).toContain(`port ${port} on 127.0.0.1 is taken`);
  });

  it('with --auth, refuses anonymous pushes and accepts the credentials of an auth file', async () => {
    const authPort = await freePort();
    // GIVEN a registry with basic auth, the password given on stdin
    const up = await registry(['up', '--name', 'auth', '--port', String(authPort), '--auth', 'deployer'], {
      env,
      input: 'pushpass\n',
    });
    expect(up.exitCode, up.stderr).toBe(0);
    expect((await registry(['status', '--name', 'auth'], { env })).stdout).toContain('auth basic');
    const htpasswd = await stat(join(stateDir, 'registry', 'auth', 'htpasswd'));
    expect(htpasswd.mode & 0o777).toBe(0o600);
    const ref = `127.0.0.1:${authPort}/fediversity/node:${good.tag}`;

    // WHEN pushing without credentials THEN it is refused
    const anonymous = await pushWithDigestFile(ref);
    expect(anonymous.result.exitCode).not.toBe(0);
    expect(anonymous.result.stderr).toMatch(/unauthorized|authentication required/i);

    // WHEN pushing with an auth file (what REGISTRY_AUTH_FILE points at) THEN it works
    const dir = await mkdtemp(join(tmpdir(), 'images-auth-'));
    const authFile = join(dir, 'auth.json');
    const token = Buffer.from('deployer:pushpass').toString('base64');
    await writeFile(authFile, JSON.stringify({ auths: { [`127.0.0.1:${authPort}`]: { auth: token } } }), { mode: 0o600 });
    const pushed = await pushWithDigestFile(ref, ['--dest-authfile', authFile]);
    expect(pushed.result.exitCode, pushed.result.stderr).toBe(0);
    expect(await inspectDigest(ref, ['--authfile', authFile])).toBe(pushed.digest);
    // AND the in-process client reads it with the auth file's credentials, and without them is unsure
    const withAuth = await readTagDigests([ref], { tlsVerify: false, env: { HOME: stateDir, REGISTRY_AUTH_FILE: authFile } });
    expect(withAuth.get(ref)).toEqual({ kind: 'digest', digest: pushed.digest });
    const noAuth = await readTagDigests([ref], { tlsVerify: false, env: { HOME: stateDir } });
    expect(noAuth.get(ref)?.kind).toBe('unsure');
    await rm(dir, { recursive: true, force: true });

    // AND a second up needs no password again (auth kept)
    const again = await registry(['up', '--name', 'auth'], { env });
    expect(again.exitCode, again.stderr).toBe(0);
    expect(parseKeyValues(again.stdout).K8S_REGISTRY).toBe(`127.0.0.1:${authPort}`);
  });
});
