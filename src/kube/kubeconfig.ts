/**
 * The kubeconfig as kubectl reads it and as the OpenTofu kubernetes provider will use it, read
 * in-process: the files (kubeconfig-paths.ts), merged by kubectl's rules, the context chosen,
 * the provider's KUBE_* variables laid over it, then kubectl's own checks. kube-read.ts turns
 * the result into requests; clusterIdentityText is what the verified no-op check compares.
 *
 * Upstream facts mirrored here (client-go v0.28.6, the version terraform-provider-kubernetes
 * 2.38.0 builds with; kubectl's newer client-go behaves the same in all of these):
 * - merge (tools/clientcmd/loader.go `Load`): the first file to define a cluster, user or
 *   context name wins and that entry is taken whole; current-context comes from the first file
 *   that sets it; a name twice in one file is an error (api/v1 conversion); relative paths
 *   (certificate-authority, client-certificate, client-key, tokenFile, and an exec command
 *   containing a `/`) are resolved against the directory of the file that names them
 *   (`ResolveLocalPaths`, `GetAuthInfoFileReferences`).
 * - the provider (kubernetes/provider.go `initializeConfiguration`): KUBE_CTX is the context
 *   (ConfigOverrides.CurrentContext), KUBE_CTX_CLUSTER / KUBE_CTX_AUTH_INFO replace the context's
 *   cluster / user; KUBE_HOST, KUBE_TLS_SERVER_NAME, KUBE_INSECURE, KUBE_CLUSTER_CA_CERT_DATA
 *   (PEM, not base64), KUBE_CLIENT_CERT_DATA, KUBE_CLIENT_KEY_DATA, KUBE_USER, KUBE_PASSWORD and
 *   KUBE_TOKEN replace those fields of the chosen cluster / user; KUBE_PROXY_URL is a default
 *   the cluster's own proxy-url overrides (ClusterDefaults). A host without a scheme gets
 *   https:// when a CA or a client certificate is given or KUBE_INSECURE is set, else http://
 *   (rest.DefaultServerURL with the provider's defaultTLS).
 * - overrides (tools/clientcmd/client_config.go `getCluster`): an insecure or CA override
 *   replaces all three of insecure, CA file and CA data; a server or TLS-server-name override
 *   replaces the kubeconfig's tls-server-name (so KUBE_HOST clears it).
 * - checks (tools/clientcmd/validation.go `validateAuthInfo`, `validateClusterInfo`,
 *   `ConfirmUsable`): every problem is reported at once, with where it is.
 *
 * Load cost: see kube-read.ts (this module adds js-yaml and zod, which kube-read loaded before).
 * https://kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig/#merging-kubeconfig-files
 */
