/**
 * kubectl, for the operator's convenience checks (doctor). `deploy` itself talks to the API
 * server through @kubernetes/client-node.
 */
import { z } from 'zod';
import { ToolError } from '../errors.js';
import { INSTALL_HINTS, requireTool } from './discover.js';
import { runTool } from './run.js';

type Env = Readonly<Record<string, string | undefined>>;

const versionSchema = z.object({ clientVersion: z.object({ gitVersion: z.string() }).loose() }).loose();

/** `kubectl version --client -o json` -> e.g. "v1.36.3". Needs no cluster. */
export async function readKubectlVersion(opts: { readonly env?: Env; readonly signal?: AbortSignal; readonly kubectlPath?: string } = {}): Promise<string> {
  const kubectl = opts.kubectlPath ?? requireTool('kubectl', { ...process.env, ...opts.env }).path;
  const r = await runTool(kubectl, ['version', '--client', '-o', 'json'], {
    env: opts.env,
    signal: opts.signal,
    timeoutMs: 15_000,
    installHint: INSTALL_HINTS.kubectl,
  });
  let json: unknown;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    json = undefined;
  }
  const parsed = versionSchema.safeParse(json);
  if (!parsed.success) throw new ToolError('kubectl version --client -o json printed something unexpected');
  return parsed.data.clientVersion.gitVersion;
}
