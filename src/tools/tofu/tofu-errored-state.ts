/**
 * The state tofu could not save to the backend. tofu writes it to `errored.tfstate` in the
 * graph directory, or, when even that fails, prints it in the -json stream ("Emergency state
 * dump", handed over by tofu-events.ts as `stateDump`). Either way it is kept in a file of
 * mode 0600 and the operator is told where it is and how to push it; it is never printed
 * (it may hold secrets, law 6).
 */
import { chmodSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * After a command that writes state (apply): keeps what tofu could not save private and
 * returns the notes that say where it is and what to do (none when the state was saved).
 */
export function salvageState(dir: string, startedMs: number, stateDump: unknown): string[] {
  const notes: string[] = [];
  const errored = join(dir, 'errored.tfstate');
  if (changedSince(errored, startedMs)) notes.push(keepPrivate(errored, dir));
  if (stateDump !== undefined) notes.push(saveStateDump(stateDump, dir));
  return notes;
}

function keepPrivate(path: string, dir: string): string {
  try {
    chmodSync(path, 0o600);
    return erroredStateNote(path, dir, 'mode 0600');
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? String(err);
    return erroredStateNote(path, dir, `it could not be made private (${why}): run \`chmod 600 ${path}\` now`);
  }
}

function erroredStateNote(path: string, dir: string, privacy: string): string {
  return (
    `  tofu could not save the state to the backend and wrote it to ${path} (${privacy}; it may hold secrets: do not print or share it).\n` +
    `  When the backend is reachable again, push it with the same backend environment (TF_HTTP_*):\n` +
    `    tofu -chdir=${dir} state push ${path}\n` +
    `  and delete the file once the push succeeded.`
  );
}

/** tofu printed its state because it could not write errored.tfstate: keep it private instead. */
function saveStateDump(state: unknown, dir: string): string {
  const name = `errored-dump-${Date.now()}.tfstate`;
  for (const target of [dir, tmpdir()]) {
    try {
      const path = join(target, name);
      writeFileSync(path, JSON.stringify(state, null, 2), { mode: 0o600, flag: 'wx' });
      return erroredStateNote(path, dir, 'mode 0600');
    } catch {
      // try the next place
    }
  }
  return '  tofu could not save the state, and it could not be kept in a private file either: the changes of this run are not in the state; import or re-apply them.';
}

function changedSince(path: string, sinceMs: number): boolean {
  try {
    return statSync(path).mtimeMs >= sinceMs - 1000;
  } catch {
    return false;
  }
}
