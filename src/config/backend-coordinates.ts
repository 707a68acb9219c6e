/**
 * Where the states are: the state backend's coordinates, parsed once at the boundary (the
 * environment of a run, or `deploy state migrate --to/--from`) into one typed value that
 * state/, workflow/ and cli/ take as an argument. Either the embedded backend (its data
 * directory; plan/apply/destroy serve it from their own process) or an OpenTofu http backend
 * (TF_HTTP_ADDRESS: a base address, `<base>/<state key>` per target, with the lock and unlock
 * addresses and methods and the basic-auth credentials). Nothing below config/ reads TF_HTTP_*
 * from the environment: tofu's TF_HTTP_* are built from this value (tofuBackendVariables).
 * https://opentofu.org/docs/language/settings/backends/http/
 */
import { join } from 'node:path';
import { z } from 'zod';
import { stateAddress } from '../contract/graph/state-address.js';
import { TF_HTTP_VARIABLES } from '../contract/graph/tf-http-variables.js';
import { ConfigError } from '../errors.js';
import { stateDir } from '../paths.js';

/** `deploy state migrate --from`: the source backend's credentials (the target's are TF_HTTP_*). */
export const FROM_USERNAME_ENV = 'DEPLOY_MIGRATE_FROM_USERNAME';
export const FROM_PASSWORD_ENV = 'DEPLOY_MIGRATE_FROM_PASSWORD';

/** An OpenTofu http state backend. */
export interface HttpBackendCoordinates {
  readonly kind: 'http';
  /** What the address was given as, for messages: `TF_HTTP_ADDRESS`, `--to`, `--from`. */
  readonly addressName: string;
  /** The base address as given (a URL without credentials): the state `<key>` is at `<base>/<key>`. */
  readonly address: string;
  /** `address`, parsed. */
  readonly url: URL;
  /** A base address for LOCK other than `address` (TF_HTTP_LOCK_ADDRESS). */
  readonly lockAddress?: string | undefined;
  /** @default 'LOCK' */
  readonly lockMethod?: string | undefined;
  /** A base address for UNLOCK other than `address` (TF_HTTP_UNLOCK_ADDRESS). */
  readonly unlockAddress?: string | undefined;
  /** @default 'UNLOCK' */
  readonly unlockMethod?: string | undefined;
  readonly username?: string | undefined;
  readonly password?: string | undefined;
  /** The other TF_HTTP_* as given (update method, retries, TLS): tofu's alone, passed on unread. */
  readonly tofuSettings?: Readonly<Record<string, string>> | undefined;
}

/** The embedded backend: its data directory (a SQLite database, read directly by the operator verbs). */
export interface EmbeddedBackendCoordinates {
  readonly kind: 'embedded';
  readonly dataDir: string;
}

export type BackendCoordinates = EmbeddedBackendCoordinates | HttpBackendCoordinates;

/** The embedded backend's data directory: `<deploy state dir>/state` (see src/paths.ts). */
export function defaultStateDataDir(env: NodeJS.ProcessEnv): string {
  return join(stateDir(env), 'state');
}

/** A base address: a URL, without credentials (they go in TF_HTTP_USERNAME/TF_HTTP_PASSWORD). */
const addressSchema = z.string().transform((text, ctx) => {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'is not a URL', params: { detail: 'expected http(s)://host:port[/base]' } });
    return z.NEVER;
  }
  if (url.username || url.password) {
    ctx.addIssue({ code: 'custom', message: 'carries credentials', params: { detail: 'put credentials in TF_HTTP_USERNAME and TF_HTTP_PASSWORD, never in the URL' } });
    return z.NEVER;
  }
  return url;
});

/** `text` as the URL `name` gives, or the ConfigError (exit 2) that names it. */
function parseAddress(name: string, text: string): URL {
  const parsed = addressSchema.safeParse(text);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const detail = String((issue as { params?: { detail?: string } }).params?.detail ?? issue.message);
  throw new ConfigError(`${name} ${issue.message}`, [{ where: name, message: detail }]);
}

/** An http backend at `address` (given as `addressName`); a bad address is a ConfigError naming it. */
export function httpBackend(addressName: string, address: string, rest: Omit<HttpBackendCoordinates, 'kind' | 'addressName' | 'address' | 'url'> = {}): HttpBackendCoordinates {
  return { kind: 'http', addressName, address, url: parseAddress(addressName, address), ...rest };
}

