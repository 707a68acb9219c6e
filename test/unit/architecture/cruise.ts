import { join, resolve } from 'node:path';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

/** The one config file of the layer rule, at the repository root. */
const CONFIG = resolve(import.meta.dirname, '../../../.dependency-cruiser.cjs');

/** Cruises `folders` of `root` (relative paths) with the layer rule; the result names each violation. */
export async function findLayerViolations(root: string, folders: string[]): Promise<ICruiseResult> {
  const options = await extractDepcruiseOptions(CONFIG);
  const tsConfigFile = join(root, 'tsconfig.json');
  const { output } = await cruise(
    folders,
    { ...options, baseDir: root, tsConfig: { fileName: tsConfigFile } },
    {},
    { tsConfig: extractTSConfig(tsConfigFile) },
  );
  if (typeof output === 'string') throw new Error(`dependency-cruiser gave text, not a result: ${output}`);
  return output;
}

/** One line per offending import: `from -> to (rule)`. */
export function layerViolationLines(result: ICruiseResult): string[] {
  return result.summary.violations.map((v) => `${v.from} -> ${v.to} (${v.rule.name})`).sort();
}
