import type { StateHeader } from './state-document.js';

/** The stored version an update is judged against. */
export interface CurrentVersion {
  readonly header: StateHeader;
  readonly sha256: string;
}

export type UpdateDecision =
  /** A new version: store it. */
  | { kind: 'store' }
  /** The same bytes as the stored version (a retried POST): answer success, store nothing. */
  | { kind: 'identical' }
  /** Refused: storing it would lose or fork state. */
  | { kind: 'refuse'; reason: string };

/**
 * Whether an update may replace the current version. State never goes backwards
 * (DESIGN.md law 7): a lower serial, the same serial with other bytes, or another lineage
 * over a non-empty state would each throw away what the current version records.
 * Pure: no storage, no clock.
 */
export function decideUpdate(current: CurrentVersion | undefined, incoming: StateHeader, incomingSha256: string): UpdateDecision {
  if (!current) return { kind: 'store' };
  const cur = current.header;
  if (incoming.lineage !== cur.lineage) {
    if (cur.empty) return { kind: 'store' };
    return {
      kind: 'refuse',
      reason: `lineage ${incoming.lineage} differs from the stored state's lineage ${cur.lineage} (serial ${cur.serial}, not empty): this is another state, refusing to replace it`,
    };
  }
  if (incoming.serial < cur.serial) {
    return { kind: 'refuse', reason: `serial ${incoming.serial} is lower than the stored serial ${cur.serial}: state never goes backwards` };
  }
  if (incoming.serial === cur.serial) {
    if (incomingSha256 === current.sha256) return { kind: 'identical' };
    return { kind: 'refuse', reason: `serial ${incoming.serial} is already stored with other content: a changed state needs a higher serial` };
  }
  return { kind: 'store' };
}
