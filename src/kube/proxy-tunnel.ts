/**
 * The proxy an API request goes through, chosen as client-go chooses it, and the connection
 * through it.
 *
 * - The cluster's proxy-url, when set, is used for every request (clientcmd: http.ProxyURL).
 * - Otherwise Go's http.ProxyFromEnvironment (client-go's transport default, through
 *   k8s.io/apimachinery/pkg/util/net NewProxierWithNoProxyCIDR): HTTPS_PROXY (or https_proxy)
 *   for an https server, HTTP_PROXY (or http_proxy) for an http one unless REQUEST_METHOD is
 *   set (CGI); never for localhost or a loopback address; NO_PROXY (or no_proxy) lists `*`,
 *   IPs, CIDRs, and domains (`example.com` matches it and its subdomains, `.example.com` and
 *   `*.example.com` only the subdomains), each optionally with a port
 *   (golang.org/x/net/http/httpproxy `config.useProxy`, `config.init`). A value without a scheme
 *   is http://.
 * - An https server is reached through an http or https proxy by CONNECT (Proxy-Authorization
 *   from the proxy URL's user and password), then TLS inside the tunnel; an http server through
 *   the proxy as a forward proxy (absolute URI). An https proxy is verified with the same TLS
 *   settings as the cluster (Go's transport dials it with the one TLSClientConfig).
 * - socks5 proxies are not done here: the caller leaves those kubeconfigs to the full client
 *   (kube-api.ts, @kubernetes/client-node has a SOCKS agent).
 */
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import type { Duplex } from 'node:stream';
import { redactUrl } from './url-text.js';

/** The proxy for a request to `target`, or undefined to connect directly. */
export function proxyFor(target: URL, proxyUrl: string | undefined, env: NodeJS.ProcessEnv): URL | undefined {
  if (proxyUrl) return parseProxy(proxyUrl);
  const pick = (...names: string[]) => names.map((n) => env[n]).find((v) => v !== undefined && v !== '');
  const https = target.protocol === 'https:';
  const value = https ? pick('HTTPS_PROXY', 'https_proxy') : env.REQUEST_METHOD ? undefined : pick('HTTP_PROXY', 'http_proxy');
  if (!value) return undefined;
  const proxy = parseProxy(value);
  if (!proxy) return undefined;
  const host = target.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = target.port || (https ? '443' : '80');
  return useProxy(host, port, pick('NO_PROXY', 'no_proxy') ?? '') ? proxy : undefined;
}

function parseProxy(value: string): URL | undefined {
  for (const text of [value, `http://${value}`]) {
    try {
      const url = new URL(text);
      if (url.host !== '' && /^(https?|socks5):$/.test(url.protocol)) return url;
    } catch {
      // try with http://
    }
  }
  return undefined;
}

/** httpproxy's useProxy: false when the host is local or NO_PROXY names it. */
export function useProxy(host: string, port: string, noProxy: string): boolean {
  if (host === 'localhost') return false;
  const ip = isIP(host) ? host : undefined;
  if (ip && isLoopback(ip)) return false;
  for (const raw of noProxy.split(',')) {
    const p = raw.trim().toLowerCase();
    if (p === '') continue;
    if (p === '*') return false;
    const cidr = /^(.+)\/(\d+)$/.exec(p);
    if (cidr && isIP(cidr[1]!)) {
      if (ip && inCidr(ip, cidr[1]!, Number(cidr[2]))) return false;
      continue;
    }
    // net.SplitHostPort: host:port, [v6]:port; a bare IPv6 address has no port
    const hp = isIP(p) ? undefined : (/^\[(.*)\](?::([^:]*))?$/.exec(p) ?? /^([^:]*):([^:]*)$/.exec(p));
    const phost = hp ? hp[1]! : p;
    const pport = hp?.[2] ?? '';
    if (phost === '') continue;
    if (isIP(phost)) {
      if (ip && sameIp(ip, phost) && (pport === '' || pport === port)) return false;
      continue;
    }
    if (ip) continue;
    const bare = phost.startsWith('*.') ? phost.slice(1) : phost;
    const matchHost = !bare.startsWith('.');
    const suffix = matchHost ? `.${bare}` : bare;
    if ((host.endsWith(suffix) || (matchHost && host === bare)) && (pport === '' || pport === port)) return false;
  }
  return true;
}

