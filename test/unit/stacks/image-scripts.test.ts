/**
 * The push and digest shell (stacks/image-scripts.ts), run with a fake skopeo: the arguments
 * skopeo gets, the TLS switch, and the failure that names the node when the archive is missing.
 */
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIGEST_PROGRAM_NAME, digestScript, pushScript } from '../../../stacks/image-scripts.js';
import { childCommands, release, waitForReleaseShell } from '../../support/barrier.js';
import { stepWords } from '../../support/step-words.js';
import { until } from '../../support/until.js';

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

const run = (script: string, args: string[] = [], env: Record<string, string> = {}) =>
  execa('/bin/sh', ['-c', script, ...args], { reject: false, env: { PATH: process.env.PATH, DEPLOY_SKOPEO: skopeo, ...env } });
const args = async () => (await readFile(join(dir, 'args'), 'utf8')).trimEnd().split('\n');

describe('the push of a node image', () => {
  it("GIVEN an archive whose path has a quote and a space THEN skopeo copies exactly it to the tag, without TLS checks when asked", async () => {
    const archive = join(dir, "it's alpha.tar");
    await writeFile(archive, 'x');
    const r = await run(pushScript({ name: 'alpha', archive, tagRef: 'reg.test:5000/ns/alpha:a1', upload: 'k1' }, 'off'));
    expect(r.exitCode, r.stderr).toBe(0);
    expect(await args()).toEqual(['copy', '--quiet', '--retry-times', '3', '--dest-tls-verify=false', `docker-archive:${archive}`, 'docker://reg.test:5000/ns/alpha:a1']);
    expect(pushScript({ name: 'alpha', archive, tagRef: 'r/a:1', upload: 'k1' }, 'system')).not.toContain('tls-verify');
  });

  it('GIVEN the run directory THEN skopeo writes the digest it pushed there, for the digest read after it (FR-003)', async () => {
    const archive = join(dir, 'alpha.tar');
    await writeFile(archive, 'x');
    const r = await run(pushScript({ name: 'alpha', archive, tagRef: 'r/alpha:1', upload: 'k1' }, 'system'), [], { DEPLOY_RUN_DIR: join(dir, 'run dir') });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(await args()).toEqual(['copy', '--quiet', '--retry-times', '3', '--digestfile', join(dir, 'run dir', 'alpha.pushed-digest'), `docker-archive:${archive}`, 'docker://r/alpha:1']);
  });

  it("GIVEN a registry CA (K8S_REGISTRY_CA_FILE) THEN skopeo gets the run's staged directory, and the graph names only the variable", async () => {
    const archive = join(dir, 'alpha.tar');
    await writeFile(archive, 'x');
    const certs = join(dir, 'run certs');
    const script = pushScript({ name: 'alpha', archive, tagRef: 'r/alpha:1', upload: 'k1' }, 'ca');
    expect(script).not.toContain(certs);
    const r = await run(script, [], { DEPLOY_REGISTRY_CERT_DIR: certs });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(await args()).toEqual(['copy', '--quiet', '--retry-times', '3', '--dest-cert-dir', certs, `docker-archive:${archive}`, 'docker://r/alpha:1']);
    // run outside deploy (tofu by hand): no silent fallback to the system's CAs
    await rm(join(dir, 'args'), { force: true });
    const bare = await run(script);
    expect(bare.exitCode).not.toBe(0);
    expect(bare.stderr).toContain('DEPLOY_REGISTRY_CERT_DIR: is not set: the registry CA (K8S_REGISTRY_CA_FILE) is staged there by deploy plan/apply');
    await expect(readFile(join(dir, 'args'))).rejects.toThrow();
  });

  it('GIVEN a missing archive THEN it fails naming the node and what to do, and skopeo does not run', async () => {
    await rm(join(dir, 'args'), { force: true });
    const r = await run(pushScript({ name: 'beta', archive: join(dir, 'missing.tar'), tagRef: 'r/beta:1', upload: 'k1' }, 'system'));
    expect(r.exitCode).toBe(1);
    expect(stepWords(r.stderr)).toBe(`deploy: node beta: image archive ${join(dir, 'missing.tar')} is missing or unreadable; build the node image, or fix image.archive in the group plan`);
    await expect(readFile(join(dir, 'args'))).rejects.toThrow();
  });
});

