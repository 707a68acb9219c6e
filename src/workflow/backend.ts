/**
 * The state backend of one target. An operator's TF_HTTP_ADDRESS names a shared backend as
 * a base address: each (group, target) gets its own state at `<base>/<state key>`, so one
 * variable serves every target (the lock and unlock addresses likewise, when set).
 * Without TF_HTTP_ADDRESS, the embedded backend serves the state from this process.
 */
import { stateAddress } from '../contract/state-address.js';
import type { Logger } from '../log.js';
import type { StateBackend } from '../state/embedded.js';

export async function openBackend(env: NodeJS.ProcessEnv, key: string, logger: Logger, signal: AbortSignal): Promise<StateBackend> {
  const { resolveBackend } = await import('../state/embedded.js');
  if (env.TF_HTTP_ADDRESS) {
    const keyed: NodeJS.ProcessEnv = { ...env, TF_HTTP_ADDRESS: stateAddress(env.TF_HTTP_ADDRESS, key) };
    for (const v of ['TF_HTTP_LOCK_ADDRESS', 'TF_HTTP_UNLOCK_ADDRESS'] as const) {
      if (env[v]) keyed[v] = stateAddress(env[v]!, key);
    }
    return resolveBackend(keyed, key);
  }
  return resolveBackend(env, key, { logger, signal });
}
