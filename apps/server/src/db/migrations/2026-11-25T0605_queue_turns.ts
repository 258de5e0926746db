import type { Kysely } from 'kysely';

/** When each organisation last had a job or a webhook delivery claimed: workers serve organisations in turn. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('queue_turns')
    .addColumn('org_id', 'integer', (c) =>
      c.primaryKey().references('organisations.id').onDelete('cascade'),
    )
    .addColumn('job_claimed_at', 'text')
    .addColumn('delivery_claimed_at', 'text')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('queue_turns').execute();
}
