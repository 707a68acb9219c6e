/**
 * A saved plan the in-process reader cannot read, made by the REAL OpenTofu: an encrypted plan
 * (OpenTofu's state and plan encryption configured with TF_ENCRYPTION,
 * https://opentofu.org/docs/language/state/encryption/). planGraph must fall back to `tofu show
 * -json`, say so at warn level naming why, and give the same changes, outputs and prior state
 * as the in-process reader gives for the same graph unencrypted.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LogEvent } from '../../src/log.js';
import type { TofuResource } from '../../src/contract/graph/tofu-state.js';
import { readSavedPlan } from '../../src/tools/planfile/plan-file.js';
import { readShownPriorState, planJsonSchema } from '../../src/tools/planfile/tofu-plan-json.js';
import { applyPlan, initGraph, planGraph, type TofuOptions } from '../../src/tools/tofu/tofu.js';
import { readTofuJson } from '../../src/tools/tofu/tofu-process.js';

const offline = { ...process.env, HTTPS_PROXY: 'http://127.0.0.1:9', HTTP_PROXY: 'http://127.0.0.1:9', NO_PROXY: '' };
// pbkdf2 + AES-GCM, for the state and the plan (the docs' first example); a test passphrase
const TF_ENCRYPTION = `
key_provider "pbkdf2" "test" { passphrase = "a test passphrase, not a secret" }
method "aes_gcm" "test" { keys = key_provider.pbkdf2.test }
state { method = method.aes_gcm.test }
plan { method = method.aes_gcm.test }
`;

function writeGraph(dir: string, generation: string): void {
  const graph = {
    terraform: { required_providers: { null: { source: 'hashicorp/null', version: '3.2.4' } }, backend: { local: { path: 'terraform.tfstate' } } },
    provider: { null: [{}] },
    resource: {
      null_resource: { push: { triggers: { ref: `web:${generation}`, size: '10' } }, ...(generation === '1' ? { gone: { triggers: { ref: 'old' } } } : {}) },
      terraform_data: {
        digest: { input: { digest: `sha256:${generation}`, list: ['a', 1, true] } },
        keyed: { for_each: { a: 'x', b: 'y' }, input: '${each.value}' },
      },
    },
    output: { ref: { value: `web:${generation}` }, id: { value: '${null_resource.push.id}' } },
  };
  writeFileSync(join(dir, 'cdk.tf.json'), JSON.stringify(graph, null, 2));
}

/** A state's resources as the callers read them (moved-tags.ts and the tainted marks): the rest is tofu's bookkeeping. */
function asRead(state: readonly TofuResource[]) {
  return state
    .map((r) => ({ mode: r.mode, type: r.type, name: r.name, ...(r.module ? { module: r.module } : {}), instances: (r.instances ?? []).map((i) => ({ index_key: i.index_key, status: i.status, attributes: i.attributes })) }))
    .sort((a, b) => `${a.mode}.${a.type}.${a.name}`.localeCompare(`${b.mode}.${b.type}.${b.name}`));
}

/** What of the changes does not depend on the random IDs. */
const shape = (changes: readonly { address: string; actions: readonly string[]; changedKeys?: readonly string[]; actionReason?: string | undefined }[]) =>
  changes.map((c) => ({ address: c.address, actions: c.actions, changedKeys: c.changedKeys, actionReason: c.actionReason }));

