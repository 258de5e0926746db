import { randomUUID } from 'node:crypto';
import { type EngineError, isEngineError, type VoiceEngine } from '@voxkey/engine';
import type { Executor } from '../db/connection.js';
import type { JobRow } from '../db/types.js';
import type { AppDeps } from '../deps.js';
import { completeJob, jobRecording, releaseJob } from '../repositories/jobs.js';
import { findUserByExternalId, insertUser, upsertDevice } from '../repositories/users.js';
import { findVoiceprint, insertVoiceprint } from '../repositories/voiceprints.js';
import { insertDelivery } from '../repositories/webhooks.js';
import { openEmbedding, sealEmbedding } from '../security/voiceprints.js';
import {
  type EnrolmentOutcome,
  enrollmentCompleted,
  type JobOutcome,
  type VerificationOutcome,
  verificationCompleted,
} from './job-events.js';

export type VoiceAnalyzer = Pick<VoiceEngine, 'enrol' | 'verify' | 'speakerModelId'>;

/** What happened to a claimed job, and the engine's stage timings when it ran. */
export interface ProcessResult {
  result: 'completed' | 'released' | 'lost';
  timings?: Record<string, number>;
}

interface Analysed {
  outcome: JobOutcome;
  timings?: Record<string, number>;
}

const isRetryable = (err: EngineError) => err.category === 'capacity' || err.category === 'internal' || err.category === 'model';

/** Latency from receipt to now, and now: when an outcome is known. */
function finishedNow(job: JobRow) {
  return { latencyMs: Math.max(0, Date.now() - Date.parse(job.created_at)), completedAt: new Date().toISOString() };
}

/** The recording as the request side stored it; its header was checked there, so the engine does not check it again. */
function recordingOf(job: JobRow) {
  const recording = jobRecording(job);
  if (!recording) throw new Error(`job ${job.id} has no recording`);
  return { bytes: recording.bytes, options: recording.info ? { audio: recording.info } : {} };
}

async function analyseEnrolment(engine: VoiceAnalyzer, job: JobRow): Promise<Analysed> {
  const { bytes, options } = recordingOf(job);
  try {
    const analysis = await engine.enrol(bytes, options);
    const outcome: EnrolmentOutcome = {
      status: 'enrolled',
      qualityScore: Math.round(analysis.qualityScore * 1000) / 1000,
      voiceprint: { modelId: analysis.voiceprint.modelId, embedding: analysis.voiceprint.embedding },
      ...finishedNow(job),
    };
    return { outcome: { kind: 'enrollment', outcome }, timings: numericTimings(analysis.timings) };
  } catch (err) {
    if (!isEngineError(err) || isRetryable(err)) throw err;
    return { outcome: { kind: 'enrollment', outcome: { status: 'failed', failureReason: err.code, ...finishedNow(job) } } };
  }
}

async function analyseVerification(deps: AppDeps, engine: VoiceAnalyzer, job: JobRow): Promise<Analysed> {
  const db = deps.database.db;
  const verification = (fields: Omit<VerificationOutcome, 'latencyMs' | 'completedAt'>): JobOutcome => ({
    kind: 'verification',
    outcome: { ...fields, matchScore: Math.round(fields.matchScore * 10_000) / 10_000, ...finishedNow(job) },
  });
  const rejected = (reason: string, userId: number | null) =>
    verification({ result: 'rejected', matchScore: 0, deepfakeDetected: false, failureReason: reason, userId, deviceMismatch: null, recordDevice: false });

  // The user may have been deleted or deactivated after the request was accepted.
  const user = await findUserByExternalId(db, job.org_id, job.external_id);
  const voiceprint = user ? await findVoiceprint(db, job.org_id, user.id) : undefined;
  if (!user || !voiceprint) return { outcome: rejected('user_not_found', null) };
  if (!user.is_active) return { outcome: rejected('user_inactive', user.id) };

  const deviceMismatch = job.device_fingerprint && voiceprint.enrolment_fingerprint ? job.device_fingerprint !== voiceprint.enrolment_fingerprint : null;
  const { bytes, options } = recordingOf(job);
  try {
    const embedding = openEmbedding(deps.sealer, job.org_id, user.id, voiceprint.sealed_embedding);
    const analysis = await engine.verify(bytes, { modelId: voiceprint.model_id, embedding }, { ...options, threshold: deps.config.MATCH_THRESHOLD });
    const outcome = verification({
      result: analysis.result,
      matchScore: analysis.matchScore,
      deepfakeDetected: analysis.deepfakeDetected,
      failureReason: analysis.result === 'inconclusive' ? (analysis.inconclusiveReason ?? 'low_quality') : null,
      userId: user.id,
      deviceMismatch,
      recordDevice: true,
    });
    return { outcome, timings: numericTimings(analysis.timings) };
  } catch (err) {
    if (!isEngineError(err) || isRetryable(err)) throw err;
    const outcome = verification({ result: 'inconclusive', matchScore: 0, deepfakeDetected: false, failureReason: err.code, userId: user.id, deviceMismatch, recordDevice: true });
    return { outcome };
  }
}

