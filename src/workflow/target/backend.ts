/**
 * The state backend of one target. An operator's TF_HTTP_ADDRESS names a shared backend as
 * a base address: each (group, target) gets its own state at `<base>/<state key>`, so one
 * variable serves every target (the lock and unlock addresses likewise, when set).
 * Without TF_HTTP_ADDRESS, the embedded backend serves the state from this process.
 * The coordinates are parsed once, before the run (src/config/backend-coordinates.ts).
 */
import { keyedBackend, type BackendCoordinates } from '../../config/backend-coordinates.js';
import type { Logger } from '../../log.js';
import type { StateBackend } from '../../state/embedded.js';

export async function openBackend(backend: BackendCoordinates, key: string, logger: Logger, signal: AbortSignal): Promise<StateBackend> {
  const { resolveBackend } = await import('../../state/embedded.js');
  if (backend.kind === 'http') return resolveBackend(keyedBackend(backend, key), key);
  return resolveBackend(backend, key, { logger, signal });
}
