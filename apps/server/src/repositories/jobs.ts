import type { AudioInfo, PhraseOutcome, RecordingQuality } from '@voxkey/engine';
import { type ExpressionBuilder, type OperandValueExpressionOrList, sql } from 'kysely';
import type { Dialect, Executor } from '../db/connection.js';
import type {
  DB,
  EnrollmentMode,
  FailureReason,
  JobKind,
  JobRow,
  JobStatus,
  PhraseVocabulary,
  VerificationResult,
} from '../db/types.js';
import { fromFlag, nowIso, toFlag } from './clock.js';
import { compiledOnce } from './compiled-once.js';
import { claimInTurn, claimTakingTurn } from './queue-turns.js';
import { parseRecordingQuality, recordingQualityFields } from './recording-quality.js';
import { insertDelivery, type NewDelivery, pendingDeliveryColumns } from './webhooks.js';

export interface NewJob {
  orgId: number;
  kind: JobKind;
  requestUuid: string;
  bodyHash: string;
  externalId: string;
  language: string;
  deviceFingerprint: string | null;
  deviceType: number | null;
  recording: Recording;
  /** Enrolments only. */
  mode?: EnrollmentMode;
  /** The phrase the recording must say; null when the request named none. */
  phrase: JobPhrase | null;
}

/** What a job's recording must say, how the recogniser decodes it, and where it came from. */
export interface JobPhrase {
  expected: string;
  vocabulary: PhraseVocabulary;
  challengeId: string | null;
  textId: number | null;
}

/** The phrase a job was asked to check, for the engine; null when none. */
export function jobPhrase(row: JobRow): { expected: string; vocabulary: PhraseVocabulary } | null {
  if (row.phrase_expected === null || row.phrase_vocabulary === null) return null;
  return { expected: row.phrase_expected, vocabulary: row.phrase_vocabulary };
}

/** The `phrase` of a request record and of the events: null when none was asked or no outcome is stored. */
export function phraseFields(outcome: PhraseOutcome | null) {
  if (!outcome) return null;
  return {
    expected: outcome.expected,
    transcript: outcome.transcript,
    match_score: outcome.matchScore,
    matched: outcome.matched,
  };
}

function phraseOfRow(row: JobRow) {
  if (
    row.phrase_expected === null ||
    row.phrase_transcript === null ||
    row.phrase_match_score === null ||
    row.phrase_matched === null
  )
    return null;
  return phraseFields({
    expected: row.phrase_expected,
    transcript: row.phrase_transcript,
    matchScore: row.phrase_match_score,
    matched: fromFlag(row.phrase_matched),
  });
}

/** A recording as the request side checked it: the file bytes and what the header check found. */
export interface Recording {
  bytes: Uint8Array;
  info: AudioInfo;
}

const selectJobRecording = compiledOnce((db, jobId: number) =>
  db.selectFrom('job_recordings').select(['audio', 'audio_info']).where('job_id', '=', jobId),
);

/**
 * The job's recording, or null once the job ended. `info` is null for jobs queued before the
 * header check's result was stored (the engine then checks the header itself).
 */
export async function findJobRecording(
  db: Executor,
  jobId: number,
): Promise<{ bytes: Uint8Array; info: AudioInfo | null } | null> {
  const [row] = await selectJobRecording(db, jobId);
  if (!row) return null;
  return {
    bytes: row.audio,
    info: row.audio_info ? (JSON.parse(row.audio_info) as AudioInfo) : null,
  };
}

/** Drops a job's recording (zeroed on SQLite: `secure_delete`); run where the job ends. */
export async function deleteJobRecording(db: Executor, jobId: number): Promise<void> {
  await db.deleteFrom('job_recordings').where('job_id', '=', jobId).execute();
}