describe('an encrypted saved plan (TF_ENCRYPTION): planGraph falls back to tofu show -json, and says so', () => {
  let plain: TofuOptions;
  let encrypted: TofuOptions;
  const warned: { event: LogEvent; message: string }[] = [];
  const logger = { warn: (event: LogEvent, message: string) => warned.push({ event, message }) };

  beforeAll(async () => {
    plain = { dir: mkdtempSync(join(tmpdir(), 'plan-plain-')), env: offline, timeoutMs: 240_000 };
    encrypted = { dir: mkdtempSync(join(tmpdir(), 'plan-encrypted-')), env: { ...offline, TF_ENCRYPTION }, timeoutMs: 240_000 };
    for (const o of [plain, encrypted]) {
      writeGraph(o.dir, '1');
      await initGraph(o);
      await applyPlan({ ...o, planFile: (await planGraph({ ...o, planFile: 'first.tfplan' })).planFile });
    }
    // the encryption took: neither the state nor the plan is readable as such
    expect(readFileSync(join(encrypted.dir, 'terraform.tfstate'), 'utf8')).toContain('encrypted_data');
  });

  it('GIVEN changes THEN the same changes and outputs as the in-process reader of the plain twin, one warning naming the encryption', async () => {
    for (const o of [plain, encrypted]) writeGraph(o.dir, '2');
    warned.length = 0;
    const fromPlain = await planGraph({ ...plain, planFile: 'change.tfplan', logger });
    // the plain plan was read in-process: nothing said
    expect(warned).toEqual([]);
    const fromEncrypted = await planGraph({ ...encrypted, planFile: 'change.tfplan', logger });
    expect(readFileSync(fromEncrypted.planFile, 'utf8')).toContain('encrypted_data');
    // THEN one warning, naming why
    expect(warned).toHaveLength(1);
    expect(warned[0]!.event).toEqual({ kind: 'plan-read-fallback', planFile: fromEncrypted.planFile, reason: 'the plan file is encrypted (OpenTofu plan encryption, TF_ENCRYPTION)' });
    expect(warned[0]!.message).toBe('the saved plan could not be read in-process (the plan file is encrypted (OpenTofu plan encryption, TF_ENCRYPTION)): tofu show -json read it instead');
    // AND the same changes as the in-process reader's of the same graph
    expect(fromEncrypted.hasChanges).toBe(true);
    expect(shape(fromEncrypted.changes)).toEqual(shape(fromPlain.changes));
    expect(shape(fromEncrypted.changes)).toEqual([
      { address: 'null_resource.gone', actions: ['delete'], changedKeys: undefined, actionReason: 'delete_because_no_resource_config' },
      { address: 'null_resource.push', actions: ['delete', 'create'], changedKeys: ['ref'], actionReason: 'replace_because_cannot_update' },
      { address: 'terraform_data.digest', actions: ['update'], changedKeys: undefined, actionReason: undefined },
    ]);
    expect(fromEncrypted.outputs).toEqual({ ref: { value: 'web:2', sensitive: false }, id: { sensitive: false } });
    expect(fromEncrypted.outputs).toEqual(fromPlain.outputs);
    // AND the prior state, read from show's prior_state, as the callers read it
    const encryptedState = asRead(fromEncrypted.priorState ?? []);
    expect(encryptedState.map((r) => `${r.type}.${r.name} ${r.instances.map((i) => i.index_key ?? '-').join(',')}`)).toEqual([
      'null_resource.gone -',
      'null_resource.push -',
      'terraform_data.digest -',
      'terraform_data.keyed a,b',
    ]);
    expect(encryptedState.find((r) => r.name === 'digest')?.instances[0]?.attributes?.output).toEqual({ value: { digest: 'sha256:1', list: ['a', 1, true] }, type: ['object', { digest: 'string', list: ['tuple', ['string', 'number', 'bool']] }] });
  });

  it('GIVEN a plan without changes THEN its prior state comes from tofu show -json too, with one warning', async () => {
    for (const o of [plain, encrypted]) await applyPlan({ ...o, planFile: 'change.tfplan' });
    warned.length = 0;
    const plan = await planGraph({ ...encrypted, planFile: 'noop.tfplan', logger });
    expect(plan.hasChanges).toBe(false);
    expect(plan.changes).toEqual([]);
    expect(warned.map((w) => w.event.kind)).toEqual(['plan-read-fallback']);
    expect(asRead(plan.priorState ?? []).map((r) => `${r.type}.${r.name}`)).toEqual(['null_resource.push', 'terraform_data.digest', 'terraform_data.keyed']);
  });

  it('the prior state read from tofu show -json equals the plan file\'s tfstate read in-process (the plain twin)', async () => {
    const plan = await planGraph({ ...plain, planFile: 'compare.tfplan' });
    const shown = readShownPriorState(await readTofuJson(plain, ['show', '-no-color', '-json', plan.planFile], planJsonSchema));
    const clean = (s: readonly TofuResource[]) => asRead(s).map((r) => ({ ...r, instances: r.instances.map((i) => Object.fromEntries(Object.entries(i).filter(([, v]) => v !== undefined))) }));
    expect(clean(shown)).toEqual(clean((await readSavedPlan(plan.planFile)).state));
    expect(shown.length).toBe(3);
  });
});
