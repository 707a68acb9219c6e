/**
 * The target's state as the verified no-op check (noop/verdict.ts) and the hand edits
 * (undo-hand-edits.ts) read it: its lineage, serial and outputs, and of its resources only what
 * those readers take (READ_ATTRIBUTES). Kept on this machine by the state's ETag.
 *
 * Why kept: tofu's state is large (every resource's transitive dependencies; before provider
 * patch 0004 also each kubernetes_manifest's whole typed object): 23 MB for a 200-node group,
 * where the readers use about 1 MB. Fetching,
 * hashing and parsing it was about a second of that group's verified no-op plan. The backend
 * names each version by its sha256 (ETag, src/state/server/state-routes.ts); this machine keeps the view
 * of the last version it read (`<DEPLOY_STATE_DIR>/noop/<state key>.state-view.json`) and asks
 * for the state with `If-None-Match`: a 304 means the version is the one the view was made of.
 * Only an ETag that is a sha256 is kept (another backend's weak or opaque tags are not trusted);
 * a view kept for another backend (another address; the embedded one of another state
 * directory), or that does not read back, is not used; anything
 * else is a plain GET, as before.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { TargetModel } from '../../config/target-model.js';
import { describeIssues } from '../../contract/parse-json.js';
import { TOFU_STATE_VERSION, tofuResourceSchema, tofuStateSchema, type TofuResource } from '../../contract/graph/tofu-state.js';
import { stateDir } from '../../paths.js';
import type { TargetBackend } from '../../state/embedded.js';

export interface StateView {
  readonly lineage: string;
  readonly serial: number;
  readonly outputs: Record<string, { value: unknown }>;
  /** every resource with its instances, whose attributes are only those of READ_ATTRIBUTES (all of a typed object's) */
  readonly resources: readonly TofuResource[];
  /**
   * Why the verified no-op check must not trust this state (not format version 4, encrypted
   * with OpenTofu's state encryption, no lineage or serial): it then runs the full plan. The
   * hand edits read what they can (its resources).
   */
  readonly untrusted?: string;
}

/**
 * The attributes of a resource type that the view's readers take; every other attribute is
 * left out of the view. A reader of another attribute must be added here.
 *   - kubernetes_manifest `manifest`: the Deployment as last applied (undo-hand-edits.ts appliedManifests);
 *   - terraform_data `output`: the digest a push recorded (moved-tags.ts recordedPushDigests);
 *   - every attribute of the typed kubernetes objects (`kubernetes_*` but the manifest, managed:
 *     the namespace, the claims, the service accounts, the NetworkPolicy; a few KB each): the
 *     object as the last apply left it, which a field another writer holds is compared with
 *     (typed-drift.ts typedAppliedAttributes, hand-edits.ts holdsAppliedAttribute) and tofu's
 *     refreshed object is compared with (typed-drift.ts typedDriftEdits). Without them the
 *     planner took a value set back to the applied one for a hand edit for good (issue 45, seed
 *     562543228 round 131) and a change of the graph for a hand edit.
 */
const READ_ATTRIBUTES: Readonly<Record<string, readonly string[]>> = {
  kubernetes_manifest: ['manifest'],
  terraform_data: ['output'],
};
const ALL_ATTRIBUTES = (r: TofuResource): boolean => r.mode === 'managed' && r.type.startsWith('kubernetes_') && !(r.type in READ_ATTRIBUTES);

/** A state document as the check reads it (the model of src/contract/graph/tofu-state.ts), and why it must not trust it, if so. */
export function stateView(text: string): StateView {
  const distrust = (untrusted: string): StateView => ({ lineage: '', serial: -1, outputs: {}, resources: [], untrusted });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return distrust('the state is not JSON');
  }
  if (json !== null && typeof json === 'object' && 'encrypted_data' in json) return distrust("the state is encrypted (OpenTofu's state encryption): only tofu can read it");
  const parsed = tofuStateSchema.safeParse(json);
  if (!parsed.success) return distrust(`the state is not an OpenTofu state document (${describeIssues(parsed.error)})`);
  const doc = parsed.data;
  const lineage = doc.lineage ?? '';
  const serial = doc.serial ?? -1;
  const untrusted =
    doc.version !== TOFU_STATE_VERSION
      ? `the state has format version ${doc.version}, not ${TOFU_STATE_VERSION}`
      : lineage === '' || serial < 0
        ? 'the state has no lineage or serial'
        : doc.resources === undefined
          ? 'the state has no resources list'
          : undefined;
  return { lineage, serial, outputs: doc.outputs ?? {}, resources: (doc.resources ?? []).map(readPart), ...(untrusted !== undefined ? { untrusted } : {}) };
}

