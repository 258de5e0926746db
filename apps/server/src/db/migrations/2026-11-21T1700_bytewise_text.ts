import { type Kysely, sql } from 'kysely';
import { isPostgres } from './schema-helpers.js';

/** Text columns that lists filter or sort on. */
const LISTED_TEXT_COLUMNS: Array<[string, string]> = [
  ['users', 'external_id'],
  ['api_tokens', 'friendly_name'],
  ['predefined_texts', 'language'],
  ['plans', 'name'],
  ['webhook_deliveries', 'status'],
  ['webhook_deliveries', 'event_type'],
  ['webhook_deliveries', 'request_uuid'],
];

/**
 * On PostgreSQL, compare these columns byte-wise (COLLATE "C"), as SQLite does, so sort order and
 * range filters do not depend on the cluster's locale.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  for (const [table, column] of LISTED_TEXT_COLUMNS) {
    await sql`alter table ${sql.table(table)} alter column ${sql.ref(column)} type text collate "C"`.execute(
      db,
    );
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  for (const [table, column] of LISTED_TEXT_COLUMNS) {
    await sql`alter table ${sql.table(table)} alter column ${sql.ref(column)} type text collate "default"`.execute(
      db,
    );
  }
}
