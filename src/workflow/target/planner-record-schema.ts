/**
 * What a planner record holds (planner-record.ts writes it, the replay test reads it), and how
 * a value of the planner becomes JSON and back without losing what JSON cannot say: a Map, a
 * Set, a property that is there with the value undefined (against one that is absent), an
 * error (the refusals). Functions are left out (TargetObjects.deployments: the executor's
 * client, never read by the planner). Nothing secret is written: a field whose name says it
 * holds a credential, the value of an output marked sensitive, and a string that reads as a
 * bearer token, a JWT, a private key or a TF_HTTP_* assignment are written as REDACTED.
 *
 * The schemas check the decoded values field by field (strict objects: a field the planner's
 * types gained that a record lacks, or the reverse, fails the read and says "record again").
 */
import { z } from 'zod';
import { graphDocumentSchema } from '../../contract/graph/graph-document.js';
import { tofuResourceSchema } from '../../contract/graph/tofu-state.js';
import { DeployError, ExitCode } from '../../errors.js';
import type { FieldsTrie } from '../drift/field-paths.js';

// ---- the codec: a value of the planner <-> JSON ----

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** What a secret is written as. */
export const REDACTED = '<redacted>';

/** Names of fields that hold credentials (compared lowercase, without a managedFields `f:`). */
const SECRET_NAMES = new Set(['password', 'passwd', 'token', 'secret', 'apikey', 'api_key', 'api-key', 'authorization', 'bearer', 'client-key-data', 'private-key', 'privatekey', 'credentials', 'access_token', 'refresh_token', 'id-token', 'id_token']);
const SECRET_NAME = /^tf_http_|[_-](password|token|secret)$/;
/** Strings that are credentials whatever field holds them. */
const SECRET_TEXT = [/^\s*Bearer\s+\S/i, /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\./, /\bTF_HTTP_[A-Z_]+=/, /-----BEGIN [A-Z ]*PRIVATE KEY-----/];

export function secretName(key: string): boolean {
  const k = key.replace(/^f:/, '').toLowerCase();
  return SECRET_NAMES.has(k) || SECRET_NAME.test(k);
}

function secretText(s: string): boolean {
  return SECRET_TEXT.some((re) => re.test(s));
}

/** The tags of what JSON cannot say; an object with one of these as its only key is a tagged value. */
const TAGS = ['$map', '$set', '$undefined', '$error'] as const;

/**
 * `value` as JSON: Maps, Sets, undefined and errors tagged, functions left out, secrets
 * redacted. Throws on what it cannot write faithfully (a class instance, a number JSON has
 * not, a key that begins with `$`), naming where it is.
 */
export function encodeValue(value: unknown, where = '(root)'): Json {
  if (value === undefined) return { $undefined: true };
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'string') return secretText(value) ? REDACTED : value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`${where}: ${value} is no JSON number`);
    return value;
  }
  if (Array.isArray(value)) return value.map((v, i) => encodeValue(v, `${where}[${i}]`));
  if (value instanceof Map) return { $map: [...value].map(([k, v], i) => [encodeValue(k, `${where}.key${i}`), encodeValue(v, `${where}[${String(k)}]`)]) };
  if (value instanceof Set) return { $set: [...value].map((v, i) => encodeValue(v, `${where}{${i}}`)) };
  if (value instanceof Error) {
    const e: { [k: string]: Json } = { name: value.name, message: encodeValue(value.message, `${where}.message`) };
    if (value instanceof DeployError) Object.assign(e, { exitCode: value.exitCode, hint: encodeValue(value.hint, `${where}.hint`) });
    return { $error: e };
  }
  if (typeof value !== 'object') throw new Error(`${where}: a ${typeof value} is not written`);
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) throw new Error(`${where}: an instance of ${(value as { constructor?: { name?: string } }).constructor?.name ?? 'a class'} is not written`);
  const sensitive = (value as { sensitive?: unknown }).sensitive === true;
  const out: { [k: string]: Json } = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === 'function') continue;
    if (k.startsWith('$')) throw new Error(`${where}.${k}: a key that begins with $ is not written (the tags use it)`);
    out[k] = secretName(k) || (sensitive && k === 'value') ? REDACTED : encodeValue(v, `${where}.${k}`);
  }
  return out;
}

