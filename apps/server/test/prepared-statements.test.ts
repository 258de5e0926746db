import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { type Database, openDatabase } from '../src/db/connection.js';
import { createTestDatabase, TEST_DIALECT, type TestDatabase } from './support/database.js';
import { testConfig } from './support/context.js';

/** The statements this session (one pooled connection) has prepared through the protocol. */
async function preparedHere(db: Kysely<any>) {
  const { rows } = await sql<{
    name: string;
    statement: string;
  }>`select name, statement from pg_prepared_statements where not from_sql`.execute(db);
  return rows;
}

const probeById = (db: Kysely<any>, id: number) =>
  db.selectFrom('prepared_probe').selectAll().where('id', '=', id).execute();

describe('prepared statements (PostgreSQL)', () => {
  it('are on by default and can be turned off', () => {
    expect(testConfig().DATABASE_PREPARED_STATEMENTS).toBe(true);
    expect(testConfig({ DATABASE_PREPARED_STATEMENTS: 'false' }).DATABASE_PREPARED_STATEMENTS).toBe(
      false,
    );
  });

  it('a value that is not a boolean stops start-up with a message naming the variable', () => {
    expect(() => loadConfig({ DATABASE_PREPARED_STATEMENTS: 'maybe' })).toThrow(
      /Invalid configuration:\n {2}DATABASE_PREPARED_STATEMENTS: /,
    );
  });

  describe.skipIf(TEST_DIALECT !== 'postgres')('on a database', () => {
    let test: TestDatabase;
    let database: Database;
    let other: pg.Client;

    beforeEach(async () => {
      test = await createTestDatabase();
      database = openDatabase(test.url, { poolSize: 1 });
      await sql`create table prepared_probe (id integer primary key, name text not null)`.execute(
        database.db,
      );
      await sql`insert into prepared_probe values (1, 'one'), (2, 'two')`.execute(database.db);
      other = new pg.Client({ connectionString: test.url });
      await other.connect();
    });

    afterEach(async () => {
      await other.end();
      await database.close();
      await test.cleanup();
    });

    it('prepares a statement on its second call, once per connection, and binds each call its own values', async () => {
      const db = database.db as Kysely<any>;
      const probes = async () =>
        (await preparedHere(db)).filter((p) => p.statement.includes('prepared_probe'));
      expect(await probeById(db, 1)).toEqual([{ id: 1, name: 'one' }]);
      expect(await probes()).toEqual([]);
      expect(await probeById(db, 2)).toEqual([{ id: 2, name: 'two' }]);
      expect(await probeById(db, 1)).toEqual([{ id: 1, name: 'one' }]);
      const prepared = await probes();
      expect(prepared).toHaveLength(1);
      // Named by the text's hash, so another process cannot mean another statement by the name.
      expect(prepared[0]!.name).toMatch(/^voxkey_[0-9a-f]{32}_0$/);
    });

    it('a statement node-postgres closed after failing to send its values is prepared again', async () => {
      const db = database.db as Kysely<any>;
      await probeById(db, 1);
      const unserialisable = {
        toJSON() {
          throw new Error('cannot serialise');
        },
      };
      await expect(probeById(db, unserialisable as unknown as number)).rejects.toThrow(
        'cannot serialise',
      );
      expect(await probeById(db, 2)).toEqual([{ id: 2, name: 'two' }]);
    });

    it('runs unnamed when turned off', async () => {
      const unprepared = openDatabase(test.url, { poolSize: 1, preparedStatements: false });
      try {
        await probeById(unprepared.db as Kysely<any>, 1);
        await probeById(unprepared.db as Kysely<any>, 1);
        expect(await preparedHere(unprepared.db as Kysely<any>)).toEqual([]);
      } finally {
        await unprepared.close();
      }
    });

    it("a statement whose columns another process's migration changed runs again, prepared anew", async () => {
      await probeById(database.db as Kysely<any>, 1);
      await probeById(database.db as Kysely<any>, 1);
      await other.query('alter table prepared_probe add column note text');
      expect(await probeById(database.db as Kysely<any>, 1)).toEqual([
        { id: 1, name: 'one', note: null },
      ]);
    });

    it('inside a transaction, the transaction fails once and the next one works', async () => {
      const db = database.db as Kysely<any>;
      await probeById(db, 1);
      await probeById(db, 1);
      await other.query('alter table prepared_probe add column note text');
      await expect(db.transaction().execute((trx) => probeById(trx, 1))).rejects.toThrow(
        /cached plan must not change result type/,
      );
      expect(await db.transaction().execute((trx) => probeById(trx, 2))).toEqual([
        { id: 2, name: 'two', note: null },
      ]);
    });
  });
});
