import type { Kysely } from 'kysely';
import { withId, withTimestamps } from './schema-helpers.js';

/** Idempotency-Key claims and the responses they replay (sealed), kept 24 hours. */
export async function up(db: Kysely<any>): Promise<void> {
  await withTimestamps(
    withId(db, db.schema.createTable('idempotency_keys'))
      .addColumn('org_id', 'integer', (c) =>
        c.notNull().references('organisations.id').onDelete('cascade'),
      )
      .addColumn('idempotency_key', 'text', (c) => c.notNull())
      .addColumn('request_fingerprint', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('response_status', 'integer')
      .addColumn('sealed_response', 'text'),
  ).execute();
  // The unique pair is what makes a concurrent duplicate lose the claim.
  await db.schema
    .createIndex('idempotency_keys_org_key_idx')
    .on('idempotency_keys')
    .columns(['org_id', 'idempotency_key'])
    .unique()
    .execute();
  await db.schema
    .createIndex('idempotency_keys_created_idx')
    .on('idempotency_keys')
    .column('created_at')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('idempotency_keys').execute();
}
