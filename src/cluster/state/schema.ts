/**
 * The layout of the state database, versioned with SQLite's `user_version`. A new layout adds a
 * migration at the end of MIGRATIONS (never edits one): a database at version n runs
 * migrations n..latest in one transaction at open, so an old data directory is upgraded in
 * place; one newer than this troupe is refused, never downgraded or wiped.
 */
import type { DatabaseSync } from 'node:sqlite';

/** One step of the layout: turns a database at version n into one at n+1. */
export type Migration = (db: DatabaseSync) => void;

export const MIGRATIONS: readonly Migration[] = [
  // 0 -> 1: objects as the store keeps them (JSON plus what selectors filter on), and settings.
  (db) =>
    db.exec(`
      CREATE TABLE objects (
        storage   TEXT NOT NULL,
        key       TEXT NOT NULL,
        namespace TEXT NOT NULL,
        name      TEXT NOT NULL,
        uid       TEXT NOT NULL,
        rv        INTEGER NOT NULL,
        labels    TEXT NOT NULL,
        fields    TEXT NOT NULL,
        json      TEXT NOT NULL,
        PRIMARY KEY (storage, key)
      );
      CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
      INSERT INTO settings (name, value) VALUES ('rv', '1');
    `),
];

export const SCHEMA_VERSION = MIGRATIONS.length;
