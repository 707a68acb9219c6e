/**
 * K8S_REGISTRY_CA_FILE: a registry with a private CA. The file is checked with the other
 * coordinates (exit 2 naming the variable and the file, before anything runs); the graph's
 * skopeo steps take the run's staged copy by a variable, never the path; a run without the
 * setting has the graph it had before.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveCoordinates } from '../../../src/config/coordinates.js';
import { buildTargets, loadCoordinates, parseGroupPlan } from '../../../src/config/load.js';
import { renderGraph } from '../../../src/graph/render.js';
import { stageRegistryCa } from '../../../src/workflow/target/registry-ca-dir.js';
import { ConfigError } from '../../../src/errors.js';
import { baseEnv, listTree, runCli, samplePlan, tempDir, writeJson } from '../../support/cli.js';
import { makeTestCa, type TestCa } from '../../support/test-ca.js';

let dir: string;
let cleanup: () => Promise<void>;
let ca: TestCa;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('registry-ca-'));
  ca = await makeTestCa(dir);
});
afterAll(() => cleanup());

const env = (over: NodeJS.ProcessEnv) => ({ K8S_REGISTRY: 'reg.test:5000', ...over });
function problems(over: NodeJS.ProcessEnv) {
  const r = resolveCoordinates({}, env(over), process.cwd());
  if (r.ok) throw new Error(`expected issues, got ${JSON.stringify(r.value)}`);
  return r.issues;
}
function graphOf(over: NodeJS.ProcessEnv): string {
  const plan = parseGroupPlan(JSON.stringify(samplePlan()), '/plans/group.json');
  return renderGraph(buildTargets(plan, loadCoordinates({}, env(over), process.cwd()), '/plans/group.json')[0]!);
}

describe('K8S_REGISTRY_CA_FILE', () => {
  it('GIVEN it unset or empty THEN there is no CA and the graph is the one without the setting', () => {
    for (const unset of [{}, { K8S_REGISTRY_CA_FILE: '' }]) {
      const r = resolveCoordinates({}, env(unset), process.cwd());
      expect(r.ok && 'registryCaFile' in r.value).toBe(false);
    }
    const graph = graphOf({});
    expect(graphOf({ K8S_REGISTRY_CA_FILE: '' })).toBe(graph);
    expect(graph).not.toContain('cert-dir');
  });

  it("GIVEN a CA file (relative to the working directory) THEN it is taken absolute, and the graph's skopeo steps take the staged copy by variable", () => {
    const r = resolveCoordinates({}, env({ K8S_REGISTRY_CA_FILE: relative(process.cwd(), ca.caFile) }), process.cwd());
    expect(r).toMatchObject({ ok: true, value: { registryCaFile: ca.caFile, registryTlsVerify: true } });
    const graph = graphOf({ K8S_REGISTRY_CA_FILE: ca.caFile });
    expect(graph).not.toContain(dir);
    const doc = JSON.parse(graph);
    const push = Object.values<any>(doc.resource.null_resource).find((n) => n['//'].metadata.path.endsWith('/push'));
    expect(push.provisioner[0]['local-exec'].command).toContain('--dest-cert-dir "$${DEPLOY_REGISTRY_CERT_DIR:?');
    const digest = Object.values<any>(doc.data.external)[0];
    expect(digest.program[2]).toContain('inspect --cert-dir "$${DEPLOY_REGISTRY_CERT_DIR:?');
  });

  it('GIVEN a missing file, a directory, a file without a PEM certificate or with a broken one THEN each is named with the variable and the file', async () => {
    await writeFile(join(dir, 'notpem.txt'), 'just words\n');
    await writeFile(join(dir, 'broken.pem'), '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    await mkdir(join(dir, 'adir'), { recursive: true });
    const cases: [string, string][] = [
      [join(dir, 'absent.pem'), 'does not exist'],
      [join(dir, 'adir'), 'is a directory, not a file'],
      [join(dir, 'notpem.txt'), 'holds no PEM certificate (no -----BEGIN CERTIFICATE----- block)'],
      [join(dir, 'broken.pem'), 'has a certificate that does not parse (block 1 of 1'],
    ];
    for (const [file, words] of cases) {
      expect(problems({ K8S_REGISTRY_CA_FILE: file })).toEqual([{ where: 'K8S_REGISTRY_CA_FILE', message: expect.stringContaining(`${file} ${words}`) }]);
    }
  });

  it('GIVEN it with K8S_REGISTRY_TLS_VERIFY=false THEN both settings are named: one is a mistake', () => {
    expect(problems({ K8S_REGISTRY_CA_FILE: ca.caFile, K8S_REGISTRY_TLS_VERIFY: 'false' })).toEqual([
      { where: 'K8S_REGISTRY_CA_FILE', message: `${ca.caFile} is set while K8S_REGISTRY_TLS_VERIFY=false turns the registry's certificate checks off: unset one of the two` },
    ]);
  });

  it('GIVEN a bad CA file WHEN deploy synth runs THEN exit 2 names the variable and the file, with every other problem, and nothing is written', async () => {
    const plan = await writeJson(join(dir, 'group.json'), samplePlan());
    const out = join(dir, 'out');
    const r = await runCli(['synth', '--plan', plan, '--out', out], { ...baseEnv, K8S_REGISTRY_CA_FILE: join(dir, 'notpem.txt'), K8S_STATE_SIZE: 'big' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`K8S_REGISTRY_CA_FILE: ${join(dir, 'notpem.txt')} holds no PEM certificate`);
    expect(r.stderr).toContain('K8S_STATE_SIZE (or --state-size): must be a Kubernetes quantity');
    expect(await listTree(out)).toEqual([]);
  });
});

describe("the run's copy of the CA (DEPLOY_REGISTRY_CERT_DIR)", () => {
  it("GIVEN a CA file with a private key beside the certificate THEN the run's directory holds only ca.crt with the certificate", async () => {
    const mixed = join(dir, 'mixed.pem');
    const key = await readFile(ca.keyFile, 'utf8');
    const cert = await readFile(ca.caFile, 'utf8');
    await writeFile(mixed, `${key}${cert}`);
    const runDir = join(dir, 'run');
    const staged = await stageRegistryCa(mixed, runDir);
    expect(staged).toEqual({ DEPLOY_REGISTRY_CERT_DIR: join(runDir, 'registry-certs') });
    expect(await listTree(join(runDir, 'registry-certs'))).toEqual(['ca.crt']);
    const copy = await readFile(join(runDir, 'registry-certs', 'ca.crt'), 'utf8');
    expect(copy.trim()).toBe(cert.trim());
    expect(copy).not.toContain('PRIVATE KEY');
    expect(await stageRegistryCa(undefined, runDir)).toEqual({});
  });

  it('GIVEN the file gone since the coordinates were checked THEN a ConfigError names the variable', async () => {
    await expect(stageRegistryCa(join(dir, 'absent.pem'), join(dir, 'run2'))).rejects.toThrow(ConfigError);
  });
});
