/**
 * The coordinates a test spire node (test/spire/spire-node.sh up) writes to its env file,
 * read exactly as an operator would export them (`set -a; . <file>`), and validated by the
 * deployer's own parser.
 */
import { execa } from 'execa';
import { resolveSpireCoordinates, type SpireCoordinates } from '../../src/config/spire-coordinates.js';

export async function loadSpireEnv(envFile: string): Promise<{ vars: Record<string, string>; spire: SpireCoordinates }> {
  const out = await execa('bash', ['-c', 'set -a; . "$1"; env -0', 'load', envFile], { env: {} });
  const vars = Object.fromEntries(
    out.stdout
      .split('\0')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
  const resolved = resolveSpireCoordinates(vars, process.cwd());
  if (!resolved.ok || resolved.value === undefined) throw new Error(`the env file ${envFile} gives no SPIRE coordinates the deployer accepts: ${JSON.stringify(resolved)}`);
  return { vars, spire: resolved.value };
}
