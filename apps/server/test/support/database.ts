import { type Database, openDatabase } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createPostgresDatabase } from './postgres.js';

export const TEST_DIALECT = process.env.VOXKEY_TEST_DB === 'postgres' ? 'postgres' : 'sqlite';

export interface TestDatabase {
  database: Database;
  url: string;
  cleanup(): Promise<void>;
}

/** A fresh, migrated database in the dialect chosen by VOXKEY_TEST_DB (sqlite by default). */
export async function createTestDatabase(): Promise<TestDatabase> {
  if (TEST_DIALECT === 'postgres') {
    const { url, drop } = await createPostgresDatabase();
    const database = openDatabase(url, { poolSize: 5 });
    await migrateToLatest(database.db);
    return {
      database,
      url,
      cleanup: async () => {
        await database.close();
        await drop();
      },
    };
  }
  const database = openDatabase('sqlite::memory:');
  await migrateToLatest(database.db);
  return { database, url: 'sqlite::memory:', cleanup: () => database.close() };
}
