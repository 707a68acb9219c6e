/**
 * Small typed wrappers around skopeo (Debian's package). The graph runs the pushes itself;
 * these are for reading: the version (doctor) and the digest a registry gives for a tag.
 */
import { z } from 'zod';
import { ToolError } from '../errors.js';
import { INSTALL_HINTS, requireTool } from './discover.js';
import { runTool } from './run.js';

type Env = Readonly<Record<string, string | undefined>>;

export interface SkopeoOptions {
  readonly env?: Env;
  readonly signal?: AbortSignal;
  /** @default 60 s */
  readonly timeoutMs?: number;
  /** The skopeo program; default: discovered (DEPLOY_SKOPEO, the cache, PATH). */
  readonly skopeoPath?: string;
}

function skopeoPath(opts: SkopeoOptions): string {
  return opts.skopeoPath ?? requireTool('skopeo', { ...process.env, ...opts.env }).path;
}

/** `skopeo --version` -> e.g. "1.9.3". */
export async function readSkopeoVersion(opts: SkopeoOptions = {}): Promise<string> {
  const r = await runTool(skopeoPath(opts), ['--version'], {
    env: opts.env,
    signal: opts.signal,
    timeoutMs: opts.timeoutMs ?? 10_000,
    installHint: INSTALL_HINTS.skopeo,
  });
  // skopeo has no machine-readable version output; its one line is "skopeo version X[ commit: ...]"
  const m = /version\s+(\S+)/.exec(r.stdout);
  if (!m?.[1]) throw new ToolError(`skopeo --version printed something unexpected: ${r.stdout.slice(0, 200)}`);
  return m[1];
}

const inspectSchema = z.object({ Digest: z.string().regex(/^sha256:[0-9a-f]{64}$/) }).loose();

/**
 * The digest the registry serves for `ref` (`host/repo:tag`), from `skopeo inspect`.
 * REGISTRY_AUTH_FILE in env is honoured by skopeo itself; `tlsVerify: false` for a plain-http
 * test registry.
 */
export async function readImageDigest(ref: string, opts: SkopeoOptions & { readonly tlsVerify?: boolean } = {}): Promise<string> {
  const args = ['inspect', '--no-tags', `--tls-verify=${opts.tlsVerify ?? true}`];
  const authFile = opts.env?.REGISTRY_AUTH_FILE ?? process.env.REGISTRY_AUTH_FILE;
  if (authFile) args.push('--authfile', authFile);
  args.push(`docker://${ref}`);
  const r = await runTool(skopeoPath(opts), args, {
    env: opts.env,
    signal: opts.signal,
    timeoutMs: opts.timeoutMs ?? 60_000,
    installHint: INSTALL_HINTS.skopeo,
  });
  let json: unknown;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    json = undefined;
  }
  const parsed = inspectSchema.safeParse(json);
  if (!parsed.success) throw new ToolError(`skopeo inspect ${ref} did not print a manifest digest`);
  return parsed.data.Digest;
}
