import type { Kysely } from 'kysely';
import { doubleType } from './schema-helpers.js';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('rate_limit_buckets')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('tokens', doubleType(db), (c) => c.notNull())
    .addColumn('refilled_at_ms', doubleType(db), (c) => c.notNull())
    .addColumn('allowed', 'integer', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('rate_limit_buckets').execute();
}
