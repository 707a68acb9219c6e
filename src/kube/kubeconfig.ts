/**
 * The kubeconfig as kubectl reads it and as the OpenTofu kubernetes provider will use it, read
 * in-process: the files (kubeconfig-paths.ts), merged by kubectl's rules, the context chosen,
 * the provider's KUBE_* variables laid over it, then kubectl's own checks. kube-read.ts turns
 * the result into requests. A run resolves it once (openKubeAccess, resolveRunKubeconfig) and
 * passes the value, with its identity (what the verified no-op check compares), to every reader.
 *
 * The steps are modules of their own: the files and their merge (kubeconfig-file.ts), the
 * provider's variables (kubeconfig-overrides.ts), kubectl's checks (kubeconfig-checks.ts) and
 * the identity the no-op check compares (cluster-identity.ts); this one chooses the context.
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
import { ConfigError, type InputIssue } from '../errors.js';
import type { PathPlace } from '../paths.js';
import { clusterIdentityOf } from './cluster-identity.js';
import { checkCluster, checkUser } from './kubeconfig-checks.js';
import { defaultExec, mergeKubeconfigFiles, readKubeconfigFile, type ResolvedKubeconfig } from './kubeconfig-file.js';
import { type KubeconfigOptions, overrideCluster, providerOverrides } from './kubeconfig-overrides.js';
import { kubeconfigPaths } from './kubeconfig-paths.js';

export type { ResolvedKubeconfig } from './kubeconfig-file.js';
export type { KubeconfigOptions } from './kubeconfig-overrides.js';

/**
 * Reads, merges and checks the kubeconfig that `place.env` names (KUBE_CONFIG_PATH, else
 * KUBECONFIG; relative paths are `place.cwd`'s); a ConfigError names every problem.
 */
export function resolveKubeconfig(place: PathPlace, opts: KubeconfigOptions = {}): ResolvedKubeconfig {
  const { env } = place;
  const paths = kubeconfigPaths(place);
  const { files } = paths;
  const where = `${paths.where} (${paths.shown.join(':')})`;
  const issues: InputIssue[] = [];
  const parsed = files.flatMap((file) => readKubeconfigFile(file, paths.explicit, issues) ?? []);
  if (issues.length > 0) throw new ConfigError('Cannot read the kubeconfig.', issues, { hint: `Fix the kubeconfig (${where}); \`kubectl config view\` with the same files shows how kubectl reads it.` });

  const merged = mergeKubeconfigFiles(parsed);

  const o = providerOverrides(env, opts, issues);
  const contextName = o.context?.name ?? merged.currentContext;
  const context = merged.contexts.get(contextName);
  if (contextName !== '' && !context) {
    issues.push(o.context ? { where: o.context.where, message: `context "${contextName}" does not exist in the kubeconfig` } : { where: merged.currentContextFile ?? where, message: `current-context "${contextName}" names no context` });
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

/**
 * The cluster as one run reaches it: the kubeconfig resolved once (kubeconfig-file.ts
 * ResolvedKubeconfig: the files, the context, the cluster, the user), the environment whose
 * KUBE_*, proxy and TF_CLI_ARGS* variables the clients and the identity read, and the identity
 * itself. Every reader of a run takes this value (kube-read.ts openKubeLister, kube-api.ts
 * loadKubeConfig, rollout-api.ts openRolloutApi, the verified no-op check's fingerprint): none
 * reads KUBE_CONFIG_PATH or parses the YAML again.
 */
export interface KubeAccess {
  readonly kubeconfig: ResolvedKubeconfig;
  readonly env: NodeJS.ProcessEnv;
  /**
   * Every input that decides which cluster, and as whom, tofu's kubernetes provider will talk
   * to, as one canonical text (cluster-identity.ts): what the verified no-op check compares.
   */
  readonly identity: string;
}

/** The kubeconfig `place.env` names, resolved (resolveKubeconfig), with its identity; throws its ConfigError. */
export function openKubeAccess(place: PathPlace): KubeAccess {
  const kubeconfig = resolveKubeconfig(place);
  return { kubeconfig, env: place.env, identity: clusterIdentityOf(kubeconfig, place.env) };
}

/**
 * The kubeconfig of a plan, apply or destroy, resolved once at the run's boundary: `file` (the
 * absolute path tofu's provider and the rollout step get as KUBE_CONFIG_PATH) and the access, or
 * why it cannot be used. The failure is kept, not thrown: each reader that needs the cluster
 * throws it where it did when it resolved the file itself (the check then runs the full plan,
 * saying why; tofu's provider says its own words).
 */
export type RunKubeconfig = { readonly file: string } & ({ readonly ok: true; readonly access: KubeAccess } | { readonly ok: false; readonly error: unknown });

/** `file` (absolute) resolved with the run's environment, whose KUBE_CONFIG_PATH becomes `file`. */
export function resolveRunKubeconfig(file: string, place: PathPlace): RunKubeconfig {
  try {
    return { file, ok: true, access: openKubeAccess({ cwd: place.cwd, env: { ...place.env, KUBE_CONFIG_PATH: file } }) };
  } catch (error) {
    return { file, ok: false, error };
  }
}

/** The access of a run's kubeconfig, or the error its resolution met. */
export function requireKubeAccess(kube: RunKubeconfig): KubeAccess {
  if (kube.ok) return kube.access;
  throw kube.error;
}
