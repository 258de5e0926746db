import net from 'node:net';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../src/db/connection.js';
import { isDatabaseUnavailable } from '../src/db/errors.js';
import { createTestDatabase, TEST_DIALECT } from './support/database.js';
import { testConfig } from './support/context.js';

/** Whether the database answers a query (the pool recovered from what the test did to it). */
async function answers(database: Database): Promise<boolean> {
  return (await sql<{ one: number }>`select 1 as one`.execute(database.db)).rows[0]?.one === 1;
}

describe('PostgreSQL pool timeouts', () => {
  it('are configurable and on by default', () => {
    const config = testConfig();
    expect(config.DATABASE_CONNECT_TIMEOUT_MS).toBe(5000);
    expect(config.DATABASE_STATEMENT_TIMEOUT_MS).toBe(30_000);
    expect(testConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '0' }).DATABASE_STATEMENT_TIMEOUT_MS).toBe(
      0,
    );
  });

  it('a server that accepts but never answers fails the query after the connect timeout, not never', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    const database = openDatabase(`postgres://voxkey@127.0.0.1:${port}/voxkey`, {
      poolSize: 1,
      connectTimeoutMs: 300,
    });
    const started = Date.now();
    try {
      await expect(sql`select 1`.execute(database.db)).rejects.toThrow(/timeout/i);
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      await database.close().catch(() => {});
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });

  it.skipIf(TEST_DIALECT !== 'postgres')(
    'a connection the server ends mid-query fails that query as an outage, in or out of a transaction, without crashing the process',
    async () => {
      const test = await createTestDatabase();
      const database = openDatabase(test.url, { poolSize: 2 });
      const admin = openDatabase(test.url, { poolSize: 1 });
      try {
        const endMidQuery = async (run: (db: typeof database.db) => Promise<unknown>) => {
          const running = run(database.db).then(
            () => null,
            (err: unknown) => err,
          );
          // the backend that runs pg_sleep, ended as a server restart ends every session
          for (let i = 0; i < 50; i++) {
            const ended = await sql<{ ended: boolean }>`
              select pg_terminate_backend(pid) as ended from pg_stat_activity
              where datname = current_database() and query like 'select pg_sleep%'`.execute(
              admin.db,
            );
            if (ended.rows.length > 0) break;
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
          return running;
        };
        const plain = await endMidQuery((db) => sql`select pg_sleep(5)`.execute(db));
        expect(isDatabaseUnavailable(plain), String(plain)).toBe(true);
        const inTransaction = await endMidQuery((db) =>
          db.transaction().execute((trx) => sql`select pg_sleep(5)`.execute(trx)),
        );
        expect(isDatabaseUnavailable(inTransaction), String(inTransaction)).toBe(true);
        expect(await answers(database)).toBe(true);
      } finally {
        await database.close();
        await admin.close();
        await test.cleanup();
      }
    },
  );

  it.skipIf(TEST_DIALECT !== 'postgres')(
    'cancels a statement that runs past the statement timeout',
    async () => {
      const test = await createTestDatabase();
      const database = openDatabase(test.url, { poolSize: 1, statementTimeoutMs: 200 });
      try {
        await expect(sql`select pg_sleep(2)`.execute(database.db)).rejects.toThrow(
          /statement timeout/,
        );
        expect(await answers(database)).toBe(true);
      } finally {
        await database.close();
        await test.cleanup();
      }
    },
  );
});