describe('the pushes of one archive and tag in a run: one upload, no order in the graph', () => {
  // a fake skopeo that logs when it starts and ends, writes the digest file it is given, fails
  // for the destination in FAIL_FOR, and in between runs until the test creates the file
  // RELEASED: it does so once it has seen every other push waiting for the first one's end, or
  // uploading; so the pushes overlap however slow the machine is (issue 49)
  let slow: string;
  beforeAll(async () => {
    slow = join(dir, 'slow skopeo');
    await writeFile(
      slow,
      [
        '#!/bin/sh',
        'dest=; df=',
        'while [ $# -gt 0 ]; do case "$1" in --digestfile) df=$2; shift ;; docker://*) dest=${1#docker://} ;; esac; shift; done',
        'echo "start $dest" >>"$LOG"',
        waitForReleaseShell({ variable: 'RELEASED' }, 20),
        'if [ "$dest" = "${FAIL_FOR:-}" ]; then echo "end $dest (failed)" >>"$LOG"; exit 1; fi',
        'if [ -n "$df" ]; then printf sha256:abc >"$df"; fi',
        'echo "end $dest" >>"$LOG"',
      ].join('\n'),
    );
    await chmod(slow, 0o755);
  });
  const runPush = (name: string, upload: string, env: Record<string, string | undefined>) =>
    execa('/bin/sh', ['-c', pushScript({ name, archive: join(dir, 'shared.tar'), tagRef: `r/${name}:1`, upload }, 'system')], { reject: false, env: { PATH: process.env.PATH, DEPLOY_SKOPEO: slow, ...env } });
  interface Push {
    readonly name: string;
    readonly result: ReturnType<typeof runPush>;
    ended: boolean;
  }
  const startPush = (name: string, upload: string, env: Record<string, string | undefined>): Push => {
    const push: Push = { name, result: runPush(name, upload, env), ended: false };
    void push.result.then(
      () => (push.ended = true),
      () => (push.ended = true),
    );
    return push;
  };
  /**
   * What a push is doing now: 'uploading' (its skopeo logged its start) or 'waiting' (its shell
   * runs a sleep: only its wait loops do), else undefined (also once it ended). Its children are
   * looked at before the log: the fake logs its start before its own sleeps, so a sleep seen
   * while the log has no start yet is the push's.
   */
  const doing = async (push: Push, log: string): Promise<'uploading' | 'waiting' | undefined> => {
    const sleeping = push.result.pid !== undefined && childCommands(push.result.pid).includes('sleep');
    const logged = await readFile(log, 'utf8').catch(() => '');
    if (push.ended) return undefined;
    if (logged.includes(`start r/${push.name}:1`)) return 'uploading';
    return sleeping ? 'waiting' : undefined;
  };
  /** Waits until each of `pushes` waits or uploads (none may end before the release). */
  const untilEachWaitsOrUploads = async (pushes: readonly Push[], log: string) => {
    let states: (string | undefined)[] = [];
    await until(`the pushes of ${pushes.map((p) => p.name).join(', ')} each waiting for another push's end (a sleep of its wait loop as its child) or uploading (its skopeo started)`, async () => (states = await Promise.all(pushes.map((p) => doing(p, log)))).every((s) => s !== undefined), {
      timeoutMs: 10_000,
      failIf: () => {
        const ended = pushes.filter((p) => p.ended).map((p) => p.name);
        return ended.length > 0 ? `${ended.map((name) => `the push of ${name}`).join(' and ')} ended before the skopeos were released` : undefined;
      },
      seen: () => `${pushes.map((p, i) => `${p.name}: ${states[i] ?? 'neither'}`).join(', ')}; the log: ${JSON.stringify(existsSync(log) ? readFileSync(log, 'utf8') : '')}`,
    });
  };
  /**
   * Runs `observe` (its waits), then releases the skopeos whether it failed or not, lets every
   * push of `started` end, and returns their results and the log's lines.
   */
  const releasedAfter = async (started: readonly Push[], log: string, released: string, observe: () => Promise<void>) => {
    try {
      await observe();
    } finally {
      release(released);
      await Promise.allSettled(started.map((p) => p.result));
    }
    const results = await Promise.all(started.map((p) => p.result));
    return { results, log: (await readFile(log, 'utf8')).trimEnd().split('\n') };
  };
  const pushes = async (nodes: { name: string; upload: string }[], env: Record<string, string> = {}) => {
    const runDir = await mkdtemp(join(dir, 'run-'));
    const log = join(runDir, 'log');
    const released = `${runDir}.released`;
    await writeFile(join(dir, 'shared.tar'), 'x');
    const start = (n: { name: string; upload: string }) => startPush(n.name, n.upload, { DEPLOY_RUN_DIR: runDir, LOG: log, RELEASED: released, ...env });
    // the first to start is the first node: the others start once its skopeo runs, and it runs
    // until each of them is seen waiting for its end or uploading too
    const [first, ...others] = nodes;
    const started = [start(first!)];
    return releasedAfter(started, log, released, async () => {
      let logged = '';
      await until(`the push of ${first!.name} starting skopeo`, async () => (logged = await readFile(log, 'utf8').catch(() => '')).includes(`start r/${first!.name}:1`), {
        timeoutMs: 10_000,
        failIf: () => (started[0]!.ended ? 'it ended first' : undefined),
        seen: () => `the log: ${JSON.stringify(logged)}`,
      });
      started.push(...others.map(start));
      await untilEachWaitsOrUploads(started.slice(1), log);
    });
  };

  it('GIVEN three nodes pushing the same archive and tag THEN the first uploads alone, and the others push once it ended', async () => {
    const { results, log } = await pushes(['alpha', 'beta', 'gamma'].map((name) => ({ name, upload: 'same' })));
    for (const r of results) expect(r.exitCode, r.stderr).toBe(0);
    expect(log.slice(0, 2)).toEqual(['start r/alpha:1', 'end r/alpha:1']);
    expect(log.slice(2).sort()).toEqual(['end r/beta:1', 'end r/gamma:1', 'start r/beta:1', 'start r/gamma:1']);
  });

  it('GIVEN other archives or tags THEN their pushes do not wait for each other', async () => {
    const { results, log } = await pushes([
      { name: 'alpha', upload: 'one' },
      { name: 'beta', upload: 'two' },
    ]);
    for (const r of results) expect(r.exitCode, r.stderr).toBe(0);
    expect(log.slice(0, 2)).toEqual(['start r/alpha:1', 'start r/beta:1']);
  });

  it('GIVEN the first push fails THEN the others fail without pushing, naming it', async () => {
    const { results, log } = await pushes(['alpha', 'beta'].map((name) => ({ name, upload: 'same' })), { FAIL_FOR: 'r/alpha:1' });
    expect(results.map((r) => r.exitCode)).toEqual([1, 1]);
    expect(stepWords(results[1]!.stderr)).toBe('deploy: node beta: not pushed: node alpha, which pushes the same archive and tag in this run and started first, failed (its error says why)');
    expect(log).toEqual(['start r/alpha:1', 'end r/alpha:1 (failed)']);
  });

  it('GIVEN no run directory (tofu run by hand) THEN each push uploads on its own, at once', async () => {
    await writeFile(join(dir, 'shared.tar'), 'x');
    const log = join(dir, 'alone.log');
    const released = join(dir, 'alone.released');
    await rm(log, { force: true });
    await rm(released, { force: true });
    const started = ['alpha', 'beta'].map((name) => startPush(name, 'same', { LOG: log, RELEASED: released }));
    const { results, log: lines } = await releasedAfter(started, log, released, () => untilEachWaitsOrUploads(started, log));
    for (const r of results) expect(r.exitCode, r.stderr).toBe(0);
    expect(lines.slice(0, 2).every((l) => l.startsWith('start'))).toBe(true);
  });
});