/** The value `encodeValue` wrote. */
export function decodeValue(json: Json): unknown {
  if (json === null || typeof json !== 'object') return json;
  if (Array.isArray(json)) return json.map(decodeValue);
  const keys = Object.keys(json);
  const tag = keys.length === 1 ? TAGS.find((t) => t === keys[0]) : undefined;
  if (tag === '$undefined') return undefined;
  if (tag === '$map') return new Map(pairsOf(json.$map).map(([k, v]) => [decodeValue(k), decodeValue(v)]));
  if (tag === '$set') return new Set(arrayOf(json.$set).map(decodeValue));
  if (tag === '$error') return errorOf(json.$error);
  return Object.fromEntries(keys.map((k) => [k, decodeValue(json[k]!)]));
}

function arrayOf(json: Json | undefined): Json[] {
  if (!Array.isArray(json)) throw new Error('a tagged $map or $set holds no list');
  return json;
}

function pairsOf(json: Json | undefined): [Json, Json][] {
  return arrayOf(json).map((p) => {
    if (!Array.isArray(p) || p.length !== 2) throw new Error('a $map entry is not a [key, value] pair');
    return [p[0]!, p[1]!];
  });
}

const errorSchema = z.strictObject({ name: z.string(), message: z.string(), exitCode: z.literal(Object.values(ExitCode)).optional(), hint: z.unknown().optional() });

function errorOf(json: Json | undefined): Error {
  const e = errorSchema.parse(decodeValue(json ?? null));
  if (e.exitCode === undefined) return Object.assign(new Error(e.message), { name: e.name });
  const hint = typeof e.hint === 'string' ? e.hint : undefined;
  return Object.assign(new DeployError(e.message, e.exitCode, { hint }), { name: e.name });
}

export const jsonSchema: z.ZodType<Json> = z.lazy(() => z.union([z.null(), z.boolean(), z.number(), z.string(), z.array(jsonSchema), z.record(z.string(), jsonSchema)]));

/** A schema over the decoded value of JSON that encodeValue wrote. */
export function decoded<S extends z.ZodType>(schema: S) {
  return jsonSchema.transform(decodeValue).pipe(schema);
}

// ---- the planner's inputs, as decoded ----

/** A key that is always there and may hold undefined (`T | undefined`, not `T?`). */
const orUndefined = <S extends z.ZodType>(s: S) => z.union([s, z.undefined()]);

export const modeSchema = z.enum(['plan', 'apply', 'destroy']);

const durationSchema = z.strictObject({ seconds: z.number().int().nonnegative(), ms: z.number(), text: z.string(), kind: z.literal('duration') });

export const targetModelSchema = z.strictObject({
  group: z.string(),
  target: z.string(),
  namespace: z.string(),
  stateKey: z.string(),
  registry: z.string(),
  registryTlsVerify: z.boolean(),
  registryCaFile: z.string().optional(),
  runtimeClass: z.string(),
  storageClass: orUndefined(z.string()),
  stateSize: z.string(),
  rolloutTimeout: durationSchema,
  stopTimeout: durationSchema,
  probePeriod: durationSchema,
  submissionId: orUndefined(z.string()),
  nodes: z.array(
    z.strictObject({
      name: z.string(),
      archive: z.string(),
      tag: z.string(),
      repository: z.string(),
      tagRef: z.string(),
      build: z.strictObject({ argv: z.array(z.string()), dir: z.string() }).optional(),
      after: z.array(z.string()).optional(),
    }),
  ),
  waveSize: z.number().int().optional(),
  soak: durationSchema.optional(),
  onFailure: z.literal('group').optional(),
  degrade: z.array(z.strictObject({ node: z.string(), kind: z.enum(['persistent-path-outside-var-lib', 'host-firewall-sources']), message: z.string() })),
  spire: z.strictObject({ node: z.string(), sshUser: z.string(), hostKey: z.string(), sshOptions: z.array(z.string()), apiServer: orUndefined(z.string()), tokenSeconds: z.number().int() }).optional(),
  namespaceManagedBy: z.literal('admin').optional(),
});

