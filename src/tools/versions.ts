/**
 * The pinned versions, read from the one versions file `toolchain/versions.env` (KEY=value
 * lines, `#` comments), which the shell scripts source too. OpenTofu and its providers here
 * are the ones the CDKTF prebuilt bindings in package.json pin and toolchain/build-tools.sh
 * builds; the cluster's programs, SPIRE, Helm, actionlint and act are there as well.
 *
 * The file's grammar is the common part of what `.` in bash and this parser read alike:
 * `KEY=value` with KEY in [A-Z_][A-Z0-9_]* and a value of plain characters (no spaces,
 * quotes, `$`, backquotes or backslashes), blank lines, and lines starting with `#`.
 * Anything else is refused, naming the file and line, so the two readers never disagree.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DeployError, ExitCode } from '../errors.js';

export type Versions = Readonly<Record<string, string>>;

const LINE = /^([A-Z_][A-Z0-9_]*)=([A-Za-z0-9_.:,+@/-]+)$/;

/** Parses the text of a versions file; `where` names it in errors. */
export function parseVersions(text: string, where: string): Versions {
  const out: Record<string, string> = {};
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const m = LINE.exec(line);
    if (!m) {
      throw new DeployError(`${where}:${i + 1}: not a KEY=value line: ${JSON.stringify(raw)}`, ExitCode.internal, {
        hint: 'each line is KEY=value (KEY in capitals, a value without spaces, quotes or $), a # comment, or blank',
      });
    }
    const [, key, value] = m as unknown as [string, string, string];
    if (key in out) {
      throw new DeployError(`${where}:${i + 1}: ${key} is set twice`, ExitCode.internal, { hint: 'keep one line per key' });
    }
    out[key] = value;
  });
  return out;
}

/** toolchain/versions.env of this installation: the nearest one above this module. */
export function versionsFile(from: string = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const f = join(dir, 'toolchain', 'versions.env');
    if (existsSync(f)) return f;
    if (dirname(dir) === dir) {
      throw new DeployError(`toolchain/versions.env not found above ${from}`, ExitCode.internal, {
        hint: 'the installation is incomplete: it ships toolchain/versions.env beside src/',
      });
    }
  }
}

/** Every KEY=value of toolchain/versions.env. */
export const VERSIONS: Versions = (() => {
  const file = versionsFile();
  return parseVersions(readFileSync(file, 'utf8'), file);
})();

/** The value of KEY in toolchain/versions.env; an error naming it when the file lacks it. */
export function pinnedVersion(key: string, versions: Versions = VERSIONS): string {
  const v = versions[key];
  if (v === undefined) {
    throw new DeployError(`toolchain/versions.env has no ${key}`, ExitCode.internal, { hint: `add a line ${key}=<version>` });
  }
  return v;
}

export interface PinnedProvider {
  /** Type name, as in `terraform-provider-<name>`. */
  readonly name: string;
  readonly version: string;
}

/** `PROVIDERS=name:version,...` as a list, in the file's order. */
export function parseProviders(value: string): readonly PinnedProvider[] {
  return value.split(',').map((entry) => {
    const [name, version, ...rest] = entry.split(':');
    if (!name || !version || rest.length > 0) {
      throw new DeployError(`toolchain/versions.env: PROVIDERS entry ${JSON.stringify(entry)} is not <name>:<version>`, ExitCode.internal);
    }
    return { name, version };
  });
}

export const TOFU_VERSION = pinnedVersion('TOFU_VERSION');

export const PINNED_PROVIDERS: readonly PinnedProvider[] = parseProviders(pinnedVersion('PROVIDERS'));

/** The platform directory of the provider mirror. Only this one is built. */
export const MIRROR_PLATFORM = pinnedVersion('MIRROR_PLATFORM');