import { createHash } from 'node:crypto';
import { accessSync, constants, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { load } from 'js-yaml';
import { z } from 'zod';
import { ConfigError, type InputIssue } from '../errors.js';
import { kubeconfigPaths } from './kubeconfig-paths.js';

const Extensions = z.array(z.looseObject({ name: z.string(), extension: z.unknown() })).nullish();

const ClusterSchema = z.looseObject({
  server: z.string().optional(),
  'tls-server-name': z.string().optional(),
  'insecure-skip-tls-verify': z.boolean().optional(),
  'certificate-authority': z.string().optional(),
  'certificate-authority-data': z.string().optional(),
  'proxy-url': z.string().optional(),
  'disable-compression': z.boolean().optional(),
  extensions: Extensions,
});

const ExecSchema = z.looseObject({
  apiVersion: z.string().optional(),
  command: z.string().optional(),
  args: z.array(z.string()).nullish(),
  env: z.array(z.looseObject({ name: z.string(), value: z.string() })).nullish(),
  installHint: z.string().optional(),
  provideClusterInfo: z.boolean().optional(),
  interactiveMode: z.string().optional(),
});

const UserSchema = z.looseObject({
  'client-certificate': z.string().optional(),
  'client-certificate-data': z.string().optional(),
  'client-key': z.string().optional(),
  'client-key-data': z.string().optional(),
  token: z.string().optional(),
  tokenFile: z.string().optional(),
  as: z.string().optional(),
  'as-uid': z.string().optional(),
  'as-groups': z.array(z.string()).nullish(),
  'as-user-extra': z.record(z.string(), z.array(z.string())).nullish(),
  username: z.string().optional(),
  password: z.string().optional(),
  'auth-provider': z.looseObject({ name: z.string(), config: z.record(z.string(), z.string()).nullish() }).nullish(),
  exec: ExecSchema.nullish(),
  extensions: Extensions,
});

const ContextSchema = z.looseObject({ cluster: z.string().optional(), user: z.string().optional(), namespace: z.string().optional(), extensions: Extensions });

const FileSchema = z.looseObject({
  'current-context': z.string().optional(),
  clusters: z.array(z.looseObject({ name: z.string(), cluster: ClusterSchema.nullish() })).nullish(),
  users: z.array(z.looseObject({ name: z.string(), user: UserSchema.nullish() })).nullish(),
  contexts: z.array(z.looseObject({ name: z.string(), context: ContextSchema.nullish() })).nullish(),
});

export type ClusterEntry = z.infer<typeof ClusterSchema>;
export type UserEntry = z.infer<typeof UserSchema>;
export type ExecEntry = z.infer<typeof ExecSchema>;
type ContextEntry = z.infer<typeof ContextSchema>;

/** The exec plugin API versions client-go accepts (plugin/pkg/client/auth/exec/exec.go apiVersions). */
export const EXEC_API_VERSIONS = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'] as const;

/** The cluster extension handed to an exec plugin with provideClusterInfo (client_config.go clusterExtensionKey). */
export const EXEC_CLUSTER_EXTENSION = 'client.authentication.k8s.io/exec';

export interface ResolvedKubeconfig {
  /** The files read, in order (absolute). */
  readonly files: readonly string[];
  /** For messages: `env KUBE_CONFIG_PATH (/path)`. */
  readonly where: string;
  /** '' when no context is named (KUBE_HOST and friends alone can still name a cluster). */
  readonly contextName: string;
  readonly clusterName: string;
  readonly userName: string;
  /** The chosen cluster with the provider's overrides; paths absolute. */
  readonly cluster: ClusterEntry;
  /** The chosen user with the provider's overrides; paths absolute; an exec plugin's interactiveMode defaulted. */
  readonly user: UserEntry;
}

export interface KubeconfigOptions {
  /** The context, over KUBE_CTX and current-context (kubectl's --context). */
  readonly context?: string;
}

interface Named<T> {
  readonly entry: T;
  /** The file that defined the name first. */
  readonly file: string;
}

interface ParsedFile {
  readonly file: string;
  readonly currentContext: string;
  readonly clusters: ReadonlyMap<string, ClusterEntry>;
  readonly users: ReadonlyMap<string, UserEntry>;
  readonly contexts: ReadonlyMap<string, ContextEntry>;
}

/** Reads, merges and checks the kubeconfig; a ConfigError names every problem. */
export function resolveKubeconfig(env: NodeJS.ProcessEnv, opts: KubeconfigOptions = {}): ResolvedKubeconfig {
  const paths = kubeconfigPaths(env);
  const files = paths.files.map((f) => resolve(f));
  const where = `${paths.where} (${paths.files.join(':')})`;
  const issues: InputIssue[] = [];
  const parsed = files.flatMap((file) => readKubeconfigFile(file, paths.explicit, issues) ?? []);
  if (issues.length > 0) throw new ConfigError('Cannot read the kubeconfig.', issues, { hint: `Fix the kubeconfig (${where}); \`kubectl config view\` with the same files shows how kubectl reads it.` });

  // the first file to define a name wins, whole (loader.go Load)
  const merged = { clusters: new Map<string, Named<ClusterEntry>>(), users: new Map<string, Named<UserEntry>>(), contexts: new Map<string, Named<ContextEntry>>() };
  for (const f of parsed) {
    for (const [name, entry] of f.clusters) if (!merged.clusters.has(name)) merged.clusters.set(name, { entry: resolveClusterPaths(entry, f.file), file: f.file });
    for (const [name, entry] of f.users) if (!merged.users.has(name)) merged.users.set(name, { entry: resolveUserPaths(entry, f.file), file: f.file });
    for (const [name, entry] of f.contexts) if (!merged.contexts.has(name)) merged.contexts.set(name, { entry, file: f.file });
  }
  const currentContext = parsed.find((f) => f.currentContext !== '')?.currentContext ?? '';

  const o = providerOverrides(env, opts, issues);
  const contextName = o.context?.name ?? currentContext;
  const context = merged.contexts.get(contextName);
  if (contextName !== '' && !context) {
    issues.push(o.context ? { where: o.context.where, message: `context "${contextName}" does not exist in the kubeconfig` } : { where: parsed.find((f) => f.currentContext !== '')?.file ?? where, message: `current-context "${contextName}" names no context` });
  }
  const userName = o.contextUser ?? context?.entry.user ?? '';
  const clusterName = o.contextCluster ?? context?.entry.cluster ?? '';
  const user = merged.users.get(userName);
  const cluster = merged.clusters.get(clusterName);
  if (o.contextUser !== undefined && !user) issues.push({ where: 'env KUBE_CTX_AUTH_INFO', message: `user "${userName}" does not exist in the kubeconfig` });
  if (o.contextCluster !== undefined && !cluster) issues.push({ where: 'env KUBE_CTX_CLUSTER', message: `cluster "${clusterName}" does not exist in the kubeconfig` });
  // a context, cluster or user that is not there: what follows from it (no server) says nothing more
  if (issues.length > 0) throw new ConfigError('The kubeconfig cannot be used.', issues, { hint: `Name a context, cluster and user of the kubeconfig (${where}): \`kubectl config get-contexts\` with the same files lists them.` });

  const chosenCluster = overrideCluster(cluster?.entry ?? {}, o);
  const chosenUser = defaultExec({ ...(user?.entry ?? {}), ...o.user });
  const userWhere = `${user?.file ?? where}: user "${userName}"`;
  const clusterWhere = `${cluster?.file ?? where}: cluster "${clusterName}"`;
  issues.push(...checkUser(chosenUser, userWhere), ...checkCluster(chosenCluster, clusterWhere));
  if (issues.length > 0) {
    const noServer = issues.length === 1 && chosenCluster.server === undefined && issues[0]!.where === clusterWhere;
    throw new ConfigError(noServer ? 'The kubeconfig names no current cluster.' : 'The kubeconfig cannot be used.', issues, {
      hint: noServer ? `Set current-context (or KUBE_CTX) to a context whose cluster has a server (${where}).` : `Fix the kubeconfig (${where}) or the KUBE_* variables named above; kubectl and the apply's provider refuse it the same way.`,
    });
  }
  return { files, where, contextName, clusterName, userName, cluster: chosenCluster, user: chosenUser };
}

function readKubeconfigFile(file: string, explicit: boolean, issues: InputIssue[]): ParsedFile | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && !explicit) return undefined; // kubectl skips a missing KUBECONFIG entry
    issues.push({ where: file, message: (err as Error).message });
    return undefined;
  }
  let doc: unknown;
  try {
    doc = load(text) ?? {};
  } catch (err) {
    issues.push({ where: file, message: `is not YAML: ${(err as Error).message.split('\n')[0]}` });
    return undefined;
  }
  const parsed = FileSchema.safeParse(doc);
  if (!parsed.success) {
    for (const i of parsed.error.issues) issues.push({ where: `${file}:${i.path.map(String).join('.')}`, message: i.message });
    return undefined;
  }
  const byName = <T>(kind: string, list: readonly { name: string; v: T }[]) => {
    const map = new Map<string, T>();
    for (const { name, v } of list) {
      if (map.has(name)) issues.push({ where: `${file}:${kind}`, message: `the name "${name}" is there twice` });
      else map.set(name, v);
    }
    return map;
  };
  const d = parsed.data;
  return {
    file,
    currentContext: d['current-context'] ?? '',
    clusters: byName('clusters', (d.clusters ?? []).map((c) => ({ name: c.name, v: c.cluster ?? {} }))),
    users: byName('users', (d.users ?? []).map((u) => ({ name: u.name, v: u.user ?? {} }))),
    contexts: byName('contexts', (d.contexts ?? []).map((c) => ({ name: c.name, v: c.context ?? {} }))),
  };
}

