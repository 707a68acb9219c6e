/**
 * toolchain/versions.env is the one versions file: bash sources it, src/tools/versions.ts parses
 * it. Both must read the same values, and a line only one of them would understand is refused.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DeployError } from '../../../src/errors.js';
import { parseProviders, parseVersions, pinnedVersion, VERSIONS, versionsFile } from '../../../src/tools/versions.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

describe('toolchain/versions.env', () => {
  it('reads the same in bash as in TypeScript, key for key', () => {
    const keys = Object.keys(VERSIONS);
    expect(keys).toEqual(expect.arrayContaining(['TOFU_VERSION', 'PROVIDERS', 'SPIRE_VERSION', 'KUBERNETES_VERSION', 'HELM_VERSION', 'ACTIONLINT_VERSION']));
    const script = `set -eu; . toolchain/versions.env; ${keys.map((k) => `printf '%s=%s\\n' ${k} "$${k}"`).join('; ')}`;
    const sourced = execFileSync('bash', ['-c', script], { cwd: repo, encoding: 'utf8' });
    expect(sourced).toBe(keys.map((k) => `${k}=${VERSIONS[k]}\n`).join(''));
  });

  it('is the file above the module', () => {
    expect(versionsFile()).toBe(join(repo, 'toolchain', 'versions.env'));
  });
});

describe('parseVersions', () => {
  it('takes KEY=value lines, comments and blank lines', () => {
    expect(parseVersions('# c\n\nA_1=1.2.3\nB=x:1,y:2\n', 'f')).toEqual({ A_1: '1.2.3', B: 'x:1,y:2' });
  });

  it.each([
    ['A="1.2"', 'quotes'],
    ['A=1 2', 'a space'],
    ['A=$B', 'an expansion'],
    ['a=1', 'a lower-case key'],
    ['export A=1', 'export'],
  ])('refuses %s (%s), naming the file and line', (line) => {
    expect(() => parseVersions(`# ok\n${line}\n`, 'toolchain/versions.env')).toThrow(/^toolchain\/versions\.env:2: not a KEY=value line/);
  });

  it('refuses a key set twice', () => {
    expect(() => parseVersions('A=1\nA=2\n', 'f')).toThrow('f:2: A is set twice');
  });

  it('names a missing key', () => {
    expect(() => pinnedVersion('NOPE', {})).toThrow(DeployError);
    expect(() => pinnedVersion('NOPE', {})).toThrow('toolchain/versions.env has no NOPE');
  });

  it('splits PROVIDERS into name and version, in order', () => {
    expect(parseProviders('b:1.0,a:2.0')).toEqual([{ name: 'b', version: '1.0' }, { name: 'a', version: '2.0' }]);
    expect(() => parseProviders('b:1.0,a')).toThrow('is not <name>:<version>');
  });

  it('finds no versions file above a directory without one', () => {
    const d = mkdtempSync(join(tmpdir(), 'versions-'));
    mkdirSync(join(d, 'x'));
    writeFileSync(join(d, 'x', 'versions.env'), 'A=1\n');
    expect(() => versionsFile(join(d, 'x'))).toThrow('toolchain/versions.env not found above');
  });
});