export function toRequestRecord(row: JobRow) {
  return {
    request_uuid: row.request_uuid,
    kind: row.kind,
    external_id: row.external_id,
    status: row.status,
    result: row.result,
    match_score: row.match_score,
    deepfake_detected: row.deepfake_detected === null ? null : fromFlag(row.deepfake_detected),
    quality_score: row.quality_score,
    failure_reason: row.failure_reason,
    device_mismatch: row.device_mismatch === null ? null : fromFlag(row.device_mismatch),
    user_id: row.user_id,
    created_at: row.created_at,
    completed_at: row.completed_at,
    mode: row.kind === 'enrollment' ? (row.mode ?? 'new') : null,
    samples: row.samples,
    deepfake_score: row.deepfake_score,
    match_threshold: row.match_threshold,
    deepfake_threshold: row.deepfake_threshold,
    models:
      row.speaker_model && row.spoof_model
        ? { speaker: row.speaker_model, spoof: row.spoof_model }
        : null,
    voiceprint_upgraded:
      row.voiceprint_upgraded === null ? null : fromFlag(row.voiceprint_upgraded),
    recording_quality: recordingQualityOfRow(row),
    phrase: phraseOfRow(row),
  };
}

function recordingQualityOfRow(row: JobRow) {
  const q = parseRecordingQuality(row.recording_quality);
  return q ? recordingQualityFields(q) : null;
}

/**
 * Stores a job and its recording (in its own table: the claim then updates a small row); on
 * PostgreSQL in one statement.
 */
export async function insertJob(db: Executor, dialect: Dialect, job: NewJob): Promise<JobRow> {
  const now = nowIso();
  const values = {
    org_id: job.orgId,
    kind: job.kind,
    request_uuid: job.requestUuid,
    body_hash: job.bodyHash,
    external_id: job.externalId,
    language: job.language,
    device_fingerprint: job.deviceFingerprint,
    device_type: job.deviceType,
    mode: job.kind === 'enrollment' ? (job.mode ?? 'new') : null,
    challenge_id: job.phrase?.challengeId ?? null,
    text_id: job.phrase?.textId ?? null,
    phrase_expected: job.phrase?.expected ?? null,
    phrase_vocabulary: job.phrase?.vocabulary ?? null,
    status: 'queued' as const,
    attempts: 0,
    run_after: now,
    created_at: now,
    updated_at: now,
  };
  const recording = {
    audio: Buffer.from(
      job.recording.bytes.buffer,
      job.recording.bytes.byteOffset,
      job.recording.bytes.byteLength,
    ),
    audio_info: JSON.stringify(job.recording.info),
  };
  if (dialect === 'postgres') {
    return db
      .with('job', (qc) => qc.insertInto('jobs').values(values).returningAll())
      .with('recording', (qc) =>
        qc
          .insertInto('job_recordings')
          .values({ job_id: (eb) => eb.selectFrom('job').select('id'), ...recording }),
      )
      .selectFrom('job')
      .selectAll()
      .executeTakeFirstOrThrow();
  }
  const row = await db.insertInto('jobs').values(values).returningAll().executeTakeFirstOrThrow();
  await db
    .insertInto('job_recordings')
    .values({ job_id: row.id, ...recording })
    .execute();
  return row;
}

const selectJobByRequest = compiledOnce((db, orgId: number, requestUuid: string) =>
  db
    .selectFrom('jobs')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('request_uuid', '=', requestUuid),
);

export async function findJobByRequest(
  db: Executor,
  orgId: number,
  requestUuid: string,
): Promise<JobRow | undefined> {
  return (await selectJobByRequest(db, orgId, requestUuid))[0];
}

export function findEnrolmentInFlight(
  db: Executor,
  orgId: number,
  externalId: string,
): Promise<JobRow | undefined> {
  return db
    .selectFrom('jobs')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('external_id', '=', externalId)
    .where('kind', '=', 'enrollment')
    .where('status', 'in', ['queued', 'processing'])
    .executeTakeFirst();
}

/** A job still to finish: waiting, or being processed. */
export const UNFINISHED: JobStatus[] = ['queued', 'processing'];

// Any constant works; it only has to differ from other advisory locks in the same database.
const ADMISSION_LOCK_KEY = 0x766f786b;