function resolvePath(path: string | undefined, file: string): string | undefined {
  return path === undefined || path === '' || isAbsolute(path) ? path : join(dirname(file), path);
}

function resolveClusterPaths(c: ClusterEntry, file: string): ClusterEntry {
  return c['certificate-authority'] ? { ...c, 'certificate-authority': resolvePath(c['certificate-authority'], file) } : c;
}

function resolveUserPaths(u: UserEntry, file: string): UserEntry {
  const out: UserEntry = { ...u };
  for (const k of ['client-certificate', 'client-key', 'tokenFile'] as const) if (u[k]) out[k] = resolvePath(u[k], file);
  // a command found on PATH stays as it is; one with a directory is the file's (GetAuthInfoFileReferences)
  if (u.exec?.command?.includes('/')) out.exec = { ...u.exec, command: resolvePath(u.exec.command, file) };
  return out;
}

/** v1beta1 plugins default to IfAvailable; v1 must say (clientcmd/api/v1 defaults.go SetDefaults_ExecConfig). */
function defaultExec(u: UserEntry): UserEntry {
  if (!u.exec || u.exec.interactiveMode || u.exec.apiVersion !== 'client.authentication.k8s.io/v1beta1') return u;
  return { ...u, exec: { ...u.exec, interactiveMode: 'IfAvailable' } };
}

