import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import {
  Kysely,
  PostgresDialect,
  SqliteDialect,
  type SqliteDatabase,
  type Transaction,
} from 'kysely';
import pg from 'pg';
import { prepareStatementsPerConnection } from './prepared-statements.js';
import type { DB } from './types.js';
import { startWalCheckpointer } from './wal-checkpointer.js';

export type Dialect = 'sqlite' | 'postgres';
export type Executor = Kysely<DB> | Transaction<DB>;

export interface Database {
  db: Kysely<DB>;
  dialect: Dialect;
  close(): Promise<void>;
}

// PostgreSQL returns COUNT(*) and BIGINT as strings; our counts always fit a JS number.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10));

export function dialectOf(url: string): Dialect {
  return url.startsWith('sqlite:') ? 'sqlite' : 'postgres';
}

/** The absolute path of the SQLite file a URL names when that file does not exist yet; null otherwise. */
export function missingSqliteFile(url: string): string | null {
  if (dialectOf(url) !== 'sqlite') return null;
  const file = sqliteFile(url);
  return file === ':memory:' || existsSync(file) ? null : path.resolve(file);
}

function sqliteFile(url: string): string {
  const file = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
  return file === '' ? ':memory:' : file;
}

const STATEMENT_CACHE_SIZE = 512;

/**
 * Kysely's SQLite driver prepares every query anew; preparing is a large share of a small query's
 * cost. Statements are reusable, so keep the most recent ones by their SQL text (bounded: lists
 * with `in (...)` of varying length make distinct texts).
 */
function withStatementCache(sqlite: SQLite.Database): SqliteDatabase {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      let statement = statements.get(sql);
      if (statement) {
        // Re-inserted so the map's order is least recently used first.
        statements.delete(sql);
      } else {
        statement = sqlite.prepare(sql);
        if (statements.size >= STATEMENT_CACHE_SIZE)
          statements.delete(statements.keys().next().value!);
      }
      statements.set(sql, statement);
      return statement;
    },
  };
}

const DEFAULT_WAL_AUTOCHECKPOINT = 1000;

/** WAL checkpoints on a thread of their own (wal-checkpointer.ts); on SQLite's own schedule again if it fails. */
function checkpointOffThread(sqlite: SQLite.Database, file: string) {
  const onCommitAgain = (error: string) => {
    try {
      if (sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${DEFAULT_WAL_AUTOCHECKPOINT}`);
      process.emitWarning(`SQLite checkpoints run on commit again: ${error}`, 'VoxkeyWarning');
    } catch {
      // the connection is closing: nothing left to checkpoint for
    }
  };
  sqlite.pragma('wal_autocheckpoint = 0');
  try {
    return startWalCheckpointer(file, onCommitAgain);
  } catch (err) {
    onCommitAgain(err instanceof Error ? err.message : String(err));
    return null;
  }
}

export interface OpenOptions {
  poolSize?: number;
  /** PostgreSQL: how long to wait for a new connection (or a free pooled one) before the query fails. */
  connectTimeoutMs?: number;
  /** PostgreSQL: the server cancels any statement that runs longer (0 = no limit). */
  statementTimeoutMs?: number;
  /** PostgreSQL: each connection prepares the statements it runs once (default true; prepared-statements.ts). */
  preparedStatements?: boolean;
}

export function openDatabase(url: string, options: OpenOptions = {}): Database {
  if (dialectOf(url) === 'sqlite') {
    const file = sqliteFile(url);
    if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    const sqlite = new SQLite(file);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('busy_timeout = 5000');
    // Freed pages (a finished job's recording, an erased record) are overwritten with zeros, not left in the file.
    sqlite.pragma('secure_delete = ON');
    // LIKE filters are case-sensitive on PostgreSQL; make SQLite agree.
    sqlite.pragma('case_sensitive_like = ON');
    const checkpointer = file === ':memory:' ? null : checkpointOffThread(sqlite, file);
    const db = new Kysely<DB>({
      dialect: new SqliteDialect({ database: withStatementCache(sqlite) }),
    });
    return {
      db,
      dialect: 'sqlite',
      close: async () => {
        await checkpointer?.stop();
        await db.destroy();
      },
    };
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 0,
    ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
  });
  // A client's error (the server restarting, a dropped connection) must not crash the process: an idle
  // client's reaches the pool; one in use reaches only the client (pg-pool detaches its own listener
  // while a query runs), and that query fails with it. The next query takes a new connection.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  if (options.preparedStatements ?? true) prepareStatementsPerConnection(pool);
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return { db, dialect: 'postgres', close: () => db.destroy() };
}