describe('the image build before the push (image.build, FR-002)', () => {
  // a fake build: says where it runs and what it was given, and writes (or not) the archive
  const fakeBuild = async (body: string) => {
    const build = join(dir, 'fake build');
    await writeFile(build, `#!/bin/sh\n${body}\n`);
    await chmod(build, 0o755);
    return build;
  };
  const runWith = (script: string, env: Record<string, string>) =>
    execa('/bin/sh', ['-c', script], { reject: false, env: { PATH: process.env.PATH, DEPLOY_SKOPEO: skopeo, ...env } });

  it('GIVEN a build that writes the archive THEN it runs in its directory, without stdin or the state credentials, its lines prefixed with the node, and then the push', async () => {
    await rm(join(dir, 'args'), { force: true });
    const archive = join(dir, 'built.tar');
    await rm(archive, { force: true });
    const build = await fakeBuild(
      'echo "in $(pwd) with $# args: $1|$2"; echo "password=${TF_HTTP_PASSWORD:-unset} address=${TF_HTTP_ADDRESS:-unset} keep=$KEEP gogc=${GOGC:-unset}" >&2; if read -r x; then echo "read stdin"; fi; printf x > "$2"; printf "no newline at the end"',
    );
    const script = pushScript({ name: 'alpha', archive, tagRef: 'r/alpha:1', upload: 'k1', build: { argv: [build, "it's", 'built.tar'], dir } }, 'system');
    // (GOGC as deploy gives it to tofu when the operator sets none: src/tools/tofu/tofu-process.ts)
    const r = await runWith(script, { TF_HTTP_PASSWORD: 'secret', TF_HTTP_ADDRESS: 'http://127.0.0.1:1/x', KEEP: 'kept', GOGC: '400', DEPLOY_TOFU_GOGC: '400' });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(stepWords(r.stderr).split('\n')).toEqual([
      `deploy: node alpha: building its image: '${build}' 'it'\\''s' 'built.tar' (in ${dir})`,
      `alpha: build: in ${dir} with 2 args: it's|built.tar`,
      'alpha: build: password=unset address=unset keep=kept gogc=unset',
      'alpha: build: no newline at the end',
    ]);
    expect(await args()).toEqual(['copy', '--quiet', '--retry-times', '3', `docker-archive:${archive}`, 'docker://r/alpha:1']);
  });

  it('GIVEN the operator set GOGC THEN the build gets it as the operator set it', async () => {
    const archive = join(dir, 'gogc.tar');
    await rm(archive, { force: true });
    const build = await fakeBuild('echo "gogc=${GOGC:-unset}"; printf x > "$1"');
    const script = pushScript({ name: 'gamma', archive, tagRef: 'r/gamma:1', upload: 'k3', build: { argv: [build, archive], dir } }, 'system');
    const r = await runWith(script, { GOGC: '150' });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(stepWords(r.stderr).split('\n')).toContain('gamma: build: gogc=150');
  });

  it('GIVEN a failing build THEN the push fails naming the node, the command and its exit code, and skopeo does not run', async () => {
    await rm(join(dir, 'args'), { force: true });
    const archive = join(dir, 'old.tar');
    await writeFile(archive, 'an archive of an earlier build');
    const build = await fakeBuild('echo "error: attribute missing" >&2; exit 7');
    const r = await run(pushScript({ name: 'beta', archive, tagRef: 'r/beta:1', upload: 'k1', build: { argv: [build, '--out', archive], dir } }, 'system'));
    expect(r.exitCode).toBe(1);
    expect(stepWords(r.stderr).split('\n').slice(1)).toEqual([
      'beta: build: error: attribute missing',
      `deploy: node beta: the image build failed (exit 7): '${build}' '--out' '${archive}'; nothing was pushed for this node; fix the command (image.build in the group plan) or what it builds`,
    ]);
    await expect(readFile(join(dir, 'args'))).rejects.toThrow();
  });

  it('GIVEN a build that does not write the archive THEN the push fails saying so, and skopeo does not run', async () => {
    await rm(join(dir, 'args'), { force: true });
    const archive = join(dir, 'never-written.tar');
    const build = await fakeBuild('echo built somewhere else');
    const r = await run(pushScript({ name: 'gamma', archive, tagRef: 'r/gamma:1', upload: 'k1', build: { argv: [build], dir } }, 'system'));
    expect(r.exitCode).toBe(1);
    expect(stepWords(r.stderr).split('\n').slice(1)).toEqual([
      'gamma: build: built somewhere else',
      `deploy: node gamma: the image build ('${build}') ended without writing image archive ${archive}; make it write there, or fix image.archive in the group plan`,
    ]);
    await expect(readFile(join(dir, 'args'))).rejects.toThrow();
  });

  it('GIVEN a command that is not there THEN the push fails with its exit code 127 and the shell saying why', async () => {
    const r = await run(pushScript({ name: 'delta', archive: join(dir, 'd.tar'), tagRef: 'r/delta:1', upload: 'k1', build: { argv: ['no-such-builder-here', 'x'], dir } }, 'system'));
    expect(r.exitCode).toBe(1);
    expect(stepWords(r.stderr)).toMatch(/\ndelta: build: .*no-such-builder-here.*not found\n/);
    expect(stepWords(r.stderr)).toContain("deploy: node delta: the image build failed (exit 127): 'no-such-builder-here' 'x'");
  });
});

