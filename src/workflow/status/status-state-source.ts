/**
 * Where `deploy status` and `deploy history` read the states: the backend plan/apply/destroy
 * use (TF_HTTP_ADDRESS, else the embedded backend's data directory, read directly). Only read:
 * no lock is taken and nothing is created.
 */
import type { BackendCoordinates } from '../../config/backend-coordinates.js';
import { DeployError, ExitCode } from '../../errors.js';
import { DataDirSource } from '../../state/source/data-dir-source.js';
import { openStateSource } from '../../state/source/open-state-source.js';
import type { StateSource } from '../../state/source/state-source.js';

/** The source of the run's states; a data directory with no database is an error naming it (exit 2). */
export function openReadOnlySource(backend: BackendCoordinates, signal: AbortSignal): StateSource {
  const source = openStateSource(backend, signal);
  if (source instanceof DataDirSource && !source.hasData) {
    source.close();
    throw new DeployError(`no state here: ${source.where} holds no state data (TF_HTTP_ADDRESS is not set, so the embedded backend's directory was read)`, ExitCode.usage, {
      hint: 'set TF_HTTP_ADDRESS (and TF_HTTP_USERNAME/TF_HTTP_PASSWORD) to the shared backend the group was applied with, or DEPLOY_STATE_DIR to the state directory of the machine that applied it',
    });
  }
  return source;
}
