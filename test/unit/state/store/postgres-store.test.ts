import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { LOCK_CLASS, PostgresStateStore } from '../../../../src/state/store/postgres-store.js';
import { StoreUnavailableError } from '../../../../src/state/store/store.js';
import { sharedPostgres, stopSharedPostgres } from '../../../support/postgres-server.js';
import { call, lockInfo, startTestBackend, stateDoc } from '../../../support/state-backend.js';

afterAll(stopSharedPostgres, 60_000);

describe('the PostgreSQL store', () => {
  it('waits a bounded time for a frozen server\'s transaction on the same key (then: unavailable), and goes on once it ends', async () => {
    const db = await (await sharedPostgres()).createDatabase();
    const store = await PostgresStateStore.open({ connectionString: db.url, where: db.urlWithoutPassword, lockWaitMs: 1_000 });
    // another server, frozen in the middle of a write on "k": its transaction holds the key
    const frozen = new pg.Client({ connectionString: db.url });
    await frozen.connect();
    try {
      await frozen.query('BEGIN');
      await frozen.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_CLASS, 'k']);
      const started = Date.now();
      const err = await store.lock('k', lockInfo()).catch((e: unknown) => e);
      const waited = Date.now() - started;
      expect(err).toBeInstanceOf(StoreUnavailableError);
      expect(String((err as Error).message)).toContain(db.urlWithoutPassword);
      expect(waited).toBeGreaterThanOrEqual(900);
      expect(waited).toBeLessThan(10_000);
      // another key is not held up at all
      expect((await store.lock('other', lockInfo())).kind).toBe('acquired');
      await frozen.query('ROLLBACK');
      expect((await store.lock('k', lockInfo())).kind).toBe('acquired');
    } finally {
      await frozen.end();
      await store.close();
    }
  });

  it('answers 500 (not 503, never 404) when the database answers with an error that waiting will not cure', async () => {
    const backend = await startTestBackend({ kind: 'postgres' });
    const admin = new pg.Client({ connectionString: backend.data });
    await admin.connect();
    try {
      expect((await call(`${backend.url}/k`, 'POST', stateDoc(1, 'l-1'))).status).toBe(200);
      await admin.query('ALTER TABLE deploy_state_versions RENAME TO moved_away');
      const get = await call(`${backend.url}/k`, 'GET');
      expect(get.status).toBe(500);
      expect(get.json().error).toMatch(/deploy_state_versions/);
      await admin.query('ALTER TABLE moved_away RENAME TO deploy_state_versions');
      expect((await call(`${backend.url}/k`, 'GET')).status).toBe(200);
    } finally {
      await admin.end();
      await backend.stop();
    }
  });

  it('serves with a role that may only read and write the tables, once they exist', async () => {
    const server = await sharedPostgres();
    const db = await server.createDatabase();
    await (await PostgresStateStore.open({ connectionString: db.url, where: db.urlWithoutPassword })).close(); // the owner creates them
    await server.asSuperuser(
      db.name,
      `CREATE ROLE rw_${db.name} LOGIN PASSWORD 'rw-pw'; REVOKE CREATE ON SCHEMA public FROM PUBLIC;
       GRANT SELECT, INSERT, DELETE ON deploy_state_versions, deploy_state_locks TO rw_${db.name};
       GRANT SELECT ON deploy_state_schema TO rw_${db.name}; GRANT USAGE ON SEQUENCE deploy_state_versions_id_seq TO rw_${db.name}`,
    );
    const rw = await PostgresStateStore.open({ connectionString: db.url.replace(/\/\/deploy:[^@]*@/, `//rw_${db.name}:rw-pw@`), where: 'rw' });
    try {
      expect((await rw.lock('k', lockInfo())).kind).toBe('acquired');
      expect((await rw.update('k', stateDoc(1, 'l-1'), { serial: 1, lineage: 'l-1', empty: false }, (await rw.lockOf('k'))!.ID)).kind).toBe('stored');
      expect((await rw.read('k'))!.serial).toBe(1);
    } finally {
      await rw.close();
    }
  });
});
