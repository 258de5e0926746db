import { randomUUID } from 'node:crypto';
import { encodeWav } from '@voxkey/engine/dsp';
import { Migrator } from 'kysely';
import { describe, expect, it, onTestFinished } from 'vitest';
import { type Database, openDatabase } from '../src/db/connection.js';
import { MIGRATIONS, migrateToLatest } from '../src/db/migrate.js';
import { findJobRecording } from '../src/repositories/jobs.js';
import { requestFingerprint } from '../src/services/voice-requests.js';
import { TEST_DIALECT } from './support/database.js';
import { createPostgresDatabase } from './support/postgres.js';

async function emptyDatabase(): Promise<Database> {
  if (TEST_DIALECT === 'sqlite') return openDatabase('sqlite::memory:');
  const { url, drop } = await createPostgresDatabase();
  const database = openDatabase(url, { poolSize: 2 });
  onTestFinished(drop);
  return database;
}

/** A new database migrated up to `name`, closed when the test ends. */
async function migratedTo(name: string) {
  const database = await emptyDatabase();
  onTestFinished(() => database.close());
  const migrator = new Migrator({
    db: database.db,
    provider: { getMigrations: async () => MIGRATIONS },
  });
  expect((await migrator.migrateTo(name)).error).toBeUndefined();
  return { database, db: database.db as any, migrator };
}

/** Jobs of one new organisation as an older schema stored them: common fields plus each job's own. */
async function seedOldJobs(db: any, jobs: Array<Record<string, unknown>>) {
  const now = new Date().toISOString();
  const org = await db
    .insertInto('organisations')
    .values({ name: 'Old', email: 'old@example.com', created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  const common = {
    org_id: org.id,
    body_hash: 'x',
    language: 'en-UK',
    attempts: 0,
    run_after: now,
    created_at: now,
    updated_at: now,
  };
  await db
    .insertInto('jobs')
    .values(
      jobs.map((job) => ({
        ...common,
        request_uuid: randomUUID(),
        external_id: randomUUID(),
        ...job,
      })),
    )
    .execute();
}

describe(`migrations (${TEST_DIALECT})`, () => {
  it("2026-11-25T0600_audio_bytes turns a queued job's base64 audio into bytes with its header check", async () => {
    const { db } = await migratedTo('2026-11-21T1700_bytewise_text');
    const recording = Buffer.from(encodeWav(new Float32Array(16000 * 4), 16000));
    await seedOldJobs(db, [
      { kind: 'enrollment', status: 'queued', audio: recording.toString('base64') },
      { kind: 'enrollment', status: 'completed', audio: null },
    ]);

    await migrateToLatest(db);
    const rows = await db.selectFrom('jobs').selectAll().orderBy('id').execute();
    const queued = await findJobRecording(db, rows[0]!.id);
    expect(Buffer.from(queued!.bytes).equals(recording)).toBe(true);
    expect(queued!.info).toMatchObject({
      format: 'wav',
      sampleRate: 16000,
      channels: 1,
      durationSeconds: 4,
    });
    expect(rows[0]!.body_hash).toBe(
      requestFingerprint(
        'enrollment',
        {
          request_uuid: rows[0]!.request_uuid,
          external_id: rows[0]!.external_id,
          language: 'en-UK',
        },
        recording,
      ),
    );
    expect(await findJobRecording(db, rows[1]!.id)).toBeNull();
  });

  it("2026-11-30T0500_job_recordings moves a queued job's recording out of the job row, and back down", async () => {
    const { database, db, migrator } = await migratedTo('2026-11-28T0200_claim_indexes');
    const recording = Buffer.from(encodeWav(new Float32Array(16000 * 4), 16000));
    const info = JSON.stringify({ format: 'wav', sampleRate: 16000 });
    await seedOldJobs(db, [
      { kind: 'verification', status: 'queued', audio: recording, audio_info: info },
      { kind: 'verification', status: 'completed', audio: null, audio_info: null },
    ]);

    await migrateToLatest(database.db);
    const ids = (await db.selectFrom('jobs').select('id').orderBy('id').execute()).map(
      (r: { id: number }) => r.id,
    );
    const moved = await findJobRecording(database.db, ids[0]);
    expect(Buffer.from(moved!.bytes).equals(recording)).toBe(true);
    expect(moved!.info).toEqual(JSON.parse(info));
    expect(await findJobRecording(database.db, ids[1])).toBeNull();

    expect((await migrator.migrateDown()).error).toBeUndefined();
    const back = await db
      .selectFrom('jobs')
      .select(['audio', 'audio_info'])
      .orderBy('id')
      .execute();
    expect(Buffer.from(back[0].audio).equals(recording)).toBe(true);
    expect(back[0].audio_info).toBe(info);
    expect(back[1]).toEqual({ audio: null, audio_info: null });
  });
});
