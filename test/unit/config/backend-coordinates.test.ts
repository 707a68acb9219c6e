import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { httpBackend, keyedBackend, parseBackendCoordinates, parseMigrateBackends, tofuBackendVariables } from '../../../src/config/backend-coordinates.js';
import { requireStateBackend } from '../../../src/config/state-choice.js';
import { ConfigError } from '../../../src/errors.js';

function thrown(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('nothing was thrown');
}

describe('BackendCoordinates: where the states are, parsed once', () => {
  it('GIVEN no TF_HTTP_ADDRESS THEN the embedded backend, in the state directory', () => {
    expect(parseBackendCoordinates({ DEPLOY_STATE_DIR: '/s' })).toEqual({ kind: 'embedded', dataDir: join('/s', 'state') });
    expect(parseBackendCoordinates({ TF_HTTP_ADDRESS: '', HOME: '/home/u' })).toEqual({ kind: 'embedded', dataDir: '/home/u/.local/state/k8s-deployer/state' });
  });

  it('GIVEN TF_HTTP_ADDRESS alone THEN an http backend without lock or unlock address, LOCK/UNLOCK left to their defaults', () => {
    const b = parseBackendCoordinates({ TF_HTTP_ADDRESS: 'https://state.example.test/team/' });
    expect(b).toMatchObject({ kind: 'http', addressName: 'TF_HTTP_ADDRESS', address: 'https://state.example.test/team/', lockAddress: undefined, unlockAddress: undefined, lockMethod: undefined, unlockMethod: undefined });
    expect(b.kind === 'http' && b.url.pathname).toBe('/team/');
  });

  it('GIVEN the lock and unlock addresses, methods and credentials THEN each is a field; tofu gets them keyed per state, the rest of TF_HTTP_* unread', () => {
    const env = {
      TF_HTTP_ADDRESS: 'https://s.test/base',
      TF_HTTP_LOCK_ADDRESS: 'https://s.test/lock/',
      TF_HTTP_UNLOCK_ADDRESS: 'https://s.test/unlock',
      TF_HTTP_LOCK_METHOD: 'POST',
      TF_HTTP_UNLOCK_METHOD: 'DELETE',
      TF_HTTP_USERNAME: 'team',
      TF_HTTP_PASSWORD: 'pw',
      TF_HTTP_RETRY_MAX: '5',
      UNRELATED: 'x',
    };
    const b = parseBackendCoordinates(env);
    if (b.kind !== 'http') throw new Error('expected http');
    expect(b).toMatchObject({ lockAddress: 'https://s.test/lock/', unlockAddress: 'https://s.test/unlock', lockMethod: 'POST', unlockMethod: 'DELETE', username: 'team', password: 'pw', tofuSettings: { TF_HTTP_RETRY_MAX: '5' } });
    expect(tofuBackendVariables(keyedBackend(b, 'g1-all'))).toEqual({
      TF_HTTP_ADDRESS: 'https://s.test/base/g1-all',
      TF_HTTP_LOCK_ADDRESS: 'https://s.test/lock/g1-all',
      TF_HTTP_UNLOCK_ADDRESS: 'https://s.test/unlock/g1-all',
      TF_HTTP_LOCK_METHOD: 'POST',
      TF_HTTP_UNLOCK_METHOD: 'DELETE',
      TF_HTTP_USERNAME: 'team',
      TF_HTTP_PASSWORD: 'pw',
      TF_HTTP_RETRY_MAX: '5',
    });
  });

  it.each([
    ['TF_HTTP_ADDRESS', { TF_HTTP_ADDRESS: 'not a url' }, 'TF_HTTP_ADDRESS is not a URL', 'expected http(s)://host:port[/base]'],
    ['TF_HTTP_LOCK_ADDRESS', { TF_HTTP_ADDRESS: 'http://s.test/', TF_HTTP_LOCK_ADDRESS: 'lock' }, 'TF_HTTP_LOCK_ADDRESS is not a URL', 'expected http(s)://host:port[/base]'],
    ['TF_HTTP_UNLOCK_ADDRESS', { TF_HTTP_ADDRESS: 'http://s.test/', TF_HTTP_UNLOCK_ADDRESS: '::' }, 'TF_HTTP_UNLOCK_ADDRESS is not a URL', 'expected http(s)://host:port[/base]'],
    ['TF_HTTP_ADDRESS', { TF_HTTP_ADDRESS: 'http://u:p@s.test/' }, 'TF_HTTP_ADDRESS carries credentials', 'put credentials in TF_HTTP_USERNAME and TF_HTTP_PASSWORD, never in the URL'],
  ])('a bad %s is a ConfigError (exit 2) naming the variable', (name, env, summary, message) => {
    const err = thrown(() => parseBackendCoordinates(env));
    expect(err.exitCode).toBe(2);
    expect(err.message.split('\n')[0]).toBe(summary);
    expect(err.issues).toEqual([{ where: name, message }]);
  });

  it('migrate: --to with TF_HTTP_* credentials, --from with DEPLOY_MIGRATE_FROM_*; a bad --from names the flag', () => {
    const env = { TF_HTTP_USERNAME: 'to-user', TF_HTTP_PASSWORD: 'to-pw', DEPLOY_MIGRATE_FROM_USERNAME: 'from-user', DEPLOY_MIGRATE_FROM_PASSWORD: 'from-pw' };
    const { to, from } = parseMigrateBackends({ to: 'http://to.test/', from: 'http://from.test/' }, env);
    expect(to).toMatchObject({ addressName: '--to', username: 'to-user', password: 'to-pw' });
    expect(from).toMatchObject({ addressName: '--from', username: 'from-user', password: 'from-pw' });
    expect(thrown(() => parseMigrateBackends({ to: 'http://to.test/', from: 'from' }, env)).issues).toEqual([{ where: '--from', message: 'expected http(s)://host:port[/base]' }]);
  });

  it('plan/apply/destroy: the state choice first (CI without TF_HTTP_ADDRESS is refused), then the coordinates', () => {
    expect(thrown(() => requireStateBackend({ CI: 'true' })).issues[0]!.where).toBe('TF_HTTP_ADDRESS');
    expect(requireStateBackend({ CI: 'true', DEPLOY_STATE: 'embedded', DEPLOY_STATE_DIR: '/s' })).toEqual({ kind: 'embedded', dataDir: join('/s', 'state') });
    expect(requireStateBackend({ CI: 'true', TF_HTTP_ADDRESS: 'http://s.test/' }).kind).toBe('http');
    expect(httpBackend('--to', 'http://s.test/x').url.href).toBe('http://s.test/x');
  });
});
