import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../../src/errors.js';
import type { Inventory } from '../../../src/tools/inventory.js';
import { runCli } from '../../support/cli.js';
import { makeTestCa } from '../../support/test-ca.js';

function exe(path: string, script: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `#!/bin/sh\n${script}\n`);
  chmodSync(path, 0o755);
}

describe('deploy doctor', () => {
  it('GIVEN nothing installed THEN it names each missing program and how to get it, and exits 3', async () => {
    const root = mkdtempSync(join(tmpdir(), 'doctor-'));
    const env = { DEPLOY_CACHE_DIR: join(root, 'cache'), PATH: join(root, 'empty-bin'), HOME: root };
    const human = await runCli(['doctor'], env);
    expect(human.code).toBe(ExitCode.tool);
    expect(human.stdout).toMatch(/^tofu +missing/m);
    expect(human.stdout).toMatch(/^skopeo +missing/m);
    expect(human.stdout).toMatch(/^kubectl +missing/m);
    expect(human.stdout).toContain('npm run tools');
    expect(human.stdout).toContain('apt-get install skopeo');
    // no mirror configured: the providers are left to an online `tofu init`, not "missing"
    expect(human.stdout).toMatch(/kubernetes +2\.38\.0 +online/);

    const json = await runCli(['doctor', '--json'], env);
    expect(json.code).toBe(ExitCode.tool);
    const inv = JSON.parse(json.stdout) as Inventory;
    expect(inv.ok).toBe(false);
    expect(inv.missing).toEqual(['tofu', 'skopeo', 'kubectl']);
  });

  it('GIVEN the stock mirror config without the providers (DEPLOY_PROVIDER_PATCHES=none) THEN each missing provider is listed', async () => {
    const root = mkdtempSync(join(tmpdir(), 'doctor-'));
    const cache = join(root, 'cache');
    mkdirSync(cache, { recursive: true });
    writeFileSync(join(cache, 'tofu.rc'), 'provider_installation {}\n');
    const bin = join(root, 'bin');
    // stand-ins that answer the version queries the way the real programs do
    exe(join(bin, 'skopeo'), 'echo "skopeo version 1.9.3"');
    exe(join(bin, 'kubectl'), 'echo \'{"clientVersion":{"gitVersion":"v1.36.3"}}\'');
    exe(join(cache, 'tofu', '1.12.6', 'tofu'), 'echo \'{"terraform_version":"1.12.6","platform":"linux_amd64","provider_selections":{}}\'');
    const hostDir = join(cache, 'mirror', 'registry.example', 'hashicorp');
    exe(join(hostDir, 'null', '3.2.4', 'linux_amd64', 'terraform-provider-null_v3.2.4'), 'exit 1');
    const r = await runCli(['doctor', '--json'], { DEPLOY_CACHE_DIR: cache, PATH: bin, HOME: root, DEPLOY_PROVIDER_PATCHES: 'none' });
    const inv = JSON.parse(r.stdout) as Inventory;
    expect(r.code).toBe(ExitCode.tool);
    expect(inv.tools.map((t) => [t.name, t.status, t.version])).toEqual([
      ['tofu', 'ok', '1.12.6'],
      ['skopeo', 'ok', '1.9.3'],
      ['kubectl', 'ok', 'v1.36.3'],
    ]);
    expect(inv.missing).toEqual(['provider kubernetes 2.38.0', 'provider random 3.7.2', 'provider external 2.3.5']);
  });

  it('GIVEN a tofu that does not run THEN it is reported broken', async () => {
    const root = mkdtempSync(join(tmpdir(), 'doctor-'));
    const bad = join(root, 'tofu');
    exe(bad, 'echo "segmentation fault" >&2; exit 139');
    const r = await runCli(['doctor', '--json'], { DEPLOY_CACHE_DIR: join(root, 'c'), DEPLOY_TOFU: bad, PATH: '', HOME: root });
    const inv = JSON.parse(r.stdout) as Inventory;
    expect(inv.tools[0]).toMatchObject({ name: 'tofu', status: 'broken', source: 'env' });
    expect(inv.tools[0]!.problem).toContain('exit code 139');
  });

  it('GIVEN K8S_REGISTRY_CA_FILE THEN the CA file is checked as a run checks it: its certificates when good, the problem (and exit 3) when not', async () => {
    const root = mkdtempSync(join(tmpdir(), 'doctor-'));
    const ca = await makeTestCa(root);
    const base = { DEPLOY_CACHE_DIR: join(root, 'c'), PATH: '', HOME: root };
    const good = await runCli(['doctor'], { ...base, K8S_REGISTRY_CA_FILE: ca.caFile });
    expect(good.stdout).toContain(`registry CA 1 certificate          ${ca.caFile} (K8S_REGISTRY_CA_FILE)`);
    const bad = join(root, 'ca.txt');
    writeFileSync(bad, 'no certificate\n');
    const json = await runCli(['doctor', '--json'], { ...base, K8S_REGISTRY_CA_FILE: bad });
    const inv = JSON.parse(json.stdout) as Inventory;
    expect(json.code).toBe(ExitCode.tool);
    expect(inv.registryCa).toMatchObject({ file: bad, status: 'broken', problem: expect.stringContaining(`K8S_REGISTRY_CA_FILE: ${bad} holds no PEM certificate`) });
    expect(inv.missing).toContain('K8S_REGISTRY_CA_FILE');
    const unset = JSON.parse((await runCli(['doctor', '--json'], base)).stdout) as Inventory;
    expect(unset.registryCa).toBeUndefined();
  });
});