/** A resource with only the attributes its readers take (READ_ATTRIBUTES). */
function readPart(r: TofuResource): TofuResource {
  const all = ALL_ATTRIBUTES(r);
  const kept = READ_ATTRIBUTES[r.type] ?? [];
  return {
    ...(r.module !== undefined ? { module: r.module } : {}),
    mode: r.mode,
    type: r.type,
    name: r.name,
    instances: r.instances.map((i) => ({
      ...(i.index_key !== undefined ? { index_key: i.index_key } : {}),
      ...(i.status !== undefined ? { status: i.status } : {}),
      attributes: all ? (i.attributes ?? {}) : Object.fromEntries(kept.filter((k) => i.attributes !== undefined && k in i.attributes).map((k) => [k, i.attributes![k]])),
    })),
  };
}

export interface StateReadContext {
  readonly model: Pick<TargetModel, 'stateKey'>;
  readonly env: NodeJS.ProcessEnv;
  /** `embedded`: the backend this process serves from DEPLOY_STATE_DIR (its address, a loopback port, differs each run) */
  readonly backend: TargetBackend;
  readonly signal: AbortSignal;
}

/** Which backend a view was read from: the embedded one of this state directory, or the address. */
function backendOf(ctx: StateReadContext): string {
  return ctx.backend.embedded ? `embedded ${stateDir(ctx.env)}` : ctx.backend.http.address;
}

/** A sha256 as the backend's ETag (state-routes.ts): the only tag a view is kept under. */
const SHA256_ETAG = /^"[0-9a-f]{64}"$/;

/**
 * The kept view's format: a view kept by a version of deploy that read other attributes
 * (READ_ATTRIBUTES) is not used. 2: the typed objects' attributes kept.
 */
const KEPT_VIEW_FORMAT = 2;
const keptViewSchema = z.object({
  format: z.literal(KEPT_VIEW_FORMAT),
  backend: z.string(),
  etag: z.string().regex(SHA256_ETAG),
  view: z.object({
    lineage: z.string(),
    serial: z.number().int(),
    outputs: z.record(z.string(), z.looseObject({ value: z.unknown() })),
    resources: z.array(tofuResourceSchema),
    untrusted: z.string().optional(),
  }),
});
interface KeptView {
  readonly format: typeof KEPT_VIEW_FORMAT;
  readonly backend: string;
  readonly etag: string;
  readonly view: StateView;
}

export function keptViewFile(ctx: Pick<StateReadContext, 'env' | 'model'>): string {
  return join(stateDir(ctx.env), 'noop', `${ctx.model.stateKey}.state-view.json`);
}

/** The target's state from its backend (undefined: none yet), through the view kept on this machine when it is still the state's. */
export async function readState(ctx: StateReadContext): Promise<StateView | undefined> {
  const { backendRequest, httpFailure } = await import('../../state/source/http-client.js');
  const { url, username, password } = ctx.backend.http;
  const kept = await readKeptView(ctx);
  const res = await backendRequest('GET', url, {
    username,
    password,
    signal: ctx.signal,
    ...(kept !== undefined ? { headers: { 'If-None-Match': kept.etag } } : {}),
  });
  if (res.status === 304 && kept !== undefined && res.headers.get('etag') === kept.etag) return kept.view;
  if (res.status === 204 || res.status === 404) return undefined;
  if (res.status !== 200) throw await httpFailure('GET', url, res);
  const bytes = Buffer.from(await res.arrayBuffer());
  const text = bytes.toString('utf8');
  if (text.trim() === '') return undefined;
  const view = stateView(text);
  const etag = res.headers.get('etag');
  // the view is kept only under the sha256 of the very bytes it was made of
  if (etag !== null && SHA256_ETAG.test(etag) && etag === `"${createHash('sha256').update(bytes).digest('hex')}"`) await keepView(ctx, { format: KEPT_VIEW_FORMAT, backend: backendOf(ctx), etag, view });
  return view;
}

async function readKeptView(ctx: StateReadContext): Promise<KeptView | undefined> {
  const text = await readFile(keptViewFile(ctx), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const parsed = keptViewSchema.safeParse(JSON.parse(text));
    return parsed.success && parsed.data.backend === backendOf(ctx) ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Writes the view (a failure to write is no failure of the read: the next read is a plain GET). */
async function keepView(ctx: StateReadContext, kept: KeptView): Promise<void> {
  const file = keptViewFile(ctx);
  try {
    await mkdir(join(file, '..'), { recursive: true });
    await writeFile(`${file}.${process.pid}.tmp`, JSON.stringify(kept));
    await rename(`${file}.${process.pid}.tmp`, file);
  } catch {
    // read-only state directory: the view is not kept
  }
}
