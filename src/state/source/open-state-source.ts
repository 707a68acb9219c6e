/**
 * The StateSource of a backend's coordinates (src/config/backend-coordinates.ts): its data
 * directory read directly, or its http backend. Apart from the interface (state-source.ts), so
 * that the two sources import the interface and nothing imports them both but this file.
 */
import type { BackendCoordinates } from '../../config/backend-coordinates.js';
import { DataDirSource } from './data-dir-source.js';
import { HttpSource } from './http-source.js';
import type { StateSource } from './state-source.js';

/** Where plan/apply/destroy keep the states: the http backend, else the embedded backend's data directory. */
export function openStateSource(backend: BackendCoordinates, signal?: AbortSignal): StateSource {
  return backend.kind === 'http' ? new HttpSource(backend, signal) : new DataDirSource(backend.dataDir);
}
