/**
 * Who the fast client's requests are (kube-read.ts), as client-go decides it for a TLS server:
 * the kubeconfig's token file (over its token, when it can be read), token, basic auth or
 * client certificate, else its exec plugin (exec-credential.ts); and the Impersonate-* headers.
 * https://kubernetes.io/docs/reference/config-api/kubeconfig.v1/
 */
import { readFileSync } from 'node:fs';
import type { OutgoingHttpHeaders } from 'node:http';
import type { ConnectionOptions } from 'node:tls';
import { ConfigError } from '../errors.js';
import { execCredentialSource, type ExecClusterInfo, type ExecCredential } from './exec-credential.js';
import { EXEC_CLUSTER_EXTENSION, type ClusterEntry, type ResolvedKubeconfig, type UserEntry } from './kubeconfig-file.js';

/** What a request carries of who it is: headers, and TLS client material. */
export interface Credential {
  readonly headers: OutgoingHttpHeaders;
  readonly tls: ConnectionOptions;
  /** The plugin's credential these came from, to hand back on 401. */
  readonly exec?: ExecCredential;
}

/** The credential of the next request, and the plugin's credential the API server refused (401). */
export interface Identity {
  credential(): Promise<Credential>;
  refused(cred: ExecCredential): void;
}

/** Who the requests are: the kubeconfig's token, token file, basic auth or client certificate, else its exec plugin. */
export function identity(k: ResolvedKubeconfig, env: NodeJS.ProcessEnv): Identity {
  const { user, cluster } = k;
  const where = `${k.where}: user "${k.userName}"`;
  let token = user.token;
  if (user.tokenFile) {
    try {
      token = readFileSync(user.tokenFile, 'utf8').trim();
    } catch (err) {
      if (token === undefined) throw new ConfigError('Cannot read the kubeconfig.', [{ where: `${where}: tokenFile`, message: (err as Error).message }], { cause: err });
    }
  }
  const basic = user.username || user.password ? `Basic ${Buffer.from(`${user.username ?? ''}:${user.password ?? ''}`).toString('base64')}` : undefined;
  const staticHeaders: OutgoingHttpHeaders = token ? { Authorization: `Bearer ${token}` } : basic ? { Authorization: basic } : {};
  const hasCert = Boolean(user['client-certificate'] || user['client-certificate-data']);
  if (!user.exec || token || basic || hasCert) {
    const cred: Credential = { headers: staticHeaders, tls: {} };
    return { credential: () => Promise.resolve(cred), refused: () => {} };
  }
  const source = execCredentialSource(user.exec, { user: k.userName, where: k.where, cluster: execClusterInfo(cluster), env });
  return {
    async credential() {
      const c = await source.get();
      return {
        headers: c.token ? { Authorization: `Bearer ${c.token}` } : {},
        tls: c.clientCertificate ? { cert: c.clientCertificate, key: c.clientKey } : {},
        exec: c,
      };
    },
    refused: (c) => source.invalidate(c),
  };
}

/** The cluster as a plugin with provideClusterInfo sees it (client-go exec.go: clusterInfo from rest.Config). */
function execClusterInfo(c: ClusterEntry): ExecClusterInfo {
  const caData = c['certificate-authority-data'] ?? (c['certificate-authority'] ? safeRead(c['certificate-authority'])?.toString('base64') : undefined);
  const config = (c.extensions ?? []).find((e) => e.name === EXEC_CLUSTER_EXTENSION)?.extension;
  return {
    server: c.server!,
    ...optional('tls-server-name', c['tls-server-name']),
    ...(c['insecure-skip-tls-verify'] ? { 'insecure-skip-tls-verify': true } : {}),
    ...optional('certificate-authority-data', caData),
    ...optional('proxy-url', c['proxy-url']),
    ...(c['disable-compression'] ? { 'disable-compression': true } : {}),
    ...(config !== undefined ? { config } : {}),
  };
}

function safeRead(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}

/**
 * The Impersonate-* headers of `as`, `as-uid`, `as-groups` and `as-user-extra`
 * (client-go transport/round_trippers.go impersonatingRoundTripper; a group or an extra value
 * more than once is the header more than once).
 */
export function impersonationHeaders(user: UserEntry): OutgoingHttpHeaders {
  if (!user.as) return {};
  const headers: OutgoingHttpHeaders = { 'Impersonate-User': user.as };
  if (user['as-uid']) headers['Impersonate-Uid'] = user['as-uid'];
  const groups = user['as-groups'] ?? [];
  if (groups.length > 0) headers['Impersonate-Group'] = [...groups];
  for (const [key, values] of Object.entries(user['as-user-extra'] ?? {})) headers[`Impersonate-Extra-${headerKeyEscape(key)}`] = [...values];
  return headers;
}

/** client-go's headerKeyEscape: bytes that are not legal in a header name (RFC 7230 tchar, but `%`) are %-escaped. */
export function headerKeyEscape(key: string): string {
  let out = '';
  for (const byte of Buffer.from(key, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /^[A-Za-z0-9!#$&'*+\-.^_`|~]$/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
