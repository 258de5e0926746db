import pg from 'pg';
import { type Database, openDatabase } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { POSTGRES_ADMIN_URL } from './postgres.js';

/**
 * A fresh, migrated PostgreSQL database whose default collation is a natural-language one
 * (ICU en-US), as on a cluster initialised with an en_US locale: text comparisons and ORDER BY then
 * follow linguistic rules instead of byte order. Used to check that list behaviour does not depend
 * on the cluster's locale.
 */
export async function createLocaleDatabase(
  icuLocale = 'en-US',
): Promise<{ database: Database; cleanup(): Promise<void> }> {
  const name = `voxkey_locale_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  await admin.query(
    `create database ${name} template template0 encoding 'UTF8' locale_provider icu icu_locale '${icuLocale}' locale 'C.UTF-8'`,
  );
  await admin.end();
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  const database = openDatabase(url.toString(), { poolSize: 2 });
  await migrateToLatest(database.db);
  return {
    database,
    cleanup: async () => {
      await database.close();
      const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}
