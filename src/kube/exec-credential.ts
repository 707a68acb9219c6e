/**
 * A kubeconfig user's exec credential plugin (`aws eks get-token`, `gke-gcloud-auth-plugin`,
 * `kubelogin`, ...), run as kubectl runs it (client-go plugin/pkg/client/auth/exec/exec.go):
 *
 * - the command with its args, in the environment of the run plus the plugin's `env`, plus
 *   KUBERNETES_EXEC_INFO: an ExecCredential of the configured apiVersion whose spec says
 *   `interactive` and, with `provideClusterInfo`, the cluster (server, tls-server-name,
 *   insecure-skip-tls-verify, certificate-authority-data, proxy-url and the cluster's
 *   client.authentication.k8s.io/exec extension as `config`);
 * - stdout must be an ExecCredential of the same apiVersion with a token or a client
 *   certificate and key (or both); its `expirationTimestamp` ends the credential's life;
 * - the credential is kept in memory, one per plugin configuration and cluster (kubectl's
 *   globalCache), until it expires, or until the API server answers 401 with it; concurrent
 *   requests share one run. It is never written to disk, put in argv or logged: stdout is kept
 *   out of error messages (only stderr lines are quoted);
 * - interactiveMode: deploy never hands a plugin its terminal (the check and `deploy status` run
 *   unattended, and tofu's provider runs plugins without a terminal too), so Never and
 *   IfAvailable run with `interactive: false` and no stdin, and Always is refused as kubectl
 *   refuses it without a terminal;
 * - a missing command names the command and the kubeconfig's installHint (ANSI escapes
 *   removed, as client_config.go cleanANSIEscapeCodes does).
 *
 * The process goes through tools/run.ts (the one process wrapper), imported when a plugin first
 * runs: execa costs ~160 ms to load, which a kubeconfig without a plugin never pays.
 * https://kubernetes.io/docs/reference/access-authn-authz/authentication/#client-go-credential-plugins
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ToolError, hintOf } from '../errors.js';
import { canonicalJson } from './canonical-json.js';
import type { ExecEntry } from './kubeconfig-file.js';

/** What a plugin printed that the requests use. */
export interface ExecCredential {
  readonly token?: string;
  /** PEM. */
  readonly clientCertificate?: string;
  readonly clientKey?: string;
  /** Epoch ms; undefined: valid until the API server refuses it. */
  readonly expiresAt?: number;
}

/** The cluster as the plugin sees it with provideClusterInfo (clientauthentication v1 Cluster). */
export interface ExecClusterInfo {
  readonly server: string;
  readonly 'tls-server-name'?: string;
  readonly 'insecure-skip-tls-verify'?: boolean;
  /** base64, as the JSON of []byte. */
  readonly 'certificate-authority-data'?: string;
  readonly 'proxy-url'?: string;
  readonly 'disable-compression'?: boolean;
  readonly config?: unknown;
}

export interface ExecCredentialSource {
  /** The cached credential while valid, else a new one from the plugin. */
  get(): Promise<ExecCredential>;
  /** The API server refused `cred` (401): the next get() runs the plugin again. */
  invalidate(cred: ExecCredential): void;
}

export interface ExecPluginContext {
  /** The kubeconfig user's name and where it is, for messages. */
  readonly user: string;
  readonly where: string;
  readonly cluster: ExecClusterInfo;
  /** The environment of the run, which the plugin inherits (kubectl: os.Environ()). */
  readonly env: NodeJS.ProcessEnv;
  /** @default 60_000: a plugin that logs in over the network (aws, gcloud) can take seconds. */
  readonly timeoutMs?: number;
  /** @default Date.now */
  readonly now?: () => number;
}

const StatusSchema = z.looseObject({
  token: z.string().optional(),
  clientCertificateData: z.string().optional(),
  clientKeyData: z.string().optional(),
  expirationTimestamp: z.string().nullish(),
});
const ExecCredentialSchema = z.looseObject({ apiVersion: z.string(), kind: z.literal('ExecCredential'), status: StatusSchema.nullish() });

interface CacheEntry {
  cred?: ExecCredential;
  running?: Promise<ExecCredential>;
}

/** Credentials of this process, by plugin configuration and cluster (memory only). */
const cache = new Map<string, CacheEntry>();

/** Forgets every cached credential (tests). */
export function clearExecCredentials(): void {
  cache.clear();
}