describe('the digest read', () => {
  it('GIVEN the tag as $1 THEN skopeo inspects it and the output is the JSON object the external data source needs', async () => {
    const r = await run(digestScript('off'), [DIGEST_PROGRAM_NAME, 'reg.test:5000/ns/alpha:a1']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ digest: 'sha256:abc' });
    expect(await args()).toEqual(['inspect', '--tls-verify=false', '--format', '{"digest":"{{.Digest}}"}', 'docker://reg.test:5000/ns/alpha:a1']);
    expect(digestScript('system')).not.toContain('tls-verify');
    const certs = join(dir, 'certs');
    const withCa = await run(digestScript('ca'), [DIGEST_PROGRAM_NAME, 'reg.test:5000/ns/alpha:a1'], { DEPLOY_REGISTRY_CERT_DIR: certs });
    expect(withCa.exitCode, withCa.stderr).toBe(0);
    expect(await args()).toEqual(['inspect', '--cert-dir', certs, '--format', '{"digest":"{{.Digest}}"}', 'docker://reg.test:5000/ns/alpha:a1']);
  });

  it('GIVEN the digest a push of this run wrote THEN it prints that one, and skopeo does not run (FR-003: the pushed digest, not the tag\'s later one)', async () => {
    const runDir = await mkdtemp(join(dir, 'run-'));
    await writeFile(join(runDir, 'alpha.pushed-digest'), 'sha256:0123abcd'); // skopeo writes no newline
    await rm(join(dir, 'args'), { force: true });
    const r = await run(digestScript('system'), [DIGEST_PROGRAM_NAME, 'r/alpha:1', 'alpha'], { DEPLOY_RUN_DIR: runDir });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ digest: 'sha256:0123abcd' });
    await expect(readFile(join(dir, 'args'))).rejects.toThrow();
    // another node of the run (not pushed) and a file that holds no digest: the registry's answer
    for (const [node, content] of [['beta', undefined], ['alpha', 'garbage\n']] as const) {
      if (content !== undefined) await writeFile(join(runDir, `${node}.pushed-digest`), content);
      const other = await run(digestScript('system'), [DIGEST_PROGRAM_NAME, `r/${node}:1`, node], { DEPLOY_RUN_DIR: runDir });
      expect(JSON.parse(other.stdout)).toEqual({ digest: 'sha256:abc' });
      expect(await args()).toEqual(['inspect', '--format', '{"digest":"{{.Digest}}"}', `docker://r/${node}:1`]);
    }
  });
});