/**
 * The backend of plan/apply/destroy, status, history and the operator verbs: TF_HTTP_ADDRESS
 * (and its lock, unlock and credentials) when set, else the embedded backend's data directory.
 * A variable that is not a URL, or carries credentials, is a ConfigError (exit 2) naming it.
 */
export function parseBackendCoordinates(env: NodeJS.ProcessEnv): BackendCoordinates {
  if (!env.TF_HTTP_ADDRESS) return { kind: 'embedded', dataDir: defaultStateDataDir(env) };
  const lockAddress = env.TF_HTTP_LOCK_ADDRESS || undefined;
  const unlockAddress = env.TF_HTTP_UNLOCK_ADDRESS || undefined;
  if (lockAddress) parseAddress('TF_HTTP_LOCK_ADDRESS', lockAddress);
  if (unlockAddress) parseAddress('TF_HTTP_UNLOCK_ADDRESS', unlockAddress);
  const tofuSettings: Record<string, string> = {};
  for (const name of TF_HTTP_VARIABLES) {
    const value = env[name];
    if (value !== undefined && !READ_HERE.has(name)) tofuSettings[name] = value;
  }
  return httpBackend('TF_HTTP_ADDRESS', env.TF_HTTP_ADDRESS, {
    lockAddress,
    lockMethod: env.TF_HTTP_LOCK_METHOD || undefined,
    unlockAddress,
    unlockMethod: env.TF_HTTP_UNLOCK_METHOD || undefined,
    username: env.TF_HTTP_USERNAME,
    password: env.TF_HTTP_PASSWORD,
    tofuSettings,
  });
}

/** The TF_HTTP_* this file reads into fields (the rest are tofuSettings). */
const READ_HERE = new Set<string>(['TF_HTTP_ADDRESS', 'TF_HTTP_LOCK_ADDRESS', 'TF_HTTP_LOCK_METHOD', 'TF_HTTP_UNLOCK_ADDRESS', 'TF_HTTP_UNLOCK_METHOD', 'TF_HTTP_USERNAME', 'TF_HTTP_PASSWORD']);

/** `deploy state migrate`: the target (--to, credentials TF_HTTP_*) and the source backend (--from, credentials DEPLOY_MIGRATE_FROM_*). */
export function parseMigrateBackends(flags: { readonly to: string; readonly from?: string | undefined }, env: NodeJS.ProcessEnv): { to: HttpBackendCoordinates; from?: HttpBackendCoordinates } {
  const to = httpBackend('--to', flags.to, { username: env.TF_HTTP_USERNAME, password: env.TF_HTTP_PASSWORD });
  if (flags.from === undefined) return { to };
  return { to, from: httpBackend('--from', flags.from, { username: env[FROM_USERNAME_ENV], password: env[FROM_PASSWORD_ENV] }) };
}

/**
 * The state `key` of a base-address backend: `<base>/<key>`, and the lock and unlock
 * addresses likewise when they are set. One variable serves every target of every group.
 */
export function keyedBackend(backend: HttpBackendCoordinates, key: string): HttpBackendCoordinates {
  const address = stateAddress(backend.address, key);
  return {
    ...backend,
    address,
    url: new URL(address),
    ...(backend.lockAddress ? { lockAddress: stateAddress(backend.lockAddress, key) } : {}),
    ...(backend.unlockAddress ? { unlockAddress: stateAddress(backend.unlockAddress, key) } : {}),
  };
}

/** tofu's TF_HTTP_* for `backend`: the one place they are written (never -backend-config, which tofu keeps in .terraform). */
export function tofuBackendVariables(backend: HttpBackendCoordinates): Record<string, string> {
  const v: Record<string, string> = { ...backend.tofuSettings, TF_HTTP_ADDRESS: backend.address };
  if (backend.lockAddress !== undefined) v.TF_HTTP_LOCK_ADDRESS = backend.lockAddress;
  if (backend.unlockAddress !== undefined) v.TF_HTTP_UNLOCK_ADDRESS = backend.unlockAddress;
  if (backend.lockMethod !== undefined) v.TF_HTTP_LOCK_METHOD = backend.lockMethod;
  if (backend.unlockMethod !== undefined) v.TF_HTTP_UNLOCK_METHOD = backend.unlockMethod;
  if (backend.username !== undefined) v.TF_HTTP_USERNAME = backend.username;
  if (backend.password !== undefined) v.TF_HTTP_PASSWORD = backend.password;
  return v;
}
