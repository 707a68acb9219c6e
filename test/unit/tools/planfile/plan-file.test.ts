/**
 * The state inside a saved plan, read without tofu (src/tools/planfile/plan-file.ts). The archive below
 * was written by Python's zipfile: `tfplan` stored, `tfstate` deflated, as Go's archive/zip
 * (tofu) may write either. A real plan file is read by test/e2e/deploy-moved-tag.test.ts.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSavedPlan, readStateResources, zipEntry } from '../../../../src/tools/planfile/plan-file.js';

const ZIP = Buffer.from(
  'UEsDBBQAAAAAAAAAIQAmuUsYCgAAAAoAAAAGAAAAdGZwbGFucGxhbiBieXRlc1BLAwQUAAAACAAAACEAgBQ240UAAADPAAAABwAAAHRmc3RhdGWrVipKLc4vLUpOLVayiq5Wys1PSVWyUspNzEtMT01R0lEqqSwACZSkFhUlpuUX5canJJYkAsXzEnNB4hVKtbG11YPGEABQSwECFAMUAAAAAAAAACEAJrlLGAoAAAAKAAAABgAAAAAAAAAAAAAAgAEAAAAAdGZwbGFuUEsBAhQDFAAAAAgAAAAhAIAUNuNFAAAAzwAAAAcAAAAAAAAAAAAAAIABLgAAAHRmc3RhdGVQSwUGAAAAAAIAAgBpAAAAmAAAAAAA',
  'base64',
);
const RESOURCE = '{"resources":[{"mode":"managed","type":"terraform_data","name":"x"}]}';

describe('zipEntry', () => {
  it('GIVEN a stored and a deflated entry THEN it returns the bytes of each, and undefined for a name it lacks', () => {
    expect(zipEntry(ZIP, 'tfplan')?.toString()).toBe('plan bytes');
    expect(zipEntry(ZIP, 'tfstate')?.toString()).toBe(RESOURCE.repeat(3));
    expect(zipEntry(ZIP, 'tfstate-prev')).toBeUndefined();
  });

  it('GIVEN bytes that are no zip THEN it says so', () => {
    expect(() => zipEntry(Buffer.from('not a plan, just text that is long enough'), 'tfstate')).toThrow(/not a zip archive/);
  });

  it('GIVEN the archive cut short THEN it throws, never returns part of an entry', () => {
    // the end-of-directory record kept, the entries' bytes cut: each read fails somewhere
    const end = ZIP.subarray(ZIP.length - 22);
    expect(() => zipEntry(Buffer.concat([ZIP.subarray(0, 40), end]), 'tfstate')).toThrow();
    expect(() => zipEntry(ZIP.subarray(0, ZIP.length - 30), 'tfplan')).toThrow();
  });
});

describe('readSavedPlan', () => {
  it('GIVEN a plan file THEN it returns the resources of its state, and a file without one fails naming it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plan-file-'));
    try {
      // a stored-only archive with one entry `tfstate` (the deflated one above holds invalid JSON: three objects)
      const json = Buffer.from('{"version":4,"resources":[{"mode":"managed","type":"terraform_data","name":"x","instances":[]}]}');
      const name = Buffer.from('tfstate');
      const local = Buffer.alloc(30);
      local.writeUInt32LE(0x04034b50, 0);
      local.writeUInt32LE(json.length, 18);
      local.writeUInt32LE(json.length, 22);
      local.writeUInt16LE(name.length, 26);
      const central = Buffer.alloc(46);
      central.writeUInt32LE(0x02014b50, 0);
      central.writeUInt32LE(json.length, 20);
      central.writeUInt32LE(json.length, 24);
      central.writeUInt16LE(name.length, 28);
      const end = Buffer.alloc(22);
      end.writeUInt32LE(0x06054b50, 0);
      end.writeUInt16LE(1, 10);
      end.writeUInt32LE(30 + name.length + json.length, 16);
      await writeFile(join(dir, 'tfplan'), Buffer.concat([local, name, json, central, name, end]));
      expect((await readSavedPlan(join(dir, 'tfplan'))).state).toEqual([{ mode: 'managed', type: 'terraform_data', name: 'x', instances: [] }]);
      const empty = Buffer.alloc(22);
      empty.writeUInt32LE(0x06054b50, 0);
      await writeFile(join(dir, 'other'), empty);
      await expect(readSavedPlan(join(dir, 'other'))).rejects.toThrow('no entry tfstate');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('readSavedPlan: unsure (throws) rather than wrong', () => {
  it('GIVEN an encrypted plan (OpenTofu plan encryption: a JSON envelope, no zip) THEN it says the plan is encrypted', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plan-file-'));
    try {
      await writeFile(join(dir, 'tfplan'), JSON.stringify({ meta: { 'key_provider.pbkdf2.k': 'e30=' }, encrypted_data: 'AAAA', encryption_version: 'v0' }));
      await expect(readSavedPlan(join(dir, 'tfplan'))).rejects.toThrow('the plan file is encrypted (OpenTofu plan encryption, TF_ENCRYPTION)');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('readStateResources', () => {
  const state = (v: unknown) => Buffer.from(JSON.stringify(v));
  it('GIVEN a state of version 4 THEN its resources', () => {
    const r = { mode: 'data', type: 'external', name: 'd', instances: [{ attributes: { result: { a: 'b' } }, index_key: 'k' }] };
    expect(readStateResources(state({ version: 4, resources: [r] }))).toEqual([r]);
    expect(readStateResources(state({ version: 4 }))).toEqual([]);
  });

  it('GIVEN another version, an encrypted state, a resource without a field it reads, no JSON THEN it throws naming why', () => {
    expect(() => readStateResources(state({ version: 3, resources: [] }))).toThrow('entry tfstate: state version 3, this reader knows 4');
    expect(() => readStateResources(state({ resources: [] }))).toThrow(/entry tfstate: version:/);
    expect(() => readStateResources(state({ meta: {}, encrypted_data: 'AAAA', encryption_version: 'v0' }))).toThrow('entry tfstate: the state is encrypted');
    expect(() => readStateResources(state({ version: 4, resources: [{ mode: 'managed', type: 'null_resource', name: 'a' }] }))).toThrow(/entry tfstate: resources.0.instances:/);
    expect(() => readStateResources(state({ version: 4, resources: [{ mode: 'ephemeral', type: 't', name: 'a', instances: [] }] }))).toThrow(/entry tfstate: resources.0.mode:/);
    expect(() => readStateResources(Buffer.from('{"version":4,'))).toThrow(/entry tfstate: not JSON/);
  });
});
