/**
 * The probe scripts of the node pod (src/contract/probes.ts) as a Helm values file for
 * bench/helm-chart, so that the Helm side of the benchmark probes exactly as the graph does.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LIVENESS_SCRIPT, READINESS_SCRIPT, STARTUP_SCRIPT } from '../../src/contract/probes.ts';

/** Writes `<dir>/probe-values.json` (JSON is YAML) and returns its path, for `helm -f`. */
export function writeProbeValues(dir: string): string {
  const file = join(dir, 'probe-values.json');
  writeFileSync(file, JSON.stringify({ probes: { startup: STARTUP_SCRIPT, readiness: READINESS_SCRIPT, liveness: LIVENESS_SCRIPT } }, null, 2));
  return file;
}
