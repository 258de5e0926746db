import { type Kysely, type Migration, Migrator } from 'kysely';
import * as initial from './migrations/2026-11-21T1420_initial.js';
import * as bytewiseText from './migrations/2026-11-21T1700_bytewise_text.js';
import * as jobErasure from './migrations/2026-11-25T0610_job_erasure.js';
import * as queueTurns from './migrations/2026-11-25T0605_queue_turns.js';
import * as rateLimits from './migrations/2026-11-21T1600_rate_limits.js';
import * as voice from './migrations/2026-11-21T1500_voice.js';
import * as audioBytes from './migrations/2026-11-25T0600_audio_bytes.js';
import * as voiceprintSamples from './migrations/2026-11-25T0630_voiceprint_samples.js';
import * as webhookTestEvents from './migrations/2026-11-25T0606_webhook_test_events.js';
import * as idempotencyKeys from './migrations/2026-11-25T0611_idempotency_keys.js';
import * as voiceprintUpgrades from './migrations/2026-11-27T0400_voiceprint_upgrades.js';
import * as enrollmentDeepfakeThreshold from './migrations/2026-11-27T0430_enrollment_deepfake_threshold.js';
import * as sampleRecordingQuality from './migrations/2026-11-27T2200_sample_recording_quality.js';
import * as phraseChallenges from './migrations/2026-11-28T0100_phrase_challenges.js';
import * as claimIndexes from './migrations/2026-11-28T0200_claim_indexes.js';
import * as jobRecordings from './migrations/2026-11-30T0500_job_recordings.js';
import type { DB } from './types.js';

/** Migrations in order; names are timestamps so they sort by creation. */
export const MIGRATIONS: Record<string, Migration> = {
  '2026-11-21T1420_initial': initial,
  '2026-11-21T1500_voice': voice,
  '2026-11-21T1600_rate_limits': rateLimits,
  '2026-11-21T1700_bytewise_text': bytewiseText,
  '2026-11-25T0600_audio_bytes': audioBytes,
  '2026-11-25T0605_queue_turns': queueTurns,
  '2026-11-25T0606_webhook_test_events': webhookTestEvents,
  '2026-11-25T0610_job_erasure': jobErasure,
  '2026-11-25T0611_idempotency_keys': idempotencyKeys,
  '2026-11-25T0630_voiceprint_samples': voiceprintSamples,
  '2026-11-27T0400_voiceprint_upgrades': voiceprintUpgrades,
  '2026-11-27T0430_enrollment_deepfake_threshold': enrollmentDeepfakeThreshold,
  '2026-11-27T2200_sample_recording_quality': sampleRecordingQuality,
  '2026-11-28T0100_phrase_challenges': phraseChallenges,
  '2026-11-28T0200_claim_indexes': claimIndexes,
  '2026-11-30T0500_job_recordings': jobRecordings,
};

function createMigrator(db: Kysely<DB>): Migrator {
  return new Migrator({ db, provider: { getMigrations: async () => MIGRATIONS } });
}

/**
 * Brings the schema up to date. Kysely's migrator takes a lock (a row lock on PostgreSQL),
 * so several processes starting at once migrate exactly once.
 */
export async function migrateToLatest(db: Kysely<DB>): Promise<string[]> {
  const { error, results } = await createMigrator(db).migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

export interface MigrationState {
  name: string;
  /** When it ran; null while pending. */
  executedAt: Date | null;
}

/** Every known migration and whether it has run; changes nothing. */
export async function migrationStatus(db: Kysely<DB>): Promise<MigrationState[]> {
  return (await createMigrator(db).getMigrations()).map((m) => ({
    name: m.name,
    executedAt: m.executedAt ?? null,
  }));
}
