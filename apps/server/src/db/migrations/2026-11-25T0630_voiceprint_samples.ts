import { type Kysely, sql } from 'kysely';
import { doubleType, withId, withTimestamps } from './schema-helpers.js';

/**
 * Issue 14: a voiceprint holds several samples (one sealed embedding per enrolment recording);
 * jobs record the enrolment mode, sample count, deepfake score, thresholds and models applied;
 * organisations get their own decision settings.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const double = doubleType(db);
  await withTimestamps(
    withId(db, db.schema.createTable('voiceprint_samples'))
      .addColumn('org_id', 'integer', (c) =>
        c.notNull().references('organisations.id').onDelete('cascade'),
      )
      .addColumn('user_id', 'integer', (c) =>
        c.notNull().references('users.id').onDelete('cascade'),
      )
      .addColumn('voiceprint_id', 'integer', (c) =>
        c.notNull().references('voiceprints.id').onDelete('cascade'),
      )
      .addColumn('model_id', 'text', (c) => c.notNull())
      .addColumn('sealed_embedding', 'text', (c) => c.notNull())
      // 1: sealed before samples existed (bound to organisation and user); 2: bound to the model id too.
      .addColumn('seal_version', 'integer', (c) => c.notNull())
      .addColumn('quality_score', double),
  ).execute();
  await db.schema
    .createIndex('voiceprint_samples_voiceprint_idx')
    .on('voiceprint_samples')
    .column('voiceprint_id')
    .execute();
  await sql`insert into voiceprint_samples (org_id, user_id, voiceprint_id, model_id, sealed_embedding, seal_version, quality_score, created_at, updated_at)
    select org_id, user_id, id, model_id, sealed_embedding, 1, quality_score, created_at, updated_at from voiceprints`.execute(
    db,
  );
  await db.schema.alterTable('voiceprints').dropColumn('sealed_embedding').execute();

  for (const [column, type] of [
    ['mode', 'text'],
    ['samples', 'integer'],
    ['deepfake_score', double],
    ['match_threshold', double],
    ['deepfake_threshold', double],
    ['speaker_model', 'text'],
    ['spoof_model', 'text'],
  ] as const) {
    await db.schema.alterTable('jobs').addColumn(column, type).execute();
  }

  await db.schema
    .alterTable('organisation_settings')
    .addColumn('match_threshold', double)
    .execute();
  await db.schema
    .alterTable('organisation_settings')
    .addColumn('deepfake_threshold', double)
    .execute();
  await db.schema
    .alterTable('organisation_settings')
    .addColumn('reject_deepfake_enrollments', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of ['reject_deepfake_enrollments', 'deepfake_threshold', 'match_threshold']) {
    await db.schema.alterTable('organisation_settings').dropColumn(column).execute();
  }
  for (const column of [
    'spoof_model',
    'speaker_model',
    'deepfake_threshold',
    'match_threshold',
    'deepfake_score',
    'samples',
    'mode',
  ]) {
    await db.schema.alterTable('jobs').dropColumn(column).execute();
  }
  // Samples beyond the first cannot go back into one column: the first one stays, the rest are lost.
  await db.schema.alterTable('voiceprints').addColumn('sealed_embedding', 'text').execute();
  await sql`update voiceprints set sealed_embedding = (select s.sealed_embedding from voiceprint_samples s where s.voiceprint_id = voiceprints.id and s.seal_version = 1 order by s.id limit 1)`.execute(
    db,
  );
  await db.schema.dropTable('voiceprint_samples').execute();
}
