/**
 * The proxy of an API request, chosen as Go's http.ProxyFromEnvironment chooses it
 * (golang.org/x/net/http/httpproxy), and the cluster's proxy-url over it (proxy-tunnel.ts).
 */
import { describe, expect, it } from 'vitest';
import { proxyAuthorization, proxyFor, useProxy } from '../../../src/kube/proxy-tunnel.js';

const server = new URL('https://api.example.com:6443');

describe('proxyFor', () => {
  it('GIVEN a proxy-url THEN it is used, whatever the environment says', () => {
    expect(proxyFor(server, 'http://p:3128', { NO_PROXY: '*' })?.href).toBe('http://p:3128/');
  });
  it('GIVEN HTTPS_PROXY (or https_proxy) THEN an https server goes through it; HTTP_PROXY is for http servers, not under CGI', () => {
    expect(proxyFor(server, undefined, { HTTPS_PROXY: 'p:3128' })?.href).toBe('http://p:3128/');
    expect(proxyFor(server, undefined, { https_proxy: 'https://p:443' })?.href).toBe('https://p/');
    expect(proxyFor(server, undefined, { HTTP_PROXY: 'http://p:3128' })).toBeUndefined();
    const plain = new URL('http://api.example.com:8080');
    expect(proxyFor(plain, undefined, { HTTP_PROXY: 'http://p:3128' })?.host).toBe('p:3128');
    expect(proxyFor(plain, undefined, { HTTP_PROXY: 'http://p:3128', REQUEST_METHOD: 'GET' })).toBeUndefined();
  });
  it('GIVEN a loopback server THEN never a proxy from the environment', () => {
    expect(proxyFor(new URL('https://127.0.0.1:6443'), undefined, { HTTPS_PROXY: 'http://p:3128' })).toBeUndefined();
    expect(proxyFor(new URL('https://localhost:6443'), undefined, { HTTPS_PROXY: 'http://p:3128' })).toBeUndefined();
    expect(proxyFor(new URL('https://[::1]:6443'), undefined, { HTTPS_PROXY: 'http://p:3128' })).toBeUndefined();
  });
});

describe('useProxy: NO_PROXY as Go reads it', () => {
  const cases: [host: string, port: string, noProxy: string, proxied: boolean][] = [
    ['api.example.com', '6443', '', true],
    ['api.example.com', '6443', '*', false],
    ['api.example.com', '6443', 'example.com', false],
    ['example.com', '6443', 'example.com', false],
    ['example.com', '6443', '.example.com', true],
    ['api.example.com', '6443', '.example.com', false],
    ['api.example.com', '6443', '*.example.com', false],
    ['notexample.com', '6443', 'example.com', true],
    ['api.example.com', '6443', 'example.com:443', true],
    ['api.example.com', '6443', 'example.com:6443', false],
    ['10.1.2.3', '6443', '10.0.0.0/8', false],
    ['11.1.2.3', '6443', '10.0.0.0/8', true],
    ['10.1.2.3', '6443', ' 10.1.2.3 , other', false],
    ['10.1.2.3', '6443', '10.1.2.3:443', true],
    ['fd00::5', '6443', 'fd00::/8', false],
    ['fd00::5', '6443', '[fd00::5]:6443', false],
  ];
  it.each(cases)('%s:%s with NO_PROXY=%j: proxied %s', (host, port, noProxy, proxied) => {
    expect(useProxy(host, port, noProxy)).toBe(proxied);
  });
});

describe('proxyAuthorization', () => {
  it("GIVEN a user and password in the proxy URL THEN Basic of them, decoded", () => {
    expect(proxyAuthorization(new URL('http://me%40corp:p%3Aw@p:3128'))).toBe(`Basic ${Buffer.from('me@corp:p:w').toString('base64')}`);
    expect(proxyAuthorization(new URL('http://p:3128'))).toBeUndefined();
  });
});
