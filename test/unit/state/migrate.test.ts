import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { call, lockInfo, startTestBackend, stateDoc, type TestBackend } from '../../support/state-backend.js';

const L1 = 'c0ffee00-0000-4000-8000-0000000000a1';
const L2 = 'c0ffee00-0000-4000-8000-0000000000a2';
const L3 = 'c0ffee00-0000-4000-8000-0000000000a3';

/** GIVEN a laptop's data directory (the embedded store) with two states, and a shared backend. */
describe('deploy state migrate', () => {
  let laptop: TestBackend;
  let shared: TestBackend;
  const creds = { username: 'ops', password: 'shared-pw-9' };
  const env = () => ({ TF_HTTP_USERNAME: creds.username, TF_HTTP_PASSWORD: creds.password, DEPLOY_RUN_ID: 'migrate test' });
  const auth = { Authorization: `Basic ${Buffer.from(`${creds.username}:${creds.password}`).toString('base64')}` };

  beforeEach(async () => {
    laptop = await startTestBackend();
    shared = await startTestBackend({ credentials: creds });
    for (const s of [1, 2, 3]) expect((await call(`${laptop.url}/demo-all`, 'POST', stateDoc(s, L1, { resources: 2 }))).status).toBe(200);
    expect((await call(`${laptop.url}/demo-web`, 'POST', stateDoc(1, L2))).status).toBe(200);
  });
  afterEach(async () => {
    await laptop.stop();
    await shared.stop();
  });

  it('copies the newest version of every state, bytes, serial and lineage unchanged; a second run is a no-op', async () => {
    const r = await runCli(['state', 'migrate', '--to', shared.url, '--data', laptop.data], env());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`demo-all: copied serial 3 (lineage ${L1})`);
    expect(r.stdout).toContain(`demo-web: copied serial 1 (lineage ${L2})`);
    expect(r.stderr).toContain(`export TF_HTTP_ADDRESS=${shared.url}`);
    expect(r.stderr).toContain('deploy plan');
    for (const key of ['demo-all', 'demo-web']) {
      expect((await shared.store.read(key))!.body.equals((await laptop.store.read(key))!.body), key).toBe(true);
      expect(await shared.store.lockOf(key), `${key} unlocked at the target`).toBeUndefined();
      expect(await laptop.store.lockOf(key), `${key} unlocked at the source`).toBeUndefined();
    }
    expect(await shared.store.versions('demo-all')).toHaveLength(1);

    const again = await runCli(['state', 'migrate', '--to', shared.url, '--data', laptop.data, '--json'], env());
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual([
      { key: 'demo-all', result: 'already-there', serial: 3, lineage: L1 },
      { key: 'demo-web', result: 'already-there', serial: 1, lineage: L2 },
    ]);
    expect(await shared.store.versions('demo-all'), 'nothing written the second time').toHaveLength(1);
  });

  it('leaves a deleted state out (its newest version is a deletion)', async () => {
    expect((await call(`${laptop.url}/demo-web`, 'DELETE')).status).toBe(200);
    const r = await runCli(['state', 'migrate', '--to', shared.url, '--data', laptop.data, '--json'], env());
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([{ key: 'demo-all', result: 'copied', serial: 3, lineage: L1 }]);
    expect(await shared.store.read('demo-web')).toBeUndefined();
  });

  it('refuses a target state of another lineage, one that is ahead, or the same serial with other bytes; copies the rest; exit 2', async () => {
    await call(`${shared.url}/demo-all`, 'POST', stateDoc(1, L3), auth);
    const other = await runCli(['state', 'migrate', '--to', shared.url, '--data', laptop.data], env());
    expect(other.code).toBe(2);
    expect(other.stdout).toContain(`demo-all: refused: the target holds another state: lineage ${L3} (serial 1)`);
    expect(other.stdout).toContain('demo-web: copied serial 1');
    expect(other.stderr).toContain('1 of 2 states were not migrated: demo-all');
    expect((await shared.store.read('demo-all'))!.lineage, 'the target keeps its state').toBe(L3);
    expect(await shared.store.lockOf('demo-all')).toBeUndefined();

    const ahead = await startTestBackend();
    try {
      await call(`${ahead.url}/demo-all`, 'POST', stateDoc(5, L1));
      const r = await runCli(['state', 'migrate', '--to', ahead.url, '--data', laptop.data, '--key', 'demo-all'], {});
      expect(r.code).toBe(2);
      expect(r.stdout).toContain('demo-all: refused: the target is ahead: serial 5 there, 3 here');
      expect((await ahead.store.read('demo-all'))!.serial).toBe(5);
      expect(await ahead.store.read('demo-web'), '--key limits the run to that state').toBeUndefined();

      await call(`${ahead.url}/demo-web`, 'POST', stateDoc(1, L2, { resources: 3 }));
      const same = await runCli(['state', 'migrate', '--to', ahead.url, '--data', laptop.data, '--key', 'demo-web'], {});
      expect(same.code).toBe(2);
      expect(same.stdout).toContain('demo-web: refused: serial 1 is at the target with other content');
    } finally {
      await ahead.stop();
    }
  });

  it('brings an older serial of the same lineage forward', async () => {
    await call(`${shared.url}/demo-all`, 'POST', stateDoc(2, L1), auth);
    const r = await runCli(['state', 'migrate', '--to', shared.url, '--data', laptop.data, '--key', 'demo-all'], env());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('demo-all: copied serial 3 (lineage');
    expect(r.stdout).toContain('over serial 2 of the same lineage');
    expect((await shared.store.read('demo-all'))!.serial).toBe(3);
  });

  it('refuses a state locked by another run on either side, naming the holder, and leaves that lock alone', async () => {
    const holder = lockInfo({ Who: 'cd demo run 9.1' });
    await call(`${laptop.url}/demo-web`, 'LOCK', holder);
    const r = await runCli(['state', 'migrate', '--to', shared.url, '--data', laptop.data], env());
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('demo-web: refused: locked at the source by ID');
    expect(r.stdout).toContain('held by cd demo run 9.1');
    expect((await laptop.store.lockOf('demo-web'))?.ID).toBe(holder.ID);
    expect(await shared.store.read('demo-web')).toBeUndefined();
    expect(await shared.store.lockOf('demo-all')).toBeUndefined();

    await call(`${laptop.url}/demo-web`, 'UNLOCK', { ID: holder.ID });
    await call(`${shared.url}/demo-web`, 'LOCK', holder, auth);
    const t = await runCli(['state', 'migrate', '--to', shared.url, '--data', laptop.data, '--key', 'demo-web'], env());
    expect(t.code).toBe(2);
    expect(t.stdout).toContain('demo-web: refused: locked at the target by ID');
    expect(await laptop.store.lockOf('demo-web'), 'the source lock is released again').toBeUndefined();
  });

  it('reads another backend with --from (its own credentials), and refuses the same backend as both', async () => {
    const r = await runCli(['state', 'migrate', '--from', laptop.url, '--to', shared.url], env());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('demo-all: copied serial 3');
    const same = await runCli(['state', 'migrate', '--from', `${shared.url}/`, '--to', shared.url], env());
    expect(same.code).toBe(2);
    expect(same.stderr).toContain('the source and the target are the same backend');
    const wrongPw = await runCli(['state', 'migrate', '--to', shared.url, '--data', laptop.data], { TF_HTTP_USERNAME: 'ops', TF_HTTP_PASSWORD: 'nope' });
    expect(wrongPw.code).toBe(3);
    expect(wrongPw.stderr).toContain('401');
    expect(await laptop.store.lockOf('demo-all'), 'a failure releases the source lock').toBeUndefined();
  });

  it('--help explains the laptop -> shared path and the refusals', async () => {
    const r = await runCli(['state', 'migrate', '--help'], {});
    expect(r.stdout).toContain('One laptop -> a shared backend');
    expect(r.stdout).toContain('DEPLOY_MIGRATE_FROM_USERNAME');
    expect((await runCli(['state', 'migrate'], {})).code).toBe(2);
  });
});
