/**
 * The record of a target's verified state on this machine (`<DEPLOY_STATE_DIR>/noop/<state
 * key>.json`): the fingerprint of a plan that found no changes, or of an apply that ended well.
 *
 * Why the record is safe: a plan's record holds the fingerprint taken before its refresh, so a
 * change made while tofu ran differs from it next time. An apply's record is taken after the
 * rollout; it is written only when every writer of each object's fields is one of deploy's
 * own (the graph's field managers, the provider's typed resources, the controllers) or was
 * there already, with the same time, before the plan, so that a hand edit in the seconds after
 * the apply cannot be recorded as verified. (managedFields times have a second's precision: a
 * second write by the same foreign writer within the second of its first is not told apart.)
 */
import { z } from 'zod';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stateDir } from '../../paths.js';
import type { NoopCheckContext } from './check-context.js';
import type { TargetFingerprint } from './fingerprint.js';

/** 2: the inputs hold the resolved cluster identity (src/kube/kubeconfig.ts), not the kubeconfig's bytes. */
const RECORD_VERSION = 2;

interface NoopRecord extends Omit<TargetFingerprint, 'foreignWriters'> {
  readonly version: number;
  readonly recordedAt: string;
  readonly recordedBy: 'plan' | 'apply';
}

/** A record as read back (NoopRecord): checked whole, so the verdict compares typed values. */
const noopRecordSchema = z.object({
  version: z.number(),
  recordedAt: z.string(),
  recordedBy: z.enum(['plan', 'apply']),
  inputs: z.string(),
  graph: z.object({ rest: z.string(), resources: z.record(z.string(), z.string()) }),
  lineage: z.string(),
  serial: z.number(),
  objects: z.record(z.string(), z.string()),
}) satisfies z.ZodType<NoopRecord>;

function recordFile(ctx: Pick<NoopCheckContext, 'env' | 'model'>): string {
  return join(stateDir(ctx.env), 'noop', `${ctx.model.stateKey}.json`);
}

/**
 * Keeps `fingerprint` as the verified state of the target. An apply's fingerprint is kept only when each
 * foreign writer of its objects was already there, with the same time, in `before` (the fingerprint
 * taken before the plan): a writer that is new or wrote again since may have changed a field
 * after tofu read it (see the module comment); and when the caller found nothing written during
 * the run (`stoppedAlready`: hand edits in the objects as read after the apply, objects the apply
 * did not change that differ from `before`). Returns what stopped it.
 */
export async function recordNoop(ctx: Pick<NoopCheckContext, 'env' | 'model'>, fingerprint: TargetFingerprint, by: 'plan' | 'apply', before?: TargetFingerprint, stoppedAlready: readonly string[] = []): Promise<readonly string[]> {
  const known = new Set(before?.foreignWriters ?? []);
  const since = [...stoppedAlready, ...(by === 'apply' ? fingerprint.foreignWriters.filter((w) => !known.has(w)) : [])];
  if (since.length > 0) {
    await forgetNoop(ctx);
    return since;
  }
  const { foreignWriters: _, ...kept } = fingerprint;
  const record: NoopRecord = { version: RECORD_VERSION, recordedAt: new Date().toISOString(), recordedBy: by, ...kept };
  const file = recordFile(ctx);
  await mkdir(join(file, '..'), { recursive: true });
  await writeFile(`${file}.tmp`, JSON.stringify(record, null, 1) + '\n');
  await rename(`${file}.tmp`, file);
  return [];
}

/** Drops the record (an apply is about to change the target). */
export async function forgetNoop(ctx: Pick<NoopCheckContext, 'env' | 'model'>): Promise<void> {
  await rm(recordFile(ctx), { force: true });
}

export async function readRecord(ctx: NoopCheckContext): Promise<NoopRecord | undefined> {
  const text = await readFile(recordFile(ctx), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    // an old (another version) or damaged record costs a full plan, never a wrong verdict
    const r = noopRecordSchema.safeParse(JSON.parse(text));
    return r.success && r.data.version === RECORD_VERSION ? r.data : undefined;
  } catch {
    return undefined;
  }
}

/** The line a run says when it keeps no record: the next plan is a full one, and why. */
export function notRecordedLine(why: string): string {
  return `not recorded as verified (the next plan is a full one): ${why}`;
}

/** The first three of `xs` joined by `sep`, and how many more. */
export function firstFew(xs: readonly string[], sep: string): string {
  return `${xs.slice(0, 3).join(sep)}${xs.length > 3 ? `${sep}and ${xs.length - 3} more` : ''}`;
}
