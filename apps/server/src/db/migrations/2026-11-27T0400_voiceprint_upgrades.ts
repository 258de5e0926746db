import type { Kysely } from 'kysely';

/**
 * Issue 24: a verification against a voiceprint of an older speaker model may give it a sample of
 * the default model; the request record says whether it did (null for enrolments and until completed).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('voiceprint_upgraded', 'integer').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('jobs').dropColumn('voiceprint_upgraded').execute();
}