/**
 * Serialises job admissions (quota and queue-cap checks plus the insert) for the rest of the
 * transaction, so concurrent requests cannot both pass a check that only one of them may pass.
 * PostgreSQL: a transaction-scoped advisory lock. SQLite: a no-op write takes the database's
 * single write lock at once (a deferred transaction would only take it at the insert).
 */
export async function lockJobAdmissions(
  db: Executor,
  dialect: Dialect,
  orgId: number,
): Promise<void> {
  if (dialect === 'postgres') {
    await sql`select pg_advisory_xact_lock(${ADMISSION_LOCK_KEY})`.execute(db);
    return;
  }
  await db
    .updateTable('organisations')
    .set((eb) => ({ updated_at: eb.ref('updated_at') }))
    .where('id', '=', orgId)
    .execute();
}

/** Queued and due, or processing with an expired lease (its worker died). */
function runnable(now: string) {
  return (eb: ExpressionBuilder<DB, 'jobs'>) =>
    eb.or([
      eb.and([eb('status', '=', sql.lit('queued')), eb('run_after', '<=', now)]),
      eb.and([eb('status', '=', sql.lit('processing')), eb('lease_expires_at', '<', now)]),
    ]);
}

/**
 * Claims a runnable job, serving organisations in turn: the organisation whose last claim is the
 * oldest (or that never had one) goes next, and within it the oldest job. One organisation with
 * a full queue therefore delays another's job by at most one job per lane of the job runner.
 * On PostgreSQL `FOR UPDATE SKIP LOCKED` lets several processes claim concurrently without
 * blocking; when the chosen organisation's jobs are all locked by other claimers, the oldest
 * unlocked job of any organisation is taken instead, and the claim, that fallback and the
 * organisation's turn are one statement. SQLite has a single writer, so the UPDATE is atomic as
 * it is and the turn follows it.
 */
export function claimJob(
  db: Executor,
  dialect: Dialect,
  owner: string,
  leaseMs: number,
): Promise<JobRow | undefined> {
  return claimInTurn(db, dialect, 'job_claimed_at', claimStatements, owner, leaseMs);
}

// Run on every job and after it (a lane looks again at once): built and compiled once.
const claimStatements = {
  sqlite: compiledOnce((db, owner: string, leaseExpiresAt: string, now: string) =>
    claimUpdate(
      db,
      owner,
      leaseExpiresAt,
      now,
      candidateJob(db, 'sqlite', now, 'next-organisation'),
    ),
  ),
  postgres: compiledOnce((db, owner: string, leaseExpiresAt: string, now: string) =>
    claimTakingTurn(
      db,
      'job_claimed_at',
      claimUpdate(db, owner, leaseExpiresAt, now, (eb) =>
        eb.fn.coalesce(
          candidateJob(db, 'postgres', now, 'next-organisation'),
          candidateJob(db, 'postgres', now, 'any-organisation'),
        ),
      ),
    ),
  ),
};

type ClaimFrom = 'next-organisation' | 'any-organisation';

/** The id of the job to claim: the oldest runnable one, of the organisation whose turn it is or of any. */
function candidateJob(db: Executor, dialect: Dialect, now: string, from: ClaimFrom) {
  const nextOrganisation = db
    .selectFrom('jobs')
    .leftJoin('queue_turns', 'queue_turns.org_id', 'jobs.org_id')
    .select('jobs.org_id')
    .where(runnable(now))
    .groupBy('jobs.org_id')
    .orderBy((eb) => eb.fn.coalesce(eb.fn.max('queue_turns.job_claimed_at'), sql<string>`''`))
    .orderBy((eb) => eb.fn.min('jobs.id'))
    .limit(sql.lit(1));
  let candidate = db
    .selectFrom('jobs')
    .select('id')
    // Implied by runnable(); stated so that the planner may use the partial index of unfinished jobs.
    .where(
      'status',
      'in',
      UNFINISHED.map((status) => sql.lit(status)),
    )
    .where(runnable(now));
  if (from === 'next-organisation') candidate = candidate.where('org_id', '=', nextOrganisation);
  candidate = candidate.orderBy('id').limit(sql.lit(1));
  if (dialect === 'postgres') candidate = candidate.forUpdate().skipLocked();
  return candidate;
}

