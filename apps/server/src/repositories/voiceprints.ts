import type { RecordingQuality } from '@voxkey/engine';
import type { Executor } from '../db/connection.js';
import type { UserRow, VoiceprintRow, VoiceprintSampleRow } from '../db/types.js';
import { parseRecordingQuality } from './recording-quality.js';
import { nowIso } from './clock.js';
import { compiledOnce } from './compiled-once.js';

export interface NewSample {
  modelId: string;
  sealedEmbedding: string;
  sealVersion: number;
  qualityScore: number;
  /** The recording's measured quality (absent or null when not measured). */
  recordingQuality?: RecordingQuality | null;
}

export async function insertVoiceprint(
  db: Executor,
  values: {
    orgId: number;
    userId: number;
    modelId: string;
    enrolmentFingerprint: string | null;
    qualityScore: number;
  },
): Promise<VoiceprintRow> {
  const now = nowIso();
  return db
    .insertInto('voiceprints')
    .values({
      org_id: values.orgId,
      user_id: values.userId,
      model_id: values.modelId,
      enrolment_fingerprint: values.enrolmentFingerprint,
      quality_score: values.qualityScore,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

const selectVoiceprint = compiledOnce((db, orgId: number, userId: number) =>
  db
    .selectFrom('voiceprints')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('user_id', '=', userId),
);

function userWithVoiceprint(db: Executor, orgId: number, externalId: string) {
  return db
    .selectFrom('users')
    .leftJoin('voiceprints', (join) =>
      join
        .onRef('voiceprints.user_id', '=', 'users.id')
        .onRef('voiceprints.org_id', '=', 'users.org_id'),
    )
    .selectAll('users')
    .select([
      'voiceprints.id as voiceprint_id',
      'voiceprints.model_id as voiceprint_model_id',
      'voiceprints.enrolment_fingerprint as voiceprint_enrolment_fingerprint',
      'voiceprints.quality_score as voiceprint_quality_score',
      'voiceprints.created_at as voiceprint_created_at',
      'voiceprints.updated_at as voiceprint_updated_at',
    ])
    .where('users.org_id', '=', orgId)
    .where('users.external_id', '=', externalId);
}

const selectUserWithVoiceprint = compiledOnce(userWithVoiceprint);

// Read for every verification a worker runs: one row per sample.
const selectUserWithVoiceprintSamples = compiledOnce((db, orgId: number, externalId: string) =>
  userWithVoiceprint(db, orgId, externalId)
    .leftJoin('voiceprint_samples', 'voiceprint_samples.voiceprint_id', 'voiceprints.id')
    .select([
      'voiceprint_samples.id as sample_id',
      'voiceprint_samples.model_id as sample_model_id',
      'voiceprint_samples.sealed_embedding as sample_sealed_embedding',
      'voiceprint_samples.seal_version as sample_seal_version',
      'voiceprint_samples.quality_score as sample_quality_score',
      'voiceprint_samples.recording_quality as sample_recording_quality',
      'voiceprint_samples.created_at as sample_created_at',
      'voiceprint_samples.updated_at as sample_updated_at',
    ])
    .orderBy('voiceprint_samples.id'),
);

type UserWithVoiceprintRow = Awaited<ReturnType<typeof selectUserWithVoiceprint>>[number];

function splitUserAndVoiceprint(row: UserWithVoiceprintRow): {
  user: UserRow;
  voiceprint: VoiceprintRow | undefined;
} {
  const {
    voiceprint_id: id,
    voiceprint_model_id: modelId,
    voiceprint_enrolment_fingerprint: enrolmentFingerprint,
    voiceprint_quality_score: qualityScore,
    voiceprint_created_at: createdAt,
    voiceprint_updated_at: updatedAt,
    ...user
  } = row;
  const voiceprint =
    id === null
      ? undefined
      : {
          id,
          org_id: user.org_id,
          user_id: user.id,
          model_id: modelId!,
          enrolment_fingerprint: enrolmentFingerprint,
          quality_score: qualityScore,
          created_at: createdAt!,
          updated_at: updatedAt!,
        };
  return { user, voiceprint };
}

/** A user by external id and their voiceprint (undefined when they have none), in one lookup. */
export async function findUserWithVoiceprint(
  db: Executor,
  orgId: number,
  externalId: string,
): Promise<{ user: UserRow; voiceprint: VoiceprintRow | undefined } | undefined> {
  const [row] = await selectUserWithVoiceprint(db, orgId, externalId);
  return row && splitUserAndVoiceprint(row);
}

/** A user by external id, their voiceprint (undefined when they have none) and its samples, oldest first, in one lookup. */
export async function findUserWithVoiceprintSamples(
  db: Executor,
  orgId: number,
  externalId: string,
): Promise<
  | { user: UserRow; voiceprint: VoiceprintRow | undefined; samples: VoiceprintSampleRow[] }
  | undefined
> {
  const rows = await selectUserWithVoiceprintSamples(db, orgId, externalId);
  const [first] = rows;
  if (!first) return undefined;
  const {
    sample_id: _id,
    sample_model_id: _modelId,
    sample_sealed_embedding: _sealedEmbedding,
    sample_seal_version: _sealVersion,
    sample_quality_score: _qualityScore,
    sample_recording_quality: _recordingQuality,
    sample_created_at: _createdAt,
    sample_updated_at: _updatedAt,
    ...userAndVoiceprint
  } = first;
  const { user, voiceprint } = splitUserAndVoiceprint(userAndVoiceprint);
  if (!voiceprint) return { user, voiceprint, samples: [] };
  const samples = rows.flatMap((row) =>
    row.sample_id === null
      ? []
      : [
          {
            id: row.sample_id,
            org_id: user.org_id,
            user_id: user.id,
            voiceprint_id: voiceprint.id,
            model_id: row.sample_model_id!,
            sealed_embedding: row.sample_sealed_embedding!,
            seal_version: row.sample_seal_version!,
            quality_score: row.sample_quality_score,
            recording_quality: row.sample_recording_quality,
            created_at: row.sample_created_at!,
            updated_at: row.sample_updated_at!,
          },
        ],
  );
  return { user, voiceprint, samples };
}

export async function findVoiceprint(
  db: Executor,
  orgId: number,
  userId: number,
): Promise<VoiceprintRow | undefined> {
  return (await selectVoiceprint(db, orgId, userId))[0];
}

/** Deletes the voiceprint and its samples (explicitly, not relying on the cascade). */
export async function deleteVoiceprint(db: Executor, voiceprint: VoiceprintRow): Promise<void> {
  await db.deleteFrom('voiceprint_samples').where('voiceprint_id', '=', voiceprint.id).execute();
  await db.deleteFrom('voiceprints').where('id', '=', voiceprint.id).execute();
}

export async function insertSample(
  db: Executor,
  voiceprint: VoiceprintRow,
  sample: NewSample,
): Promise<void> {
  const now = nowIso();
  await db
    .insertInto('voiceprint_samples')
    .values({
      org_id: voiceprint.org_id,
      user_id: voiceprint.user_id,
      voiceprint_id: voiceprint.id,
      model_id: sample.modelId,
      sealed_embedding: sample.sealedEmbedding,
      seal_version: sample.sealVersion,
      quality_score: sample.qualityScore,
      recording_quality: sample.recordingQuality ? JSON.stringify(sample.recordingQuality) : null,
      created_at: now,
      updated_at: now,
    })
    .execute();
}

/** A stored sample's recording quality; null when none was stored (samples enrolled before issue 31). */
export function sampleRecordingQuality(sample: VoiceprintSampleRow): RecordingQuality | null {
  return parseRecordingQuality(sample.recording_quality);
}

const selectSamples = compiledOnce((db, voiceprintId: number) =>
  db
    .selectFrom('voiceprint_samples')
    .selectAll()
    .where('voiceprint_id', '=', voiceprintId)
    .orderBy('id'),
);

export function listSamples(db: Executor, voiceprintId: number): Promise<VoiceprintSampleRow[]> {
  return selectSamples(db, voiceprintId);
}

export async function countSamples(db: Executor, voiceprintId: number): Promise<number> {
  const row = await db
    .selectFrom('voiceprint_samples')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('voiceprint_id', '=', voiceprintId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Keeps the voiceprint's quality the mean of its samples'. */
export async function refreshVoiceprintQuality(db: Executor, voiceprintId: number): Promise<void> {
  const row = await db
    .selectFrom('voiceprint_samples')
    .select((eb) => eb.fn.avg<number>('quality_score').as('q'))
    .where('voiceprint_id', '=', voiceprintId)
    .executeTakeFirstOrThrow();
  const quality = row.q === null ? null : Math.round(Number(row.q) * 1000) / 1000;
  await db
    .updateTable('voiceprints')
    .set({ quality_score: quality, updated_at: nowIso() })
    .where('id', '=', voiceprintId)
    .execute();
}

export async function deleteSamples(
  db: Executor,
  voiceprintId: number,
  sampleIds: number[],
): Promise<void> {
  if (sampleIds.length === 0) return;
  await db
    .deleteFrom('voiceprint_samples')
    .where('voiceprint_id', '=', voiceprintId)
    .where('id', 'in', sampleIds)
    .execute();
}

export async function setVoiceprintModel(
  db: Executor,
  voiceprintId: number,
  modelId: string,
): Promise<void> {
  await db
    .updateTable('voiceprints')
    .set({ model_id: modelId, updated_at: nowIso() })
    .where('id', '=', voiceprintId)
    .execute();
}

/** Voiceprints and their samples per speaker model, for one organisation or all: [org, voiceprint, model, samples]. */
export function sampleModelCounts(db: Executor, orgId?: number) {
  let query = db
    .selectFrom('voiceprint_samples')
    .select((eb) => ['org_id', 'voiceprint_id', 'model_id', eb.fn.countAll<number>().as('samples')])
    .groupBy(['org_id', 'voiceprint_id', 'model_id'])
    .orderBy('org_id')
    .orderBy('voiceprint_id');
  if (orgId !== undefined) query = query.where('org_id', '=', orgId);
  return query.execute();
}
