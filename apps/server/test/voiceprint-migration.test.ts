import { randomBytes } from 'node:crypto';
import { Migrator } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../src/db/connection.js';
import { MIGRATIONS } from '../src/db/migrate.js';
import { insertOrganisation } from '../src/repositories/organisations.js';
import { insertUser } from '../src/repositories/users.js';
import { createSealer } from '../src/security/sealing.js';
import { openEmbedding } from '../src/security/voiceprints.js';
import { TEST_DIALECT } from './support/database.js';
import { createPostgresDatabase } from './support/postgres.js';

// Voiceprints stored before samples existed keep verifying after the migration, and come back on the way down.
describe(`migration 2026-11-25T0630_voiceprint_samples (${TEST_DIALECT})`, () => {
  let database: Database | undefined;
  let drop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await database?.close();
    await drop?.();
  });

  async function openBlank(): Promise<Database> {
    if (TEST_DIALECT === 'postgres') {
      const created = await createPostgresDatabase();
      drop = created.drop;
      return openDatabase(created.url, { poolSize: 2 });
    }
    return openDatabase('sqlite::memory:');
  }

  it('moves each voiceprint into one seal_version 1 sample that still opens, and back', async () => {
    database = await openBlank();
    const db = database.db;
    const migrator = new Migrator({ db, provider: { getMigrations: async () => MIGRATIONS } });
    expect((await migrator.migrateTo('2026-11-21T1700_bytewise_text')).error).toBeUndefined();

    const sealer = createSealer(randomBytes(32));
    const org = await insertOrganisation(db, { name: 'Old', email: 'old@example.com' });
    const user = await insertUser(db, org.id, 'legacy');
    const embedding = Float32Array.from([0.6, 0.8, 0]);
    // Sealed as the voiceprint was before samples: bound to organisation and user only.
    const sealed = sealer.seal(new Uint8Array(embedding.buffer), `voiceprint:${org.id}:${user.id}`);
    const now = new Date().toISOString();
    await (db as any)
      .insertInto('voiceprints')
      .values({
        org_id: org.id,
        user_id: user.id,
        model_id: 'speaker-v1',
        sealed_embedding: sealed,
        enrolment_fingerprint: null,
        quality_score: 0.8,
        created_at: now,
        updated_at: now,
      })
      .execute();

    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    const samples = await db.selectFrom('voiceprint_samples').selectAll().execute();
    expect(samples).toHaveLength(1);
    expect(samples[0]).toMatchObject({
      org_id: org.id,
      user_id: user.id,
      model_id: 'speaker-v1',
      seal_version: 1,
      sealed_embedding: sealed,
    });
    const opened = openEmbedding(
      sealer,
      { orgId: org.id, userId: user.id, modelId: 'speaker-v1' },
      samples[0]!.sealed_embedding,
      samples[0]!.seal_version,
    );
    expect(Array.from(opened)).toEqual(Array.from(embedding));
    const voiceprint = await db.selectFrom('voiceprints').selectAll().executeTakeFirstOrThrow();
    expect(voiceprint).not.toHaveProperty('sealed_embedding');

    expect((await migrator.migrateTo('2026-11-21T1700_bytewise_text')).error).toBeUndefined();
    const restored = await (db as any)
      .selectFrom('voiceprints')
      .selectAll()
      .executeTakeFirstOrThrow();
    expect(restored.sealed_embedding).toBe(sealed);
  });
});