interface Overrides {
  readonly context?: { readonly name: string; readonly where: string };
  readonly contextCluster?: string;
  readonly contextUser?: string;
  readonly cluster: ClusterEntry;
  readonly clusterDefaults: ClusterEntry;
  readonly user: UserEntry;
}

/** What the provider takes from its environment (provider.go: each schema field's EnvDefaultFunc, then initializeConfiguration). */
function providerOverrides(env: NodeJS.ProcessEnv, opts: KubeconfigOptions, issues: InputIssue[]): Overrides {
  const set = (name: string) => (env[name] ? env[name] : undefined); // d.GetOk: an empty value is unset
  const insecure = parseBool(set('KUBE_INSECURE'), issues);
  const ca = set('KUBE_CLUSTER_CA_CERT_DATA');
  const cert = set('KUBE_CLIENT_CERT_DATA');
  const cluster: ClusterEntry = {};
  if (insecure) cluster['insecure-skip-tls-verify'] = true;
  if (set('KUBE_TLS_SERVER_NAME')) cluster['tls-server-name'] = set('KUBE_TLS_SERVER_NAME');
  if (ca) cluster['certificate-authority-data'] = Buffer.from(ca).toString('base64');
  const host = set('KUBE_HOST');
  if (host) {
    // provider.go: defaultTLS := hasCA || hasCert || overrides.ClusterInfo.InsecureSkipTLSVerify
    const server = defaultServerUrl(host, ca !== undefined || cert !== undefined || insecure);
    if (server === undefined) issues.push({ where: 'env KUBE_HOST', message: `${host} is not a URL or a host:port pair` });
    else cluster.server = server;
  }
  const user: UserEntry = {};
  if (cert) user['client-certificate-data'] = Buffer.from(cert).toString('base64');
  if (set('KUBE_CLIENT_KEY_DATA')) user['client-key-data'] = Buffer.from(set('KUBE_CLIENT_KEY_DATA')!).toString('base64');
  if (set('KUBE_USER')) user.username = set('KUBE_USER');
  if (set('KUBE_PASSWORD')) user.password = set('KUBE_PASSWORD');
  if (set('KUBE_TOKEN')) user.token = set('KUBE_TOKEN');
  const context = opts.context ? { name: opts.context, where: 'the context option' } : set('KUBE_CTX') ? { name: set('KUBE_CTX')!, where: 'env KUBE_CTX' } : undefined;
  return {
    ...(context ? { context } : {}),
    ...(set('KUBE_CTX_CLUSTER') ? { contextCluster: set('KUBE_CTX_CLUSTER')! } : {}),
    ...(set('KUBE_CTX_AUTH_INFO') ? { contextUser: set('KUBE_CTX_AUTH_INFO')! } : {}),
    cluster,
    clusterDefaults: set('KUBE_PROXY_URL') ? { 'proxy-url': set('KUBE_PROXY_URL') } : {},
    user,
  };
}

