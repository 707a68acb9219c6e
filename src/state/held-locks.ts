/**
 * The locks a run holds right now, each with the command that frees it. A run that must leave
 * at once (a second Ctrl-C: src/cli/shutdown.ts) cannot release them any more; it names each
 * one instead, so that the operator frees exactly those and no other run's.
 */

/** One lock held by this run. */
export interface HeldLock {
  /** The state it is on. */
  readonly key: string;
  /** The lock's ID. */
  readonly id: string;
  /** Where: the data directory or the backend's address. */
  readonly where: string;
  /** The exact command that frees it (`deploy state unlock ...`). */
  readonly free: string;
}

export class HeldLocks {
  private readonly held = new Map<number, HeldLock>();
  private next = 0;
  /**
   * True once the verb has said that it records every lock it takes here (the state verbs do):
   * then an empty list means that no lock is held. Otherwise an empty list proves nothing.
   */
  exact = false;

  /** Records a lock just taken; the returned function forgets it once it is released. */
  hold(lock: HeldLock): () => void {
    const n = this.next++;
    this.held.set(n, lock);
    return () => {
      this.held.delete(n);
    };
  }

  /** The locks held now, oldest first. */
  list(): HeldLock[] {
    return [...this.held.values()];
  }
}