/** The outcome of a job that kept failing for reasons outside the recording. */
function failedAfterRetries(job: JobRow, code: string): JobOutcome {
  if (job.kind === 'enrollment') return { kind: 'enrollment', outcome: { status: 'failed', failureReason: code, ...finishedNow(job) } };
  return {
    kind: 'verification',
    outcome: { result: 'inconclusive', matchScore: 0, deepfakeDetected: false, failureReason: code, userId: null, deviceMismatch: null, recordDevice: false, ...finishedNow(job) },
  };
}

/** Writes the outcome's side effects (user, voiceprint, device) and returns the event that records and announces it. */
async function commitOutcome(deps: AppDeps, trx: Executor, job: JobRow, { kind, outcome }: JobOutcome) {
  const recordDevice = async (userId: number) => {
    if (!job.device_fingerprint) return;
    await upsertDevice(trx, { orgId: job.org_id, userId, fingerprint: job.device_fingerprint, type: job.device_type ?? 0, usedAt: outcome.completedAt });
  };
  if (kind === 'verification') {
    if (outcome.recordDevice && outcome.userId !== null) await recordDevice(outcome.userId);
    return { eventType: 'verification.completed' as const, ...verificationCompleted(job, outcome) };
  }
  let userId: number | null = null;
  if (outcome.status === 'enrolled') {
    const user = await insertUser(trx, job.org_id, job.external_id);
    userId = user.id;
    await insertVoiceprint(trx, {
      orgId: job.org_id,
      userId: user.id,
      modelId: outcome.voiceprint.modelId,
      sealedEmbedding: sealEmbedding(deps.sealer, job.org_id, user.id, outcome.voiceprint.embedding),
      enrolmentFingerprint: job.device_fingerprint,
      qualityScore: outcome.qualityScore,
    });
    await recordDevice(user.id);
  }
  return { eventType: 'enrollment.completed' as const, ...enrollmentCompleted(job, outcome, userId) };
}

/**
 * Runs one claimed job through the engine and commits its outcome, its side effects and its
 * webhook in one transaction, guarded by the lease so the job completes exactly once.
 */
export async function processJob(deps: AppDeps, engine: VoiceAnalyzer, job: JobRow, owner: string): Promise<ProcessResult> {
  let analysed: Analysed;
  try {
    analysed = job.kind === 'enrollment' ? await analyseEnrolment(engine, job) : await analyseVerification(deps, engine, job);
  } catch (err) {
    if (job.attempts < deps.config.JOB_MAX_ATTEMPTS) {
      deps.observability.logger.warn({ err, jobId: job.id, attempt: job.attempts }, 'job failed; handed back for a retry');
      await releaseJob(deps.database.db, job.id, owner, Math.min(60_000, 1000 * 2 ** job.attempts));
      return { result: 'released' };
    }
    analysed = { outcome: failedAfterRetries(job, isEngineError(err) ? err.code : 'processing_error') };
  }

  const committed = await deps.database.db
    .transaction()
    .execute(async (trx) => {
      const event = await commitOutcome(deps, trx, job, analysed.outcome);
      if (!(await completeJob(trx, job.id, owner, event.record))) {
        // Our lease ran out and another worker owns the job now: undo our writes.
        throw new LeaseLostError();
      }
      await insertDelivery(trx, {
        orgId: job.org_id,
        jobId: job.id,
        webhookId: `msg_${randomUUID()}`,
        eventType: event.eventType,
        requestUuid: job.request_uuid,
        payload: JSON.stringify(event.payload),
      });
      return true;
    })
    .catch((err) => {
      if (err instanceof LeaseLostError) return false;
      throw err;
    });
  if (!committed) return { result: 'lost' };
  deps.signals.deliveryQueued();
  return { result: 'completed', timings: analysed.timings };
}

function numericTimings(timings: object): Record<string, number> {
  return Object.fromEntries(Object.entries(timings).filter((entry): entry is [string, number] => typeof entry[1] === 'number'));
}

class LeaseLostError extends Error {}
