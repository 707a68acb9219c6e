/**
 * The identity of the cluster the provider will talk to, as the verified no-op check compares
 * it (src/workflow/noop/fingerprint.ts, through kubeconfig.ts KubeAccess.identity, taken once per run).
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';
import type { ClusterEntry, ResolvedKubeconfig, UserEntry } from './kubeconfig-file.js';
import { redactUrl, tryUrl } from './url-text.js';

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
 */
export function clusterIdentityOf(k: ResolvedKubeconfig, env: NodeJS.ProcessEnv): string {
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
