/**
 * The provider patches' own Go tests under the race detector (toolchain/build-tools.sh
 * --race-test). The build runs the same tests without it, sharing the build's compiled
 * packages, so that a first deploy does not compile every dependency a second time with cgo
 * (issue 32, P11); the race run belongs here, in `npm test`.
 */
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../..', import.meta.url));

describe('toolchain/build-tools.sh --race-test', () => {
  it('runs every test the patches add under -race, and they pass', async () => {
    const r = await execa('bash', ['toolchain/build-tools.sh', '--race-test'], { cwd: repo, all: true, reject: false, timeout: 20 * 60_000 });
    expect(r.exitCode, r.all).toBe(0);
    // The patches' tests, each run and passed under -race: 0001's four of the per-kind type
    // cache, 0002's three of the computed fields of an update, 0003's one of a service
    // account's absent automountServiceAccountToken, 0004's three of the object's shape (each
    // package named once).
    expect(r.all).toMatch(/testing the patched packages \.\/manifest\/openapi\/ \.\/manifest\/provider\/ \.\/kubernetes\/apimeaning\/: 11 tests -race/);
    expect(r.all?.match(/^--- PASS: TestTypeCache\w+/gm)).toHaveLength(4);
    expect(r.all?.match(/^--- PASS: TestComputedFields\w+/gm)).toHaveLength(3);
    expect(r.all?.match(/^--- PASS: TestAutomount\w+/gm)).toHaveLength(1);
    expect(r.all?.match(/^--- PASS: Test(ManifestShape|ObjectShape)\w+/gm)).toHaveLength(3);
    expect(r.all).not.toMatch(/^--- FAIL/m);
    expect(r.all).toMatch(/race-tested the patches of 1 provider\(s\)/);
  });
});
