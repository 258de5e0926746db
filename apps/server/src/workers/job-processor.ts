import { randomUUID } from 'node:crypto';
import { decodeBase64Audio, type EngineError, isEngineError, type VoiceEngine } from '@voxkey/engine';
import type { Executor } from '../db/connection.js';
import type { JobRow, VerificationResult, WebhookEventType } from '../db/types.js';
import type { AppDeps } from '../deps.js';
import { completeJob, type JobOutcome, releaseJob } from '../repositories/jobs.js';
import { insertUser, findUserByExternalId, upsertDevice } from '../repositories/users.js';
import { findVoiceprint, insertVoiceprint } from '../repositories/voiceprints.js';
import { insertDelivery } from '../repositories/webhooks.js';
import { openEmbedding, sealEmbedding } from '../security/voiceprints.js';

export type VoiceAnalyzer = Pick<VoiceEngine, 'enrol' | 'verify' | 'speakerModelId'>;

/** What happened to a claimed job, and the engine's stage timings when it ran. */
export interface ProcessResult {
  result: 'completed' | 'released' | 'lost';
  timings?: Record<string, number>;
}

interface Completion {
  outcome: JobOutcome;
  payload: Record<string, unknown>;
  eventType: WebhookEventType;
  /** Extra writes that must commit with the outcome (user, voiceprint, device). */
  write?: (trx: Executor) => Promise<number | null>;
  timings?: Record<string, number>;
}

const isRetryable = (err: EngineError) => err.category === 'capacity' || err.category === 'internal' || err.category === 'model';

function latencyFrom(job: JobRow): number {
  return Math.max(0, Date.now() - Date.parse(job.created_at));
}

async function enrolmentCompletion(deps: AppDeps, engine: VoiceAnalyzer, job: JobRow): Promise<Completion> {
  const base = { event_type: 'enrollment.completed', request_uuid: job.request_uuid, external_id: job.external_id };
  try {
    const analysis = await engine.enrol(decodeBase64Audio(job.audio ?? ''));
    const completedAt = new Date().toISOString();
    const latencyMs = latencyFrom(job);
    const quality = Math.round(analysis.qualityScore * 1000) / 1000;
    return {
      eventType: 'enrollment.completed',
      outcome: { status: 'completed', qualityScore: quality, latencyMs, completedAt },
      payload: { ...base, user_id: null, status: 'enrolled', quality_score: quality, failure_reason: null, latency_ms: latencyMs, created_at: completedAt },
      timings: numericTimings(analysis.timings),
      write: async (trx) => {
        const user = await insertUser(trx, job.org_id, job.external_id);
        await insertVoiceprint(trx, {
          orgId: job.org_id,
          userId: user.id,
          modelId: analysis.voiceprint.modelId,
          sealedEmbedding: sealEmbedding(deps.sealer, job.org_id, user.id, analysis.voiceprint.embedding),
          enrolmentFingerprint: job.device_fingerprint,
          qualityScore: quality,
        });
        if (job.device_fingerprint) {
          await upsertDevice(trx, { orgId: job.org_id, userId: user.id, fingerprint: job.device_fingerprint, type: job.device_type ?? 0, usedAt: completedAt });
        }
        return user.id;
      },
    };
  } catch (err) {
    if (!isEngineError(err) || isRetryable(err)) throw err;
    const completedAt = new Date().toISOString();
    const latencyMs = latencyFrom(job);
    return {
      eventType: 'enrollment.completed',
      outcome: { status: 'failed', failureReason: err.code, latencyMs, completedAt },
      payload: { ...base, user_id: null, status: 'failed', quality_score: null, failure_reason: err.code, latency_ms: latencyMs, created_at: completedAt },
    };
  }
}