function isLoopback(ip: string): boolean {
  return isIP(ip) === 4 ? ip.startsWith('127.') : ip === '::1' || /^::ffff:127\./i.test(ip);
}

function ipBytes(ip: string): number[] {
  if (isIP(ip) === 4) return ip.split('.').map(Number);
  const [head, tail] = ip.split('::') as [string, string | undefined];
  const part = (s: string | undefined) => (s ? s.split(':') : []);
  const h = part(head);
  const t = part(tail);
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.flatMap((g) => {
    const n = parseInt(g, 16);
    return [n >> 8, n & 255];
  });
}

function sameIp(a: string, b: string): boolean {
  return ipBytes(a).join('.') === ipBytes(b).join('.');
}

function inCidr(ip: string, net: string, bits: number): boolean {
  const a = ipBytes(ip);
  const n = ipBytes(net);
  if (a.length !== n.length) return false;
  for (let i = 0; i < bits; i++) {
    const mask = 128 >> i % 8;
    if ((a[i >> 3]! & mask) !== (n[i >> 3]! & mask)) return false;
  }
  return true;
}

/** `Basic ...` from the proxy URL's user and password, as Go's transport sends it. */
export function proxyAuthorization(proxy: URL): string | undefined {
  if (proxy.username === '' && proxy.password === '') return undefined;
  return `Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64')}`;
}

/** A connection to the proxy itself (TLS for an https proxy, with the cluster's trust). */
export function connectProxy(proxy: URL, tls: ConnectionOptions): Promise<Socket> {
  const host = proxy.hostname.replace(/^\[|\]$/g, '');
  const port = Number(proxy.port || (proxy.protocol === 'https:' ? 443 : 80));
  return new Promise((resolvePromise, reject) => {
    const socket =
      proxy.protocol === 'https:'
        ? tlsConnect({ ...tls, host, port, ...(isIP(host) ? {} : { servername: host }) })
        : netConnect({ host, port });
    socket.once(proxy.protocol === 'https:' ? 'secureConnect' : 'connect', () => {
      socket.off('error', reject);
      resolvePromise(socket);
    });
    socket.once('error', reject);
  });
}

/** A TLS connection to host:port through the proxy's CONNECT tunnel. */
export async function connectThroughProxy(proxy: URL, host: string, port: number, proxyTls: ConnectionOptions, serverTls: ConnectionOptions): Promise<Duplex> {
  const socket = await connectProxy(proxy, proxyTls);
  const target = `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
  const auth = proxyAuthorization(proxy);
  await new Promise<void>((resolvePromise, reject) => {
    let head = Buffer.alloc(0);
    const fail = (err: Error) => {
      socket.destroy();
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > 64 * 1024) fail(new Error(`the proxy ${redactUrl(proxy.href)} sent no end of its answer to CONNECT ${target}`));
        return;
      }
      socket.off('data', onData);
      socket.off('error', fail);
      socket.off('end', onEnd);
      const statusLine = head.subarray(0, head.indexOf('\r\n')).toString('latin1');
      if (!/^HTTP\/1\.[01] 200( |$)/.test(statusLine)) return fail(new Error(`the proxy ${redactUrl(proxy.href)} answered "${statusLine}" to CONNECT ${target}`));
      const rest = head.subarray(end + 4);
      if (rest.length > 0) socket.unshift(rest);
      resolvePromise();
    };
    const onEnd = () => fail(new Error(`the proxy ${redactUrl(proxy.href)} closed the connection on CONNECT ${target}`));
    socket.on('data', onData);
    socket.once('error', fail);
    socket.once('end', onEnd);
    socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${auth ? `Proxy-Authorization: ${auth}\r\n` : ''}\r\n`);
  });
  return new Promise((resolvePromise, reject) => {
    const tls = tlsConnect({ ...serverTls, socket, host, ...(serverTls.servername === undefined && !isIP(host) ? { servername: host } : {}) });
    tls.once('secureConnect', () => {
      tls.off('error', reject);
      resolvePromise(tls);
    });
    tls.once('error', reject);
  });
}