function claimUpdate(
  db: Executor,
  owner: string,
  leaseExpiresAt: string,
  now: string,
  id: OperandValueExpressionOrList<DB, 'jobs', 'id'>,
) {
  return db
    .updateTable('jobs')
    .set({
      status: sql.lit('processing'),
      lease_owner: owner,
      lease_expires_at: leaseExpiresAt,
      attempts: sql`attempts + 1`,
      updated_at: now,
    })
    .where('id', '=', id)
    .returningAll();
}

/** The webhook that announces a finished job's result. */
export type JobWebhook = Pick<NewDelivery, 'webhookId' | 'eventType' | 'payload'>;

/** What a finished job's row records (read back as the request record). */
export interface JobCompletion {
  status: Extract<JobStatus, 'completed' | 'failed'>;
  userId?: number | null;
  result?: VerificationResult | null;
  matchScore?: number | null;
  deepfakeDetected?: boolean | null;
  qualityScore?: number | null;
  failureReason?: FailureReason | null;
  deviceMismatch?: boolean | null;
  samples?: number | null;
  deepfakeScore?: number | null;
  matchThreshold?: number | null;
  deepfakeThreshold?: number | null;
  models?: { speaker: string; spoof: string } | null;
  voiceprintUpgraded?: boolean | null;
  recordingQuality?: RecordingQuality | null;
  /** What the recogniser heard of the requested phrase; null when none was asked (or not analysed). */
  phrase?: PhraseOutcome | null;
  latencyMs: number;
  completedAt: string;
}

/**
 * Records the outcome only if this worker still holds the lease, so a job completes exactly once
 * even when a slow worker and a reclaiming one race; with it, the recording is dropped and the
 * result's webhook queued. On PostgreSQL the three are one statement, atomic without a
 * transaction; on SQLite three, which the caller's transaction holds together.
 */
export async function completeJob(
  db: Executor,
  dialect: Dialect,
  jobId: number,
  owner: string,
  outcome: JobCompletion,
  webhook: JobWebhook,
): Promise<boolean> {
  const completion = db
    .updateTable('jobs')
    .set({
      status: outcome.status,
      lease_owner: null,
      lease_expires_at: null,
      user_id: outcome.userId ?? null,
      result: outcome.result ?? null,
      match_score: outcome.matchScore ?? null,
      deepfake_detected: outcome.deepfakeDetected == null ? null : toFlag(outcome.deepfakeDetected),
      quality_score: outcome.qualityScore ?? null,
      failure_reason: outcome.failureReason ?? null,
      device_mismatch: outcome.deviceMismatch == null ? null : toFlag(outcome.deviceMismatch),
      samples: outcome.samples ?? null,
      deepfake_score: outcome.deepfakeScore ?? null,
      match_threshold: outcome.matchThreshold ?? null,
      deepfake_threshold: outcome.deepfakeThreshold ?? null,
      speaker_model: outcome.models?.speaker ?? null,
      spoof_model: outcome.models?.spoof ?? null,
      voiceprint_upgraded:
        outcome.voiceprintUpgraded == null ? null : toFlag(outcome.voiceprintUpgraded),
      recording_quality: outcome.recordingQuality ? JSON.stringify(outcome.recordingQuality) : null,
      phrase_transcript: outcome.phrase?.transcript ?? null,
      phrase_match_score: outcome.phrase?.matchScore ?? null,
      phrase_matched: outcome.phrase ? toFlag(outcome.phrase.matched) : null,
      latency_ms: outcome.latencyMs,
      completed_at: outcome.completedAt,
      updated_at: nowIso(),
    })
    .where('id', '=', jobId)
    .where('status', '=', 'processing')
    .where('lease_owner', '=', owner)
    .returning(['id', 'org_id', 'request_uuid']);
  if (dialect === 'postgres') {
    // one list of [column, value] pairs names the columns and selects their values, in the same order
    const pending = Object.entries(pendingDeliveryColumns(webhook)) as [
      keyof ReturnType<typeof pendingDeliveryColumns>,
      string | number | null,
    ][];
    // the recording goes, and the webhook comes, only with a completion this worker's lease allowed
    const completed = await db
      .with('completed', () => completion)
      .with('recording', (qc) =>
        qc
          .deleteFrom('job_recordings')
          .where('job_id', 'in', (eb) => eb.selectFrom('completed').select('id')),
      )
      .with('webhook', (qc) =>
        qc
          .insertInto('webhook_deliveries')
          .columns([
            'org_id',
            'job_id',
            'request_uuid',
            'attempts',
            ...pending.map(([column]) => column),
          ])
          .expression(
            qc
              .selectFrom('completed')
              .select((eb) => [
                'completed.org_id',
                'completed.id',
                'completed.request_uuid',
                sql.lit(0).as('attempts'),
                ...pending.map(([column, value]) => eb.val(value).as(column)),
              ]),
          ),
      )
      .selectFrom('completed')
      .select('id')
      .execute();
    return completed.length === 1;
  }
  if (!db.isTransaction)
    throw new Error(
      'completeJob on SQLite runs in a transaction: its three writes belong together',
    );
  const completed = await completion.executeTakeFirst();
  if (!completed) return false;
  await deleteJobRecording(db, jobId);
  await insertDelivery(db, {
    orgId: completed.org_id,
    jobId,
    requestUuid: completed.request_uuid,
    ...webhook,
  });
  return true;
}