/** The credential source of one kubeconfig user's exec plugin; the plugin runs on the first get(). */
export function execCredentialSource(exec: ExecEntry, ctx: ExecPluginContext): ExecCredentialSource {
  const key = createHash('sha256').update(canonicalJson({ exec, cluster: exec.provideClusterInfo ? ctx.cluster : undefined })).digest('hex');
  const entry = cache.get(key) ?? {};
  cache.set(key, entry);
  const now = ctx.now ?? Date.now;
  return {
    get() {
      if (entry.cred && !(entry.cred.expiresAt !== undefined && now() > entry.cred.expiresAt)) return Promise.resolve(entry.cred);
      entry.running ??= runPlugin(exec, ctx).then(
        (cred) => {
          entry.cred = cred;
          entry.running = undefined;
          return cred;
        },
        (err: unknown) => {
          entry.running = undefined;
          throw err;
        },
      );
      return entry.running;
    },
    invalidate(cred) {
      if (entry.cred === cred) entry.cred = undefined;
    },
  };
}

async function runPlugin(exec: ExecEntry, ctx: ExecPluginContext): Promise<ExecCredential> {
  const command = exec.command ?? '';
  const apiVersion = exec.apiVersion ?? '';
  const what = `the exec credential plugin ${command} of user "${ctx.user}" (${ctx.where})`;
  if (exec.interactiveMode === 'Always') {
    throw new ToolError(`${what} needs a terminal (interactiveMode: Always), and deploy runs it without one`, {
      hint: 'log in once in a terminal (e.g. `kubectl get ns` with this kubeconfig) if the plugin caches its login, or use a plugin configuration with interactiveMode: Never or IfAvailable',
    });
  }
  const spec = { interactive: false, ...(exec.provideClusterInfo ? { cluster: ctx.cluster } : {}) };
  const env: Record<string, string | undefined> = { ...ctx.env };
  for (const e of exec.env ?? []) env[e.name] = e.value;
  env.KUBERNETES_EXEC_INFO = JSON.stringify({ kind: 'ExecCredential', apiVersion, spec });

  const { runTool } = await import('../tools/run.js');
  let stdout: string;
  try {
    ({ stdout } = await runTool(command, exec.args ?? [], {
      env,
      extendEnv: false,
      timeoutMs: ctx.timeoutMs ?? 60_000,
      installHint: installHintOf(exec, ctx.where),
      // stdout carries the credential: only stderr may reach a message
      relevantLine: (line, stream) => stream === 'stderr' && line.trim() !== '',
      maxBufferChars: 1024 * 1024,
    }));
  } catch (err) {
    throw new ToolError(`${what}: ${(err as Error).message}`, { hint: hintOf(err, 'run the plugin by hand with the same environment to see why it fails'), cause: err });
  }

  let doc: unknown;
  try {
    doc = JSON.parse(stdout);
  } catch {
    throw new ToolError(`${what} printed no JSON ExecCredential on stdout`, { hint: 'the plugin must print an ExecCredential (client.authentication.k8s.io) on stdout' });
  }
  const parsed = ExecCredentialSchema.safeParse(doc);
  const fail = (why: string) => new ToolError(`${what}: ${why}`, { hint: 'the plugin must print an ExecCredential with status.token or status.clientCertificateData and clientKeyData' });
  if (!parsed.success) throw fail(`its output is not an ExecCredential (${parsed.error.issues.map((i) => `${i.path.join('.') || 'the document'}: ${i.message}`).join('; ')})`);
  if (parsed.data.apiVersion !== apiVersion) throw fail(`it is configured to use API version ${apiVersion}, and returned version ${parsed.data.apiVersion}`);
  const status = parsed.data.status;
  if (!status) throw fail("it didn't return a status field");
  if (!status.token && !status.clientCertificateData && !status.clientKeyData) throw fail("it didn't return a token or a certificate and key");
  if (!status.clientCertificateData !== !status.clientKeyData) throw fail('it returned only a certificate or a key, not both');
  let expiresAt: number | undefined;
  if (status.expirationTimestamp) {
    expiresAt = Date.parse(status.expirationTimestamp);
    if (Number.isNaN(expiresAt)) throw fail(`its expirationTimestamp ${JSON.stringify(status.expirationTimestamp)} is not an RFC 3339 time`);
  }
  return {
    ...(status.token ? { token: status.token } : {}),
    ...(status.clientCertificateData ? { clientCertificate: status.clientCertificateData, clientKey: status.clientKeyData! } : {}),
    ...(expiresAt !== undefined ? { expiresAt } : {}),
  };
}

function installHintOf(exec: ExecEntry, where: string): string {
  // eslint-disable-next-line no-control-regex
  const hint = exec.installHint?.replace(/\u001b\[[0-9;?]*[ -/]*[@-~]/g, '').trim();
  const docs = 'https://kubernetes.io/docs/reference/access-authn-authz/authentication/#client-go-credential-plugins';
  return hint ? `${hint} (the kubeconfig's installHint; ${docs})` : `install the credential plugin, or fix users[].user.exec.command in ${where} (${docs})`;
}
