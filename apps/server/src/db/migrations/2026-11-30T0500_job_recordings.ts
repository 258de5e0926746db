import type { Kysely } from 'kysely';
import { isPostgres } from './schema-helpers.js';

const bytesType = (db: Kysely<any>) => (isPostgres(db) ? ('bytea' as const) : ('blob' as const));

/**
 * Issue 33 item 4: a queued job's recording moves out of the jobs row into `job_recordings`. SQLite
 * writes a whole record again when an update changes its size, so claiming a job (status, lease)
 * rewrote its 160 kB WAV and, with `secure_delete`, zeroed the old copy: as much work as storing it.
 * Now the claim updates a small row; the recording is written once, read once and deleted (zeroed)
 * in the transaction that completes or erases the job. Jobs still holding audio keep it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('job_recordings')
    .addColumn('job_id', 'integer', (c) => c.primaryKey().references('jobs.id').onDelete('cascade'))
    .addColumn('audio', bytesType(db), (c) => c.notNull())
    .addColumn('audio_info', 'text')
    .execute();
  await db
    .insertInto('job_recordings')
    .columns(['job_id', 'audio', 'audio_info'])
    .expression(
      db
        .selectFrom('jobs')
        .select(['id', 'audio', 'audio_info'])
        .where('audio', 'is not', null)
        .where('status', 'in', ['queued', 'processing']),
    )
    .execute();
  await db.schema.alterTable('jobs').dropColumn('audio').execute();
  await db.schema.alterTable('jobs').dropColumn('audio_info').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('audio', bytesType(db)).execute();
  await db.schema.alterTable('jobs').addColumn('audio_info', 'text').execute();
  // One statement: the queue may hold hundreds of recordings of up to 10 MB.
  const recordingOf = (column: 'audio' | 'audio_info') =>
    db
      .selectFrom('job_recordings')
      .select(column)
      .whereRef('job_recordings.job_id', '=', 'jobs.id');
  await db
    .updateTable('jobs')
    .set({ audio: recordingOf('audio'), audio_info: recordingOf('audio_info') })
    .where('id', 'in', db.selectFrom('job_recordings').select('job_id'))
    .execute();
  await db.schema.dropTable('job_recordings').execute();
}
