import { describe, expect, it } from 'vitest';
import { checkBasicAuth, credentialsFromEnv } from '../../../../src/state/server/credentials.js';
import { isLoopbackHost, parseListenAddress } from '../../../../src/state/server/listen-address.js';
import { parseStateHeader } from '../../../../src/state/state-document.js';
import { checkStateKey } from '../../../../src/state/state-key.js';
import { decideUpdate } from '../../../../src/state/store/update-rules.js';

const L = 'lineage-1';
const header = (serial: number, lineage = L, empty = false) => ({ serial, lineage, empty });

describe('decideUpdate', () => {
  it('stores the first version and a higher serial', () => {
    expect(decideUpdate(undefined, header(1), 'a').kind).toBe('store');
    expect(decideUpdate({ header: header(1), sha256: 'a' }, header(2), 'b').kind).toBe('store');
  });
  it('refuses a lower serial', () => {
    expect(decideUpdate({ header: header(3), sha256: 'a' }, header(2), 'b')).toMatchObject({ kind: 'refuse' });
  });
  it('treats the same serial with the same bytes as a resend, with other bytes as a refusal', () => {
    expect(decideUpdate({ header: header(3), sha256: 'a' }, header(3), 'a').kind).toBe('identical');
    expect(decideUpdate({ header: header(3), sha256: 'a' }, header(3), 'b').kind).toBe('refuse');
  });
  it('refuses another lineage over a non-empty state, allows it over an empty one', () => {
    expect(decideUpdate({ header: header(3), sha256: 'a' }, header(9, 'other'), 'b').kind).toBe('refuse');
    expect(decideUpdate({ header: header(3, L, true), sha256: 'a' }, header(1, 'other'), 'b').kind).toBe('store');
  });
});

describe('parseStateHeader', () => {
  it('reads serial and lineage, and calls a state without instances or outputs empty', () => {
    const doc = (o: object) => Buffer.from(JSON.stringify({ version: 4, serial: 2, lineage: 'x', ...o }));
    expect(parseStateHeader(doc({ resources: [] }))).toEqual({ ok: true, header: { serial: 2, lineage: 'x', empty: true } });
    expect(parseStateHeader(doc({ resources: [{ instances: [{}] }] }))).toMatchObject({ header: { empty: false } });
    expect(parseStateHeader(doc({ outputs: { a: { value: 1 } } }))).toMatchObject({ header: { empty: false } });
    expect(parseStateHeader(Buffer.from('{"version":4,"lineage":"x"}')).ok).toBe(false);
  });
});

describe('listen address', () => {
  it('parses host:port and [v6]:port, and knows loopback from exposed', () => {
    expect(parseListenAddress('127.0.0.1:8787')).toEqual({ host: '127.0.0.1', port: 8787, loopback: true });
    expect(parseListenAddress('[::1]:0')).toEqual({ host: '::1', port: 0, loopback: true });
    expect(parseListenAddress('0.0.0.0:80')).toMatchObject({ loopback: false });
    expect(parseListenAddress('10.1.2.3:80')).toMatchObject({ loopback: false });
    expect(parseListenAddress('localhost:1')).toMatchObject({ loopback: true });
    expect(parseListenAddress('8787')).toHaveProperty('problem');
    expect(parseListenAddress(':8787')).toHaveProperty('problem');
    expect(parseListenAddress('1.2.3.4:70000')).toHaveProperty('problem');
    expect(isLoopbackHost('::')).toBe(false);
    expect(isLoopbackHost('::ffff:127.0.0.1')).toBe(true);
  });
});

describe('credentials', () => {
  it('come from both variables or neither', () => {
    expect(credentialsFromEnv({})).toBeUndefined();
    expect(credentialsFromEnv({ DEPLOY_STATE_USERNAME: 'u', DEPLOY_STATE_PASSWORD: 'p' })).toEqual({ username: 'u', password: 'p' });
    expect(credentialsFromEnv({ DEPLOY_STATE_USERNAME: 'u' })).toHaveProperty('problem');
    expect(credentialsFromEnv({ DEPLOY_STATE_PASSWORD: 'p' })).toHaveProperty('problem');
  });
  it('check a basic-auth header', () => {
    const c = { username: 'u', password: 'p:q' };
    const h = (s: string) => `Basic ${Buffer.from(s).toString('base64')}`;
    expect(checkBasicAuth(h('u:p:q'), c)).toBe(true);
    expect(checkBasicAuth(h('u:p'), c)).toBe(false);
    expect(checkBasicAuth(h('v:p:q'), c)).toBe(false);
    expect(checkBasicAuth(undefined, c)).toBe(false);
    expect(checkBasicAuth('Bearer x', c)).toBe(false);
  });
});

describe('state keys', () => {
  it('accept group-target names and refuse traversal and the admin prefix', () => {
    expect(checkStateKey('g1-all')).toBeUndefined();
    expect(checkStateKey('team/g1-web')).toBeUndefined();
    expect(checkStateKey('../x')).toBeDefined();
    expect(checkStateKey('_deploy/v1/states')).toBeDefined();
    expect(checkStateKey('')).toBeDefined();
    expect(checkStateKey('a//b')).toBeDefined();
  });
});
