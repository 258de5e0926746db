import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { type Database, openDatabase } from '../src/db/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import type { AppDeps } from '../src/deps.js';
import { createLogger } from '../src/observability/logger.js';
import { createMetrics } from '../src/observability/metrics.js';
import { claimJob } from '../src/repositories/jobs.js';
import { createSealer } from '../src/security/sealing.js';
import { issueToken, signUpOrganisation } from '../src/services/organisations.js';
import { processJob, type VoiceAnalyzer } from '../src/workers/job-processor.js';
import { testConfig } from './support/context.js';
import { createTestDatabase, TEST_DIALECT } from './support/database.js';
import { silentWav } from './support/fixtures.js';

/** A silent WAV whose samples carry a marker that appears nowhere else. */
function markedRecording(marker: Buffer): Buffer {
  const wav = Buffer.from(silentWav(), 'base64');
  for (let offset = 44 + 4096; offset + marker.length < wav.length; offset += 32_768)
    marker.copy(wav, offset);
  return wav;
}

/** Where each dialect keeps the bytes: the SQLite file and its WAL, or PostgreSQL's table, TOAST and WAL segment files. */
async function databaseFiles(database: Database, sqliteFile: string | null): Promise<string[]> {
  if (database.dialect === 'sqlite') {
    await sql`pragma wal_checkpoint(TRUNCATE)`.execute(database.db);
    return [sqliteFile!, `${sqliteFile}-wal`].filter((f) => existsSync(f));
  }
  await sql`checkpoint`.execute(database.db);
  const dataDir = (
    await sql<{ d: string }>`select current_setting('data_directory') as d`.execute(database.db)
  ).rows[0]!.d;
  const relations = await sql<{ p: string }>`
    select pg_relation_filepath(c.oid) as p from pg_class c
    where c.oid = 'jobs'::regclass or c.oid = (select reltoastrelid from pg_class where oid = 'jobs'::regclass)`.execute(
    database.db,
  );
  const walDir = path.join(dataDir, 'pg_wal');
  const wal = readdirSync(walDir)
    .filter((f) => /^[0-9A-F]{24}$/.test(f))
    .map((f) => path.join(walDir, f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)
    .slice(0, 2);
  return [...relations.rows.filter((r) => r.p).map((r) => path.join(dataDir, r.p)), ...wal].filter(
    (f) => existsSync(f),
  );
}

function filesContaining(files: string[], marker: Buffer): string[] {
  return files.filter((f) => readFileSync(f).includes(marker));
}

describe(`raw audio at rest (${TEST_DIALECT})`, () => {
  it('a queued recording is sealed, and after completion and a checkpoint its bytes are in no database file', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'voxkey-audio-'));
    const sqliteFile = TEST_DIALECT === 'sqlite' ? path.join(dir, 'voxkey.db') : null;
    const test = TEST_DIALECT === 'sqlite' ? null : await createTestDatabase();
    const database = sqliteFile ? openDatabase(`sqlite:${sqliteFile}`) : test!.database;
    try {
      if (sqliteFile) await migrateToLatest(database.db);
      const deps: AppDeps = {
        database,
        config: testConfig(),
        sealer: createSealer(randomBytes(32)),
        signals: { jobQueued: () => {}, deliveryQueued: () => {} },
        observability: { logger: createLogger('silent'), metrics: createMetrics() },
      };
      const app = createApp(deps, { reportError: (err) => console.error(err) });
      const { organisation } = await signUpOrganisation(database.db, {
        name: 'Audio',
        email: 'a@example.com',
        callbackUrl: 'https://hooks.example.com/a',
      });
      const { bearer } = await issueToken(database.db, {
        orgId: organisation.id,
        friendlyName: 'live',
        kind: 'live',
      });

      const marker = Buffer.concat([Buffer.from('VOXKEY-UNIQUE-AUDIO-'), randomBytes(32)]);
      const recording = markedRecording(marker);
      const res = await app.request(`/v1/organisations/${organisation.id}/enrollments`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          voice_data: recording.toString('base64'),
          request_uuid: randomUUID(),
          external_id: 'ada',
          language: 'en-UK',
        }),
      });
      expect(res.status).toBe(202);

      // Queued: stored sealed, so not even the waiting row holds the samples (nor their base64).
      const queuedFiles = await databaseFiles(database, sqliteFile);
      expect(queuedFiles.length).toBeGreaterThan(0);
      expect(filesContaining(queuedFiles, marker)).toEqual([]);
      expect(
        filesContaining(queuedFiles, Buffer.from(marker.toString('base64').slice(0, 40))),
      ).toEqual([]);

      let heard: Uint8Array | null = null;
      const engine = {
        speakerModelId: 'fake',
        spoofModelId: 'fake-spoof',
        defaultDeepfakeThreshold: 0.5,
        async enrol(bytes: Uint8Array) {
          heard = bytes;
          return {
            qualityScore: 0.9,
            spoof: { bonafideProbability: 0.99 },
            voiceprint: { modelId: 'fake', embedding: new Float32Array(8).fill(0.5) },
            timings: {},
          };
        },
        async verify() {
          throw new Error('not used');
        },
      } as unknown as VoiceAnalyzer;
      const job = await claimJob(database.db, database.dialect, 'w', 60_000);
      expect((await processJob(deps, engine, job!, 'w')).result).toBe('completed');
      // The worker opened the sealed recording: the engine got the original bytes.
      expect(Buffer.from(heard!).equals(recording)).toBe(true);

      const doneFiles = await databaseFiles(database, sqliteFile);
      expect(filesContaining(doneFiles, marker)).toEqual([]);
      const row = await database.db.selectFrom('jobs').select('status').executeTakeFirstOrThrow();
      expect(row).toEqual({ status: 'completed' });
      expect(await database.db.selectFrom('job_recordings').selectAll().execute()).toEqual([]);
      if (database.dialect === 'sqlite')
        expect(
          (await sql<{ secure_delete: number }>`pragma secure_delete`.execute(database.db)).rows[0]!
            .secure_delete,
        ).toBe(1);
    } finally {
      if (sqliteFile) await database.close();
      else await test!.cleanup();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('sealed recordings', () => {
  it('open only for the job they were sealed for; a recording queued before sealing still opens', async () => {
    const { openRecording, sealRecording } = await import('../src/security/recordings.js');
    const sealer = createSealer(randomBytes(32));
    const wav = Buffer.from(silentWav(), 'base64');
    const sealed = sealRecording(sealer, 1, 'req-a', wav);
    expect(sealed[0]).toBe(1);
    expect(Buffer.from(openRecording(sealer, 1, 'req-a', sealed)).equals(wav)).toBe(true);
    expect(() => openRecording(sealer, 1, 'req-b', sealed)).toThrow();
    expect(() => openRecording(sealer, 2, 'req-a', sealed)).toThrow();
    expect(Buffer.from(openRecording(sealer, 1, 'req-a', wav)).equals(wav)).toBe(true);
  });
});