/** strconv.ParseBool, as the provider's schema reads KUBE_INSECURE. */
function parseBool(v: string | undefined, issues: InputIssue[]): boolean {
  if (v === undefined) return false;
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  issues.push({ where: 'env KUBE_INSECURE', message: `${v} is not true or false` });
  return false;
}

/** rest.DefaultServerURL: a URL, or a host:port that gets https:// (with TLS material) or http://; no path. */
function defaultServerUrl(host: string, defaultTls: boolean): string | undefined {
  let text = host;
  let url = tryUrl(host);
  if (!url || url.host === '') {
    text = `${defaultTls ? 'https' : 'http'}://${host}`;
    url = tryUrl(text);
  }
  if (!url || (url.pathname !== '' && url.pathname !== '/')) return undefined;
  return text;
}

function tryUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/** getCluster: defaults, then the kubeconfig's cluster, then the overrides (each non-empty field replaces). */
function overrideCluster(fromFile: ClusterEntry, o: Overrides): ClusterEntry {
  const out: ClusterEntry = { ...o.clusterDefaults, ...definedFields(fromFile), ...o.cluster };
  if (o.cluster['insecure-skip-tls-verify'] || o.cluster['certificate-authority-data']) {
    delete out['certificate-authority'];
    delete out['certificate-authority-data'];
    delete out['insecure-skip-tls-verify'];
    if (o.cluster['insecure-skip-tls-verify']) out['insecure-skip-tls-verify'] = true;
    if (o.cluster['certificate-authority-data']) out['certificate-authority-data'] = o.cluster['certificate-authority-data'];
  }
  if (o.cluster.server || o.cluster['tls-server-name']) {
    delete out['tls-server-name'];
    if (o.cluster['tls-server-name']) out['tls-server-name'] = o.cluster['tls-server-name'];
  }
  return out;
}

/** mergo.Merge WithOverride takes only non-zero fields. */
function definedFields<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null && v !== '' && v !== false)) as Partial<T>;
}

