import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSqlite } from '../../../../src/state/store/sqlite.js';
import { DATABASE_FILE, SqliteStateStore } from '../../../../src/state/store/sqlite-store.js';
import { tempDir } from '../../../support/cli.js';
import { stateDoc } from '../../../support/state-backend.js';

describe('the SQLite store', () => {
  it('brings a schema-1 database (before deletions) up to date, keeping its versions and locks', async () => {
    const { dir, cleanup } = await tempDir();
    const { DatabaseSync } = loadSqlite();
    const v1 = new DatabaseSync(join(dir, DATABASE_FILE));
    v1.exec(`
      CREATE TABLE versions (id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, serial INTEGER NOT NULL, lineage TEXT NOT NULL,
        empty INTEGER NOT NULL, sha256 TEXT NOT NULL, size INTEGER NOT NULL, created TEXT NOT NULL, body BLOB NOT NULL);
      CREATE TABLE locks (key TEXT PRIMARY KEY, id TEXT NOT NULL, info TEXT NOT NULL, created TEXT NOT NULL);
      PRAGMA user_version = 1;`);
    const body = stateDoc(3, 'l-1');
    v1.prepare('INSERT INTO versions (key, serial, lineage, empty, sha256, size, created, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)').run('g1-all', 3, 'l-1', 0, 'abc', body.length, '2026-01-01T00:00:00.000Z', body);
    v1.prepare('INSERT INTO locks (key, id, info, created) VALUES (?, ?, ?, ?)').run('g1-all', 'L1', '{"ID":"L1","Who":"old@host"}', '2026-01-01T00:00:00.000Z');
    v1.close();

    const store = SqliteStateStore.open(dir);
    try {
      expect(await store.versions('g1-all')).toEqual([expect.objectContaining({ serial: 3, deleted: false })]);
      expect((await store.read('g1-all'))!.body.equals(body)).toBe(true);
      expect(await store.lockOf('g1-all')).toEqual({ ID: 'L1', Who: 'old@host' });
      expect((await store.delete('g1-all', 'L1')).kind).toBe('deleted');
      expect(await store.read('g1-all')).toBeUndefined();
    } finally {
      await store.close();
      await cleanup();
    }
  });

  it('GIVEN a lock record that is not a LockInfo (a damaged row) THEN reading the lock fails naming the state and the file, and no write goes ahead', async () => {
    const { dir, cleanup } = await tempDir();
    const store = SqliteStateStore.open(dir);
    try {
      const { DatabaseSync } = loadSqlite();
      const db = new DatabaseSync(join(dir, DATABASE_FILE));
      db.prepare('INSERT INTO locks (key, id, info, created) VALUES (?, ?, ?, ?)').run('g1-all', 'L1', '{"Who":"x"}', '2026-01-01T00:00:00.000Z');
      db.close();
      await expect(store.lockOf('g1-all')).rejects.toThrow(`the lock record of state "g1-all" in ${join(dir, DATABASE_FILE)}: ID: `);
      await expect(store.update('g1-all', stateDoc(1, 'l-1'), { serial: 1, lineage: 'l-1', empty: false }, undefined)).rejects.toThrow(/the lock record of state "g1-all"/);
      expect(await store.versions('g1-all')).toEqual([]);
    } finally {
      await store.close();
      await cleanup();
    }
  });
});
