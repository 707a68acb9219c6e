/**
 * The state a saved plan was made from, read straight out of the plan file: a zip archive
 * whose entry `tfstate` is the state after the plan's refresh (the data sources read at plan
 * time included). Read in-process, so the no-op plan, which runs no `tofu show -json`
 * (src/tools/tofu/tofu.ts), costs no extra process for it. Values may be secret: callers take
 * only what they need and never log the rest.
 *
 * The file's layout is OpenTofu's internal format (internal/plans/planfile): every read here
 * throws on what it does not know (an encrypted plan, no such entry, a state of another version
 * or encrypted, a resource without mode, type or name), and tofu.ts planGraph then reads the
 * plan with `tofu show -json` instead. Encrypted plans: OpenTofu's state and plan encryption
 * (https://opentofu.org/docs/language/state/encryption/, TF_ENCRYPTION) writes the whole file
 * as a JSON envelope `{"meta": ..., "encrypted_data": ...}`, not a zip.
 */
import { readFile } from 'node:fs/promises';
import { inflateRawSync } from 'node:zlib';
import { parseJson } from '../../contract/parse-json.js';
import { TOFU_STATE_VERSION, tofuStateSchema, type TofuResource } from '../../contract/graph/tofu-state.js';

const END_OF_DIRECTORY = 0x06054b50;
const DIRECTORY_ENTRY = 0x02014b50;
const LOCAL_HEADER = 0x04034b50;

/** The bytes of entry `name` of a zip archive (stored or deflated), or undefined when it has none. */
export function zipEntry(zip: Buffer, name: string): Buffer | undefined {
  // the end-of-directory record: 22 bytes, after a comment of at most 65535
  let end = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 0xffff); i--) {
    if (zip.readUInt32LE(i) === END_OF_DIRECTORY) {
      end = i;
      break;
    }
  }
  if (end < 0) throw new Error('not a zip archive (no end-of-directory record)');
  const entries = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  for (let n = 0; n < entries; n++) {
    if (zip.readUInt32LE(at) !== DIRECTORY_ENTRY) throw new Error('a zip directory entry is damaged');
    const method = zip.readUInt16LE(at + 10);
    const size = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const skip = nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    if (zip.toString('utf8', at + 46, at + 46 + nameLength) === name) {
      if (zip.readUInt32LE(local) !== LOCAL_HEADER) throw new Error(`the zip entry ${name} is damaged`);
      const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
      const data = zip.subarray(start, start + size);
      if (data.length !== size) throw new Error(`the zip entry ${name} is cut short`);
      if (method === 0) return data;
      if (method === 8) return inflateRawSync(data);
      throw new Error(`the zip entry ${name} uses compression method ${method}`);
    }
    at += 46 + skip;
  }
  return undefined;
}

/** One resource of a state file: the one model's (src/contract/graph/tofu-state.ts). */

/** A saved plan's entries that deploy reads: the plan itself (`tfplan`) and the state it was made from (`tfstate`). */
export interface SavedPlan {
  readonly file: string;
  readonly tfplan: Buffer | undefined;
  readonly state: readonly TofuResource[];
}

/** An encrypted file of OpenTofu's (plan or state): a JSON envelope, no zip and no state. */
function isEncrypted(bytes: Buffer): boolean {
  if (bytes[0] !== 0x7b) return false; // '{'
  try {
    const v: unknown = JSON.parse(bytes.toString('utf8'));
    return v !== null && typeof v === 'object' && 'encrypted_data' in v;
  } catch {
    return false;
  }
}

/** The saved plan `planFile`, read once: its `tfplan` entry and the resources of its state. Throws, naming the entry, on anything it does not know. */
export async function readSavedPlan(planFile: string): Promise<SavedPlan> {
  const zip = await readFile(planFile);
  if (isEncrypted(zip)) throw new Error('the plan file is encrypted (OpenTofu plan encryption, TF_ENCRYPTION)');
  const state = zipEntry(zip, 'tfstate');
  if (state === undefined) throw new Error('no entry tfstate');
  return { file: planFile, tfplan: zipEntry(zip, 'tfplan'), state: readStateResources(state) };
}

/** The resources of a state file (JSON, version 4), checked. */
export function readStateResources(bytes: Buffer): readonly TofuResource[] {
  if (isEncrypted(bytes)) throw new Error('entry tfstate: the state is encrypted (OpenTofu state encryption, TF_ENCRYPTION)');
  const state = parseJson(tofuStateSchema, bytes, 'entry tfstate');
  if (state.version !== TOFU_STATE_VERSION) throw new Error(`entry tfstate: state version ${state.version}, this reader knows ${TOFU_STATE_VERSION}`);
  return state.resources ?? [];
}
