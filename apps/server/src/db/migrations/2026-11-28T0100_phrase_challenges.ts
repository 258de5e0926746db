import type { Kysely } from 'kysely';
import { doubleType, withTimestamps } from './schema-helpers.js';

/**
 * Issue 32, prompted-phrase liveness: one-time challenges (a random id, bound to an organisation and
 * an external_id, used at most once), the phrase a job was asked to check and what the recogniser
 * heard, and the organisation settings `require_phrase` and `challenge_ttl_seconds`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withTimestamps(
    db.schema
      .createTable('challenges')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'integer', (c) =>
        c.notNull().references('organisations.id').onDelete('cascade'),
      )
      .addColumn('external_id', 'text', (c) => c.notNull())
      .addColumn('text', 'text', (c) => c.notNull())
      .addColumn('vocabulary', 'text', (c) => c.notNull())
      .addColumn('language', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('used_at', 'text')
      .addColumn('used_by_request', 'text'),
  ).execute();
  await db.schema
    .createIndex('challenges_org_external_idx')
    .on('challenges')
    .columns(['org_id', 'external_id'])
    .execute();
  await db.schema
    .createIndex('challenges_expires_idx')
    .on('challenges')
    .column('expires_at')
    .execute();

  await db.schema
    .alterTable('organisation_settings')
    .addColumn('require_phrase', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('organisation_settings')
    .addColumn('challenge_ttl_seconds', 'integer', (c) => c.notNull().defaultTo(120))
    .execute();

  for (const [column, type] of [
    ['challenge_id', 'text'],
    ['text_id', 'integer'],
    ['phrase_expected', 'text'],
    ['phrase_vocabulary', 'text'],
    ['phrase_transcript', 'text'],
    ['phrase_match_score', doubleType(db)],
    ['phrase_matched', 'integer'],
  ] as const) {
    await db.schema.alterTable('jobs').addColumn(column, type).execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of [
    'phrase_matched',
    'phrase_match_score',
    'phrase_transcript',
    'phrase_vocabulary',
    'phrase_expected',
    'text_id',
    'challenge_id',
  ]) {
    await db.schema.alterTable('jobs').dropColumn(column).execute();
  }
  await db.schema.alterTable('organisation_settings').dropColumn('challenge_ttl_seconds').execute();
  await db.schema.alterTable('organisation_settings').dropColumn('require_phrase').execute();
  await db.schema.dropTable('challenges').execute();
}