const fieldsTrieSchema: z.ZodType<FieldsTrie> = z.lazy(() => z.record(z.string(), fieldsTrieSchema));

const managedObjectSchema = z.looseObject({
  metadata: z
    .looseObject({
      name: z.string().optional(),
      resourceVersion: z.string().optional(),
      managedFields: z
        .array(z.looseObject({ manager: z.string().optional(), operation: z.string().optional(), subresource: z.string().optional(), time: z.string().optional(), fieldsV1: fieldsTrieSchema.optional() }))
        .nullable()
        .optional(),
    })
    .optional(),
});

const outputsSchema = z.record(z.string(), z.looseObject({ value: z.unknown() }));

const stateViewSchema = z.strictObject({ lineage: z.string(), serial: z.number().int(), outputs: outputsSchema, resources: z.array(tofuResourceSchema), untrusted: z.string().optional() });

/** What the planner reads of the target's objects (SeenObjects), or why they were not read. */
export const seenSchema = z.union([
  z.string(),
  z.strictObject({
    objects: z.array(z.strictObject({ kind: z.string(), object: managedObjectSchema })),
    state: orUndefined(stateViewSchema),
    claims: z.array(z.unknown()).optional(),
    volumes: z.union([z.array(z.unknown()), z.string()]).optional(),
  }),
]);

export const handEditSchema = z.strictObject({
  kind: z.string(),
  name: z.string(),
  node: z.string().optional(),
  field: z.string(),
  writer: z.string(),
  action: z.enum(['remove', 'set-back', 'keep']),
  why: z.string().optional(),
  pointer: z.string().optional(),
  inTemplate: z.boolean(),
});

export const claimRiskSchema = z.strictObject({
  node: z.string(),
  claim: z.string(),
  dangers: z.array(z.enum(['deleting', 'gone', 'lost', 'volume-released', 'volume-failed', 'volume-deleting'])),
  since: orUndefined(z.string()),
  volume: orUndefined(
    z.strictObject({ name: z.string(), phase: orUndefined(z.string()), reclaimPolicy: orUndefined(z.string()), since: orUndefined(z.string()), message: orUndefined(z.string()) }),
  ),
  missingVolume: orUndefined(z.string()),
  volumesUnread: orUndefined(z.string()),
  inCluster: z.boolean(),
});

const movedTagsSchema = z.map(z.string(), z.strictObject({ recorded: z.string(), current: z.string() }));

export const fingerprintSchema = z.strictObject({
  inputs: z.string(),
  graph: z.strictObject({ rest: z.string(), resources: z.record(z.string(), z.string()) }),
  lineage: z.string(),
  serial: z.number().int(),
  objects: z.record(z.string(), z.string()),
  foreignWriters: z.array(z.string()),
});

const scopedVerdictSchema = z.strictObject({
  kind: z.literal('scoped'),
  nodes: z.array(z.string()),
  targets: z.array(z.string()),
  movedTags: movedTagsSchema,
  outputs: outputsSchema,
  refresh: z.boolean(),
  sentence: z.string(),
  fingerprint: fingerprintSchema,
});

export const verdictSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('verified'), movedTags: movedTagsSchema, outputs: outputsSchema, sentence: z.string() }),
  scopedVerdictSchema,
  z.strictObject({ kind: z.literal('full'), reason: z.string(), fingerprint: fingerprintSchema.optional() }),
]);

export { graphDocumentSchema };

