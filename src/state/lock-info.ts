import { z } from 'zod';
import { describeIssues } from '../contract/parse-json.js';
import { DeployError, ExitCode } from '../errors.js';

/**
 * The lock record OpenTofu sends with LOCK and UNLOCK (statemgr.LockInfo marshalled as JSON)
 * and expects back, as the holder, in a 423/409 answer. Only `ID` is required: a
 * force-unlock sends just `{"ID": ...}`. Unknown fields are kept so the holder's record is
 * returned exactly as it was sent.
 * https://github.com/opentofu/opentofu/blob/main/internal/states/statemgr/locker.go
 */
export const LockInfoSchema = z.looseObject({
  ID: z.string().min(1).max(200),
  Operation: z.string().optional(),
  Info: z.string().optional(),
  Who: z.string().optional(),
  Version: z.string().optional(),
  Created: z.string().optional(),
  Path: z.string().optional(),
});
export type LockInfo = z.infer<typeof LockInfoSchema>;

export type LockInfoParse = { ok: true; info: LockInfo } | { ok: false; problem: string };

/** Parses a LOCK/UNLOCK body; the problem is a sentence for a 400 answer. */
export function parseLockInfo(body: Buffer): LockInfoParse {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    return { ok: false, problem: 'the body is not JSON: expected a LockInfo object with an "ID"' };
  }
  const parsed = LockInfoSchema.safeParse(json);
  if (!parsed.success) {
    return { ok: false, problem: `the body is not a LockInfo: ${describeIssues(parsed.error)}` };
  }
  return { ok: true, info: parsed.data };
}

/** One line for messages and logs: who holds a lock, since when, doing what. */
export function describeLock(info: LockInfo): string {
  const parts = [`ID ${info.ID}`];
  if (info.Who) parts.push(`held by ${info.Who}`);
  if (info.Operation) parts.push(`for ${info.Operation}`);
  if (info.Created) parts.push(`since ${info.Created}`);
  return parts.join(', ');
}

/** The lock `id` is not held where it was looked for (exit 2), naming the holder when there is one. */
export function noSuchLock(id: string, where: string, key: string | undefined, holder: LockInfo | undefined): DeployError {
  const held = holder ? `; "${key}" is locked by ID ${holder.ID}${holder.Who ? ` (${holder.Who}, since ${holder.Created})` : ''}` : '';
  return new DeployError(`no lock with ID ${id}${key ? ` on "${key}"` : ''} in ${where}${held}`, ExitCode.usage, {
    hint: '`deploy state list` shows every held lock with its ID',
  });
}
