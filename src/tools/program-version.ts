/**
 * The version each program `deploy` needs says it is, for `deploy doctor` (inventory.ts). A
 * program that does not run, or prints something unexpected, is a ToolError (exit 3).
 * `deploy` itself does not run skopeo or kubectl: the graph's steps do (push, digest,
 * SPIRE hand-off), and the rollout talks to the API server through @kubernetes/client-node.
 */
import { z } from 'zod';
import { ToolError } from '../errors.js';
import { INSTALL_HINTS, type ToolName } from './discover.js';
import { runTool } from './run.js';
import { readTofuVersion } from './tofu/tofu.js';

type Env = Readonly<Record<string, string | undefined>>;

const kubectlVersionSchema = z.object({ clientVersion: z.object({ gitVersion: z.string() }).loose() }).loose();

/**
 * `path --version` (or its equivalent) -> e.g. "1.12.6" (tofu), "1.9.3" (skopeo), "v1.36.3"
 * (kubectl, needs no cluster), "OpenSSH_9.2p1" (ssh). `env` is the caller's whole environment.
 */
export async function readProgramVersion(name: ToolName, path: string, env: Env, signal?: AbortSignal): Promise<string> {
  const run = (args: string[], timeoutMs: number) => runTool(path, args, { env, extendEnv: false, signal, timeoutMs, installHint: INSTALL_HINTS[name] });
  switch (name) {
    case 'tofu':
      return (await readTofuVersion({ tofuPath: path, env, signal })).version;
    case 'skopeo': {
      // skopeo has no machine-readable version output; its one line is "skopeo version X[ commit: ...]"
      const r = await run(['--version'], 10_000);
      const m = /version\s+(\S+)/.exec(r.stdout);
      if (!m?.[1]) throw new ToolError(`skopeo --version printed something unexpected: ${r.stdout.slice(0, 200)}`);
      return m[1];
    }
    case 'kubectl': {
      const r = await run(['version', '--client', '-o', 'json'], 15_000);
      const parsed = kubectlVersionSchema.safeParse(parseJson(r.stdout));
      if (!parsed.success) throw new ToolError('kubectl version --client -o json printed something unexpected');
      return parsed.data.clientVersion.gitVersion;
    }
    case 'ssh': {
      // `ssh -V` prints e.g. "OpenSSH_9.2p1 Debian-2+deb12u3, OpenSSL 3.0.15" on stderr
      const r = await run(['-V'], 15_000);
      return (r.stderr.trim() || r.stdout.trim()).split(/[\s,]/)[0] ?? '';
    }
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