export const manifestsSchema = z.map(z.string(), z.unknown());

const templateScalar = z.union([z.number(), z.boolean(), z.null()]);

/** What the planner reads of tofu's plan (PlanResult without `summary` and `warnings`, which it never reads). */
export const planReadSchema = z.strictObject({
  hasChanges: z.boolean(),
  planFile: z.string(),
  changes: z.array(
    z.strictObject({
      address: z.string(),
      mode: z.string(),
      type: z.string(),
      name: z.string(),
      actions: z.array(z.string()),
      actionReason: orUndefined(z.string()),
      wasTainted: z.boolean().optional(),
      changedKeys: z.array(z.string()).optional(),
      replacePaths: z.array(z.string()).optional(),
      templateChanges: z.array(z.strictObject({ path: z.string(), before: templateScalar.optional(), after: templateScalar.optional(), afterApply: z.literal(true).optional() })).optional(),
      changedAttributes: z.array(z.string()).optional(),
    }),
  ),
  outputs: z.record(z.string(), z.strictObject({ value: z.unknown().optional(), sensitive: z.boolean() })).optional(),
  priorState: z.array(tofuResourceSchema).optional(),
});

/**
 * A list of hand edits, each one either the same object as an item of another list (`ref`: its
 * index) or one of its own: the planner tells edits apart by identity (`undone.has(e)`), so a
 * record keeps which ones are the same.
 */
export const editRefsSchema = z.array(z.union([z.strictObject({ ref: z.number().int().nonnegative() }), z.strictObject({ value: handEditSchema })]));
export type EditRefs = z.output<typeof editRefsSchema>;

/** `items` as refs into `pool` where they are its items (identity), else as values. */
export function editRefs<T>(pool: readonly T[], items: Iterable<T>): ({ ref: number } | { value: T })[] {
  return [...items].map((e) => {
    const i = pool.indexOf(e);
    return i >= 0 ? { ref: i } : { value: e };
  });
}

/** The items `editRefs` wrote, the refs taken from `pool`. */
export function fromEditRefs<T>(pool: readonly T[], refs: readonly ({ ref: number } | { value: T })[]): T[] {
  return refs.map((r) => {
    if (!('ref' in r)) return r.value;
    const item = pool[r.ref];
    if (item === undefined) throw new Error(`a ref to item ${r.ref} of a list of ${pool.length}`);
    return item;
  });
}

/** PlanForTofu as written: `undone` as refs into `edits`. */
export const planForTofuSchema = z
  .strictObject({
    path: z.enum(['scoped', 'full']),
    mode: modeSchema,
    lines: z.array(z.string()),
    scoped: orUndefined(scopedVerdictSchema),
    fingerprintBefore: orUndefined(fingerprintSchema),
    // (absent in a record made before it, and when there is nothing to say)
    noFingerprint: z.string().optional(),
    edits: z.array(handEditSchema),
    risks: z.array(claimRiskSchema),
    claims: z.strictObject({
      destroy: z.boolean(),
      allowed: z.set(z.string()),
      risks: z.array(claimRiskSchema).optional(),
      claimAddresses: z.map(z.string(), z.string()).optional(),
    }),
    ownershipStep: orUndefined(z.strictObject({ fingerprintAgain: z.boolean() })),
    undone: editRefsSchema,
    submission: orUndefined(z.strictObject({ outputs: orUndefined(outputsSchema) })),
    tofu: z.discriminatedUnion('destroy', [
      z.strictObject({ destroy: z.literal(true), line: z.string(), verb: z.string() }),
      z.strictObject({
        destroy: z.literal(false),
        line: z.string(),
        verb: z.string(),
        replaceRollouts: z.array(z.string()),
        replaceClaims: z.array(z.string()),
        targets: orUndefined(z.array(z.string())),
        refresh: z.boolean(),
      }),
    ]),
  })
  .transform((p) => ({ ...p, undone: new Set(fromEditRefs(p.edits, p.undone)) }));
