import type { Kysely } from 'kysely';

/** Set when a job's personal data was erased (user deleted, or past RECORD_RETENTION_DAYS): the row stays for metering only. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('erased_at', 'text').execute();
  await db.schema
    .createIndex('jobs_org_external_idx')
    .on('jobs')
    .columns(['org_id', 'external_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('jobs_org_external_idx').execute();
  await db.schema.alterTable('jobs').dropColumn('erased_at').execute();
}