async function verificationCompletion(deps: AppDeps, engine: VoiceAnalyzer, job: JobRow): Promise<Completion> {
  const db = deps.database.db;
  const base = { event_type: 'verification.completed', request_uuid: job.request_uuid, external_id: job.external_id };
  const finish = (fields: { result: VerificationResult; matchScore: number; deepfake: boolean; reason: string | null; userId: number | null; deviceMismatch: boolean | null }, write?: Completion['write']): Completion => {
    const completedAt = new Date().toISOString();
    const latencyMs = latencyFrom(job);
    const matchScore = Math.round(fields.matchScore * 10_000) / 10_000;
    return {
      eventType: 'verification.completed',
      outcome: {
        status: 'completed',
        userId: fields.userId,
        result: fields.result,
        matchScore,
        deepfakeDetected: fields.deepfake,
        failureReason: fields.reason,
        deviceMismatch: fields.deviceMismatch,
        latencyMs,
        completedAt,
      },
      payload: { ...base, result: fields.result, match_score: matchScore, deepfake_detected: fields.deepfake, latency_ms: latencyMs, created_at: completedAt },
      write,
    };
  };

  // The user may have been deleted or deactivated after the request was accepted.
  const user = await findUserByExternalId(db, job.org_id, job.external_id);
  const voiceprint = user ? await findVoiceprint(db, job.org_id, user.id) : undefined;
  if (!user || !voiceprint) return finish({ result: 'rejected', matchScore: 0, deepfake: false, reason: 'user_not_found', userId: null, deviceMismatch: null });
  if (!user.is_active) return finish({ result: 'rejected', matchScore: 0, deepfake: false, reason: 'user_inactive', userId: user.id, deviceMismatch: null });

  const deviceMismatch = job.device_fingerprint && voiceprint.enrolment_fingerprint ? job.device_fingerprint !== voiceprint.enrolment_fingerprint : null;
  const recordDevice: Completion['write'] = async (trx) => {
    if (job.device_fingerprint) {
      await upsertDevice(trx, { orgId: job.org_id, userId: user.id, fingerprint: job.device_fingerprint, type: job.device_type ?? 0, usedAt: new Date().toISOString() });
    }
    return user.id;
  };

  try {
    const embedding = openEmbedding(deps.sealer, job.org_id, user.id, voiceprint.sealed_embedding);
    const analysis = await engine.verify(decodeBase64Audio(job.audio ?? ''), { modelId: voiceprint.model_id, embedding }, { threshold: deps.config.MATCH_THRESHOLD });
    const completion = finish(
      {
        result: analysis.result,
        matchScore: analysis.matchScore,
        deepfake: analysis.deepfakeDetected,
        reason: analysis.result === 'inconclusive' ? (analysis.inconclusiveReason ?? 'low_quality') : null,
        userId: user.id,
        deviceMismatch,
      },
      recordDevice,
    );
    return { ...completion, timings: numericTimings(analysis.timings) };
  } catch (err) {
    if (!isEngineError(err) || isRetryable(err)) throw err;
    return finish({ result: 'inconclusive', matchScore: 0, deepfake: false, reason: err.code, userId: user.id, deviceMismatch }, recordDevice);
  }
}

/**
 * Runs one claimed job through the engine and commits its outcome, its side effects and its
 * webhook in one transaction, guarded by the lease so the job completes exactly once.
 */
export async function processJob(deps: AppDeps, engine: VoiceAnalyzer, job: JobRow, owner: string): Promise<ProcessResult> {
  let completion: Completion;
  try {
    completion = job.kind === 'enrollment' ? await enrolmentCompletion(deps, engine, job) : await verificationCompletion(deps, engine, job);
  } catch (err) {
    if (job.attempts < deps.config.JOB_MAX_ATTEMPTS) {
      deps.observability.logger.warn({ err, jobId: job.id, attempt: job.attempts }, 'job failed; handed back for a retry');
      await releaseJob(deps.database.db, job.id, owner, Math.min(60_000, 1000 * 2 ** job.attempts));
      return { result: 'released' };
    }
    const code = isEngineError(err) ? err.code : 'processing_error';
    completion = failedAfterRetries(job, code);
  }

  const committed = await deps.database.db.transaction().execute(async (trx) => {
    const userId = completion.write ? await completion.write(trx) : (completion.outcome.userId ?? null);
    const outcome = { ...completion.outcome, userId };
    if (!(await completeJob(trx, job.id, owner, outcome))) {
      // Our lease ran out and another worker owns the job now: undo our writes.
      throw new LeaseLostError();
    }
    const payload = completion.eventType === 'enrollment.completed' ? { ...completion.payload, user_id: userId } : completion.payload;
    await insertDelivery(trx, {
      orgId: job.org_id,
      jobId: job.id,
      webhookId: `msg_${randomUUID()}`,
      eventType: completion.eventType,
      requestUuid: job.request_uuid,
      payload: JSON.stringify(payload),
    });
    return true;
  }).catch((err) => {
    if (err instanceof LeaseLostError) return false;
    throw err;
  });
  if (!committed) return { result: 'lost' };
  deps.signals.deliveryQueued();
  return { result: 'completed', timings: completion.timings };
}

function numericTimings(timings: object): Record<string, number> {
  return Object.fromEntries(Object.entries(timings).filter((entry): entry is [string, number] => typeof entry[1] === 'number'));
}

class LeaseLostError extends Error {}

function failedAfterRetries(job: JobRow, code: string): Completion {
  const completedAt = new Date().toISOString();
  const latencyMs = latencyFrom(job);
  const base = { request_uuid: job.request_uuid, external_id: job.external_id, latency_ms: latencyMs, created_at: completedAt };
  if (job.kind === 'enrollment') {
    return {
      eventType: 'enrollment.completed',
      outcome: { status: 'failed', failureReason: code, latencyMs, completedAt },
      payload: { event_type: 'enrollment.completed', ...base, user_id: null, status: 'failed', quality_score: null, failure_reason: code },
    };
  }
  return {
    eventType: 'verification.completed',
    outcome: { status: 'completed', result: 'inconclusive', matchScore: 0, deepfakeDetected: false, failureReason: code, latencyMs, completedAt },
    payload: { event_type: 'verification.completed', ...base, result: 'inconclusive', match_score: 0, deepfake_detected: false },
  };
}
