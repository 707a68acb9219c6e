/**
 * kubectl's checks of the chosen cluster and user (tools/clientcmd/validation.go
 * `validateAuthInfo`, `validateClusterInfo`, `ConfirmUsable`): every problem at once, each
 * with where it is.
 */
import { accessSync, constants } from 'node:fs';
import type { InputIssue } from '../errors.js';
import { type ClusterEntry, EXEC_API_VERSIONS, type UserEntry } from './kubeconfig-file.js';
import { redactUrl, tryUrl } from './url-text.js';

function readable(path: string): string | undefined {
  try {
    accessSync(path, constants.R_OK);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** validateAuthInfo. */
export function checkUser(u: UserEntry, where: string): InputIssue[] {
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
export function checkCluster(c: ClusterEntry, where: string): InputIssue[] {
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
