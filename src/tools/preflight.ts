/**
 * The programs a plan, apply or destroy needs, checked before the run takes a state lock,
 * reads the cluster or starts anything: a missing program is one exit 3 that names every
 * missing piece with doctor's hint, and nothing has changed. Only file-system look-ups (no
 * process), so it costs microseconds.
 *
 * Which run needs what:
 *   tofu                       every run
 *   skopeo                     every run: the graph's push and digest steps (a destroy's plan
 *                              still refreshes the digest reads)
 *   the pinned providers       when tofu gets them from the cache's offline mirror
 *   ssh, kubectl               a run with the SPIRE coordinates (the hand-off steps)
 *
 * The found paths go to tofu's environment (DEPLOY_SKOPEO, ...), so the graph's shell steps
 * run the program that was checked, also when it is in the cache and not on PATH.
 */
import { ToolError } from '../errors.js';
import { INSTALL_HINTS, requireTool, TOOL_ENV_VARS, type ToolName } from './discover.js';
import { isFile } from './file-checks.js';
import { findProviderConfig, listMirroredProviders, providerPatches } from './providers.js';

type Env = Readonly<Record<string, string | undefined>>;

export type RunMode = 'plan' | 'apply' | 'destroy';

export interface RunTools {
  readonly tofu: string;
  /** Over tofu's environment: DEPLOY_SKOPEO (and DEPLOY_SSH, DEPLOY_KUBECTL with SPIRE). */
  readonly env: Readonly<Record<string, string>>;
}

/** Every mode needs the same programs today (see above); SPIRE adds ssh and kubectl. */
export function toolsFor(spire: boolean): ToolName[] {
  return ['tofu', 'skopeo', ...(spire ? (['ssh', 'kubectl'] as const) : [])];
}

/** Finds every program the run needs; throws one ToolError naming all that are missing. */
export function requireRunTools(mode: RunMode, opts: { readonly spire: boolean; readonly env: Env }): RunTools {
  const found = new Map<ToolName, string>();
  const missing: string[] = [];
  for (const name of toolsFor(opts.spire)) {
    try {
      found.set(name, requireTool(name, opts.env).path);
    } catch (err) {
      // a missing program (ToolError) or a wrong DEPLOY_<TOOL> override (ConfigError): both named here
      missing.push(`${(err as Error).message.split('\n').join(' ')}: ${INSTALL_HINTS[name]}`);
    }
  }
  const providers = findProviderConfig(opts.env);
  if (providers.kind === 'cache') {
    // The same DEPLOY_PROVIDER_PATCHES for the build as for this run: the build makes that mirror.
    const tools = providerPatches(opts.env) === 'none' ? 'DEPLOY_PROVIDER_PATCHES=none npm run tools' : 'npm run tools';
    const absent = listMirroredProviders(opts.env).filter((x) => x.path === undefined);
    for (const p of absent) {
      missing.push(`provider ${p.name} ${p.version} is not in the offline mirror ${providers.mirrorDir}: run \`${tools}\` (builds it from the provider sources, DEPLOY_PROVIDER_SOURCES)`);
    }
    if (absent.length === 0 && !isFile(providers.cliConfigFile)) {
      missing.push(`the provider mirror's config ${providers.cliConfigFile} is missing: run \`${tools}\``);
    }
  }
  if (missing.length > 0) {
    throw new ToolError([`deploy ${mode} cannot run: ${missing.length === 1 ? 'a program is' : 'programs are'} missing (nothing was changed)`, ...missing.map((m) => `  - ${m}`)].join('\n'), {
      hint: '`deploy doctor` shows every program and provider deploy looks for, and where',
    });
  }
  const env: Record<string, string> = {};
  for (const [name, path] of found) if (name !== 'tofu') env[TOOL_ENV_VARS[name]] = path;
  return { tofu: found.get('tofu')!, env };
}