/** Hands a claimed job back (e.g. on shutdown or a capacity error) to be retried after a delay. */
export async function releaseJob(
  db: Executor,
  jobId: number,
  owner: string,
  delayMs: number,
): Promise<void> {
  await db
    .updateTable('jobs')
    .set({
      status: 'queued',
      lease_owner: null,
      lease_expires_at: null,
      run_after: new Date(Date.now() + delayMs).toISOString(),
      updated_at: nowIso(),
    })
    .where('id', '=', jobId)
    .where('status', '=', 'processing')
    .where('lease_owner', '=', owner)
    .execute();
}

export async function verificationStats(
  db: Executor,
  orgId: number,
  sinceIso: string,
): Promise<{ total: number; failed: number }> {
  const row = await db
    .selectFrom('jobs')
    .select((eb) => [
      eb.fn.countAll<number>().as('total'),
      eb.fn
        .sum<number>(
          eb.case().when('result', 'in', ['rejected', 'inconclusive']).then(1).else(0).end(),
        )
        .as('failed'),
    ])
    .where('org_id', '=', orgId)
    .where('kind', '=', 'verification')
    .where('status', '=', 'completed')
    .where('completed_at', '>=', sinceIso)
    .executeTakeFirstOrThrow();
  return { total: Number(row.total), failed: Number(row.failed ?? 0) };
}

export async function countVerificationsBetween(
  db: Executor,
  orgId: number,
  fromIso: string,
  toIso: string,
): Promise<number> {
  const row = await db
    .selectFrom('jobs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId)
    .where('kind', '=', 'verification')
    .where('created_at', '>=', fromIso)
    .where('created_at', '<', toIso)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function queueStats(
  db: Executor,
): Promise<{ queued: number; processing: number; oldestQueuedAt: string | null }> {
  const rows = await db
    .selectFrom('jobs')
    .select((eb) => [
      'status',
      eb.fn.countAll<number>().as('n'),
      eb.fn.min('created_at').as('oldest'),
    ])
    .where('status', 'in', ['queued', 'processing'])
    .groupBy('status')
    .execute();
  const queued = rows.find((r) => r.status === 'queued');
  const processing = rows.find((r) => r.status === 'processing');
  return {
    queued: Number(queued?.n ?? 0),
    processing: Number(processing?.n ?? 0),
    oldestQueuedAt: (queued?.oldest as string | undefined) ?? null,
  };
}

export async function countJobsSince(
  db: Executor,
  orgId: number,
  sinceIso: string,
): Promise<number> {
  const row = await db
    .selectFrom('jobs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId)
    .where('created_at', '>=', sinceIso)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
