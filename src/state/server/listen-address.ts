import { isIP } from 'node:net';

export interface ListenAddress {
  readonly host: string;
  readonly port: number;
  /** Only this machine can connect. */
  readonly loopback: boolean;
}

export const DEFAULT_LISTEN = '127.0.0.1:8787';

/**
 * Parses `HOST:PORT` or `[IPv6]:PORT` (port 0: any free port). Returns a problem sentence
 * instead of throwing so the caller reports it with the flag's name.
 */
export function parseListenAddress(text: string): ListenAddress | { problem: string } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text.trim());
  if (!m) return { problem: `"${text}" is not HOST:PORT (e.g. 127.0.0.1:8787, [::1]:8787, 0.0.0.0:8787)` };
  const host = (m[1] ?? m[2] ?? '').trim();
  const port = Number(m[3]);
  if (!host) return { problem: `"${text}" has no host (write 127.0.0.1:${port} for this machine only)` };
  if (port > 65535) return { problem: `port ${port} is out of range (0-65535)` };
  if (m[1] !== undefined && isIP(host) !== 6) return { problem: `"${host}" in brackets is not an IPv6 address` };
  return { host, port, loopback: isLoopbackHost(host) };
}

/** 127.0.0.0/8, ::1 and `localhost`; `0.0.0.0`/`::` listen on every interface. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (h.startsWith('::ffff:')) return isLoopbackHost(h.slice('::ffff:'.length));
  return false;
}

/** How to write the host in a URL. */
export function urlHost(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}