function readable(path: string): string | undefined {
  try {
    accessSync(path, constants.R_OK);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** validateAuthInfo. */
function checkUser(u: UserEntry, where: string): InputIssue[] {
  const issues: string[] = [];
  const methods = [u.token ? 'token' : '', u.username || u.password ? 'basicAuth' : ''].filter(Boolean);
  if (methods.length > 1) issues.push(`more than one authentication method found: ${methods.join(', ')}; only one is allowed`);
  if (u['client-certificate'] || u['client-certificate-data']) {
    if (u['client-certificate'] && u['client-certificate-data']) issues.push('client-certificate-data and client-certificate are both specified');
    if (u['client-key'] && u['client-key-data']) issues.push('client-key-data and client-key are both specified');
    if (!u['client-key'] && !u['client-key-data']) issues.push('client-key-data or client-key must be specified to use the client certificate');
    for (const k of ['client-certificate', 'client-key'] as const) {
      const problem = u[k] ? readable(u[k]) : undefined;
      if (problem) issues.push(`unable to read ${k}: ${problem}`);
    }
  }
  if (u.exec) {
    if (u['auth-provider']) issues.push('auth-provider cannot be given together with an exec plugin');
    if (!u.exec.command) issues.push('exec.command must be specified to use an exec plugin');
    if (!u.exec.apiVersion) issues.push('exec.apiVersion must be specified to use an exec plugin');
    else if (!(EXEC_API_VERSIONS as readonly string[]).includes(u.exec.apiVersion)) issues.push(`exec.apiVersion ${u.exec.apiVersion} is not one of ${EXEC_API_VERSIONS.join(', ')}`);
    if ((u.exec.env ?? []).some((e) => e.name === '')) issues.push('exec.env: every variable needs a name');
    if (!u.exec.interactiveMode) issues.push('exec.interactiveMode must be specified (Never, IfAvailable or Always) for an apiVersion v1 plugin');
    else if (!['Never', 'IfAvailable', 'Always'].includes(u.exec.interactiveMode)) issues.push(`exec.interactiveMode ${JSON.stringify(u.exec.interactiveMode)} is not Never, IfAvailable or Always`);
  }
  if ((u['as-uid'] || (u['as-groups'] ?? []).length > 0 || Object.keys(u['as-user-extra'] ?? {}).length > 0) && !u.as) issues.push('as-uid, as-groups or as-user-extra given without as (the user to impersonate)');
  return issues.map((message) => ({ where, message }));
}

/** validateClusterInfo, and the TLS rule of transport.TLSConfigFor (a CA with insecure is refused). */
function checkCluster(c: ClusterEntry, where: string): InputIssue[] {
  const issues: string[] = [];
  if (!c.server) issues.push('no server');
  else if (!/^https?:$/.test(tryUrl(c.server)?.protocol ?? '')) issues.push(`server ${c.server} is not an http(s) URL`);
  if (c['proxy-url'] && !/^(https?|socks5):$/.test(tryUrl(c['proxy-url'])?.protocol ?? '')) issues.push(`proxy-url ${redactUrl(c['proxy-url'])}: the scheme must be http, https or socks5`);
  if (c['certificate-authority'] && c['certificate-authority-data']) issues.push('certificate-authority-data and certificate-authority are both specified');
  const problem = c['certificate-authority'] ? readable(c['certificate-authority']) : undefined;
  if (problem) issues.push(`unable to read certificate-authority: ${problem}`);
  if (c['insecure-skip-tls-verify'] && (c['certificate-authority'] || c['certificate-authority-data'])) issues.push('a certificate authority together with insecure-skip-tls-verify is not allowed');
  return issues.map((message) => ({ where, message }));
}

/** A URL without its password, for messages. */
export function redactUrl(text: string): string {
  const url = tryUrl(text);
  if (!url || url.password === '') return text;
  url.password = '***';
  return url.href;
}

const PROVIDER_ENV = [
  'KUBE_CONFIG_PATH', 'KUBE_CONFIG_PATHS', 'KUBE_CTX', 'KUBE_CTX_AUTH_INFO', 'KUBE_CTX_CLUSTER', 'KUBE_HOST', 'KUBE_USER', 'KUBE_PASSWORD', 'KUBE_TOKEN',
  'KUBE_INSECURE', 'KUBE_TLS_SERVER_NAME', 'KUBE_CLIENT_CERT_DATA', 'KUBE_CLIENT_KEY_DATA', 'KUBE_CLUSTER_CA_CERT_DATA', 'KUBE_PROXY_URL',
  // the provider's in-cluster fallback (clientcmd inClusterClientConfig.Possible)
  'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT',
];
/** Go's http.ProxyFromEnvironment reads these (golang.org/x/net/http/httpproxy FromEnvironment). */
const PROXY_ENV = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy', 'REQUEST_METHOD'];

/**
 * Every input that decides which cluster, and as whom, tofu's kubernetes provider will talk to,
 * as one canonical text: the merged kubeconfig's chosen context, cluster and user (an exec
 * plugin's command, args and env, never the credential it prints), the provider's KUBE_*
 * variables, the proxy variables and TF_CLI_ARGS*. Secrets and bulky data (tokens, passwords,
 * keys, certificate data, exec env values, TF_CLI_ARGS, a proxy URL's password) appear only as
 * their SHA-256, so the text can be shown. Files a path names are not read (a CA file or a token
 * file rotated in place keeps the identity; the path and the server decide it).
 * Throws the ConfigError of resolveKubeconfig when the kubeconfig cannot be used.
 */
export function clusterIdentityText(env: NodeJS.ProcessEnv): string {
  const k = resolveKubeconfig(env);
  const vars: Record<string, string> = {};
  const secretVars = new Set(['KUBE_PASSWORD', 'KUBE_TOKEN', 'KUBE_CLIENT_KEY_DATA', 'KUBE_CLIENT_CERT_DATA', 'KUBE_CLUSTER_CA_CERT_DATA']);
  for (const name of [...PROVIDER_ENV, ...PROXY_ENV, ...Object.keys(env).filter((n) => n === 'TF_CLI_ARGS' || n.startsWith('TF_CLI_ARGS_')).sort()]) {
    const v = env[name];
    if (v === undefined) continue;
    vars[name] = secretVars.has(name) || name.startsWith('TF_CLI_ARGS') ? digestOf(v) : PROXY_ENV.includes(name) ? hideUrlPassword(v) : v;
  }
  const { user, cluster } = k;
  const hidden: UserEntry = {
    ...user,
    ...(user.token ? { token: digestOf(user.token) } : {}),
    ...(user.password ? { password: digestOf(user.password) } : {}),
    ...(user['client-key-data'] ? { 'client-key-data': digestOf(user['client-key-data']) } : {}),
    ...(user['client-certificate-data'] ? { 'client-certificate-data': digestOf(user['client-certificate-data']) } : {}),
    ...(user['auth-provider'] ? { 'auth-provider': { name: user['auth-provider'].name, config: digestOf(canonicalJson(user['auth-provider'].config ?? {})) } } : {}),
    ...(user.exec ? { exec: { ...user.exec, env: (user.exec.env ?? []).map((e) => ({ name: e.name, value: digestOf(e.value) })) } } : {}),
  } as UserEntry;
  const shownCluster: ClusterEntry = {
    ...cluster,
    ...(cluster['certificate-authority-data'] ? { 'certificate-authority-data': digestOf(cluster['certificate-authority-data']) } : {}),
    ...(cluster['proxy-url'] ? { 'proxy-url': hideUrlPassword(cluster['proxy-url']) } : {}),
  };
  return canonicalJson({ files: k.files, context: k.contextName, clusterName: k.clusterName, userName: k.userName, cluster: shownCluster, user: hidden, env: vars });
}

function digestOf(v: string): string {
  return `sha256:${createHash('sha256').update(v).digest('hex')}`;
}

function hideUrlPassword(v: string): string {
  const url = tryUrl(v.includes('://') ? v : `http://${v}`);
  return url && url.password !== '' ? `${redactUrl(url.href)} (password ${digestOf(url.password)})` : v;
}

/** JSON with object keys sorted at every level, so equal inputs give equal text. */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(v, (_k, value: unknown) =>
    value && typeof value === 'object' && !Array.isArray(value) ? Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : value,
  );
}
