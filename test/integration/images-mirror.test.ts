/**
 * test/cluster/images/lib/debian-mirror.sh: the node images are debootstrapped from this
 * machine's own apt source for bookworm, read at build time (deb822 and one-line formats),
 * never from a mirror written into the repository.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { repoRoot } from './images-scripts.js';

const lib = `${repoRoot}test/cluster/images/lib/debian-mirror.sh`;
let apt: string;

beforeEach(async () => {
  apt = await mkdtemp(join(tmpdir(), 'images-mirror-'));
  await mkdir(join(apt, 'sources.list.d'));
});
afterEach(async () => {
  await rm(apt, { recursive: true, force: true });
});

async function mirrorFor(suite: string, env: NodeJS.ProcessEnv = {}) {
  const r = await execa('bash', ['-c', '. "$1"; debian_mirror "$2" "$3"', 'bash', lib, suite, apt], {
    reject: false,
    env: { ...process.env, DEPLOY_DEBIAN_MIRROR: '', ...env },
  });
  return { exitCode: r.exitCode, line: r.stdout };
}

describe('debian_mirror', () => {
  it('takes the first enabled deb822 stanza whose Suites has the suite, with its Signed-By keyring', async () => {
    await writeFile(
      join(apt, 'sources.list.d', 'debian.sources'),
      [
        'Types: deb-src',
        'URIs: http://src.example.invalid/debian',
        'Suites: bookworm',
        '',
        'Types: deb',
        'URIs: http://off.example.invalid/debian',
        'Suites: bookworm',
        'Enabled: no',
        '',
        '# the security archive has bookworm-security, not bookworm',
        'Types: deb',
        'URIs: http://security.example.invalid/debian-security',
        'Suites: bookworm-security',
        '',
        'Types: deb',
        'URIs: http://mirror.example.invalid/debian http://second.example.invalid/debian',
        'Suites: bookworm bookworm-updates',
        'Components: main',
        'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg',
      ].join('\n'),
    );
    expect(await mirrorFor('bookworm')).toEqual({
      exitCode: 0,
      line: 'http://mirror.example.invalid/debian /usr/share/keyrings/debian-archive-keyring.gpg',
    });
    expect((await mirrorFor('trixie')).exitCode).not.toBe(0);
  });

  it('reads one-line sources too, with a signed-by option', async () => {
    await writeFile(
      join(apt, 'sources.list'),
      '# comment\ndeb-src http://src.example.invalid/debian bookworm main\ndeb [arch=amd64 signed-by=/k.gpg] http://one.example.invalid/debian bookworm main\n',
    );
    expect(await mirrorFor('bookworm')).toEqual({ exitCode: 0, line: 'http://one.example.invalid/debian /k.gpg' });
  });

  it('DEPLOY_DEBIAN_MIRROR overrides the apt configuration', async () => {
    expect(await mirrorFor('bookworm', { DEPLOY_DEBIAN_MIRROR: 'http://override.example.invalid/debian' })).toEqual({
      exitCode: 0,
      line: 'http://override.example.invalid/debian ',
    });
  });
});
