/**
 * What the OpenTofu kubernetes provider lays over the kubeconfig from its environment
 * (kubernetes/provider.go `initializeConfiguration`): the context (KUBE_CTX), the context's
 * cluster and user (KUBE_CTX_CLUSTER, KUBE_CTX_AUTH_INFO), and fields of the chosen cluster and
 * user (KUBE_HOST, KUBE_TOKEN, ...), merged as client-go's `getCluster` does
 * (tools/clientcmd/client_config.go): an insecure or CA override replaces all three of
 * insecure, CA file and CA data; a server or TLS-server-name override replaces the
 * kubeconfig's tls-server-name.
 */
import type { InputIssue } from '../errors.js';
import type { ClusterEntry, UserEntry } from './kubeconfig-file.js';
import { tryUrl } from './url-text.js';

export interface KubeconfigOptions {
  /** The context, over KUBE_CTX and current-context (kubectl's --context). */
  readonly context?: string;
}

export interface Overrides {
  readonly context?: { readonly name: string; readonly where: string };
  readonly contextCluster?: string;
  readonly contextUser?: string;
  readonly cluster: ClusterEntry;
  readonly clusterDefaults: ClusterEntry;
  readonly user: UserEntry;
}

/** What the provider takes from its environment (provider.go: each schema field's EnvDefaultFunc, then initializeConfiguration). */
export function providerOverrides(env: NodeJS.ProcessEnv, opts: KubeconfigOptions, issues: InputIssue[]): Overrides {
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

/** getCluster: defaults, then the kubeconfig's cluster, then the overrides (each non-empty field replaces). */
export function overrideCluster(fromFile: ClusterEntry, o: Overrides): ClusterEntry {
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
