import net from 'node:net';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db/connection.js';
import { createTestDatabase, TEST_DIALECT } from './support/database.js';
import { testConfig } from './support/context.js';

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
    'cancels a statement that runs past the statement timeout',
    async () => {
      const test = await createTestDatabase();
      const database = openDatabase(test.url, { poolSize: 1, statementTimeoutMs: 200 });
      try {
        await expect(sql`select pg_sleep(2)`.execute(database.db)).rejects.toThrow(
          /statement timeout/,
        );
        expect(
          (await sql<{ one: number }>`select 1 as one`.execute(database.db)).rows[0]!.one,
        ).toBe(1);
      } finally {
        await database.close();
        await test.cleanup();
      }
    },
  );
});
