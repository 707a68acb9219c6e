/**
 * The kubeconfig files as client-go's loader reads them (tools/clientcmd/loader.go `Load`):
 * each file parsed and checked, then merged: the first file to define a cluster, user or
 * context name wins and that entry is taken whole, current-context comes from the first file
 * that sets it, a name twice in one file is an error, and relative paths are resolved against
 * the directory of the file that names them (`ResolveLocalPaths`, `GetAuthInfoFileReferences`).
 * https://kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig/#merging-kubeconfig-files
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { load } from 'js-yaml';
import { z } from 'zod';
import type { InputIssue } from '../errors.js';

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
export type ContextEntry = z.infer<typeof ContextSchema>;

/** The exec plugin API versions client-go accepts (plugin/pkg/client/auth/exec/exec.go apiVersions). */
export const EXEC_API_VERSIONS = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'] as const;

/** The cluster extension handed to an exec plugin with provideClusterInfo (client_config.go clusterExtensionKey). */
export const EXEC_CLUSTER_EXTENSION = 'client.authentication.k8s.io/exec';

/** The kubeconfig chosen and checked (kubeconfig.ts resolveKubeconfig): what a client talks to, and as whom. */
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

export interface Named<T> {
  readonly entry: T;
  /** The file that defined the name first. */
  readonly file: string;
}

export interface ParsedFile {
  readonly file: string;
  readonly currentContext: string;
  readonly clusters: ReadonlyMap<string, ClusterEntry>;
  readonly users: ReadonlyMap<string, UserEntry>;
  readonly contexts: ReadonlyMap<string, ContextEntry>;
}

/** One kubeconfig file, parsed and checked (a name twice in it is an issue); undefined when it cannot be read, or is missing from KUBECONFIG. */
export function readKubeconfigFile(file: string, explicit: boolean, issues: InputIssue[]): ParsedFile | undefined {
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

/** The kubeconfig's entries by name once the files are merged, and the file that defined each. */
export interface MergedKubeconfig {
  readonly clusters: ReadonlyMap<string, Named<ClusterEntry>>;
  readonly users: ReadonlyMap<string, Named<UserEntry>>;
  readonly contexts: ReadonlyMap<string, Named<ContextEntry>>;
  /** current-context of the first file that sets one ('' when none does), and that file. */
  readonly currentContext: string;
  readonly currentContextFile: string | undefined;
}

/** The files, merged: the first file to define a name wins, whole (loader.go Load); relative paths resolved against their file. */
export function mergeKubeconfigFiles(parsed: readonly ParsedFile[]): MergedKubeconfig {
  const clusters = new Map<string, Named<ClusterEntry>>();
  const users = new Map<string, Named<UserEntry>>();
  const contexts = new Map<string, Named<ContextEntry>>();
  for (const f of parsed) {
    for (const [name, entry] of f.clusters) if (!clusters.has(name)) clusters.set(name, { entry: resolveClusterPaths(entry, f.file), file: f.file });
    for (const [name, entry] of f.users) if (!users.has(name)) users.set(name, { entry: resolveUserPaths(entry, f.file), file: f.file });
    for (const [name, entry] of f.contexts) if (!contexts.has(name)) contexts.set(name, { entry, file: f.file });
  }
  const current = parsed.find((f) => f.currentContext !== '');
  return { clusters, users, contexts, currentContext: current?.currentContext ?? '', currentContextFile: current?.file };
}

/** v1beta1 plugins default to IfAvailable; v1 must say (clientcmd/api/v1 defaults.go SetDefaults_ExecConfig). */
export function defaultExec(u: UserEntry): UserEntry {
  if (!u.exec || u.exec.interactiveMode || u.exec.apiVersion !== 'client.authentication.k8s.io/v1beta1') return u;
  return { ...u, exec: { ...u.exec, interactiveMode: 'IfAvailable' } };
}
