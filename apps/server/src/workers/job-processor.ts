import { randomUUID } from 'node:crypto';
import { decodeBase64Audio, type EngineError, isEngineError, type VoiceEngine } from '@voxkey/engine';
import type { Executor } from '../db/connection.js';
import { MAX_VOICEPRINT_SAMPLES } from '@voxkey/contract';
import type { EnrollmentMode, JobRow, VerificationResult, WebhookEventType } from '../db/types.js';
import type { AppDeps } from '../deps.js';
import { completeJob, type JobOutcome, releaseJob } from '../repositories/jobs.js';
import { insertUser, findUserByExternalId, upsertDevice } from '../repositories/users.js';
import { fromFlag } from '../repositories/clock.js';
import { findSettings } from '../repositories/organisations.js';
import { countSamples, deleteVoiceprint, findVoiceprint, insertSample, insertVoiceprint, listSamples, refreshVoiceprintQuality } from '../repositories/voiceprints.js';
import { insertDelivery } from '../repositories/webhooks.js';
import { openEmbedding, sealEmbedding } from '../security/voiceprints.js';

export type VoiceAnalyzer = Pick<VoiceEngine, 'enrol' | 'verify' | 'speakerModelId' | 'spoofModelId' | 'defaultDeepfakeThreshold'>;

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

/** The organisation's decision settings with the server's defaults filled in. */
interface DecisionSettings {
  matchThreshold: number;
  deepfakeThreshold: number;
  rejectDeepfakeEnrollments: boolean;
}

async function decisionSettings(deps: AppDeps, engine: VoiceAnalyzer, orgId: number): Promise<DecisionSettings> {
  const row = await findSettings(deps.database.db, orgId);
  return {
    matchThreshold: row?.match_threshold ?? deps.config.MATCH_THRESHOLD,
    deepfakeThreshold: row?.deepfake_threshold ?? engine.defaultDeepfakeThreshold,
    rejectDeepfakeEnrollments: row ? fromFlag(row.reject_deepfake_enrollments) : true,
  };
}

const isRetryable = (err: EngineError) => err.category === 'capacity' || err.category === 'internal' || err.category === 'model';
const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;
const modelsOf = (engine: VoiceAnalyzer) => ({ speaker: engine.speakerModelId, spoof: engine.spoofModelId });

function latencyFrom(job: JobRow): number {
  return Math.max(0, Date.now() - Date.parse(job.created_at));
}

/** The user and voiceprint an enrolment builds on (add, replace), with its sample count. */
async function currentVoiceprint(db: Executor, job: JobRow) {
  const user = await findUserByExternalId(db, job.org_id, job.external_id);
  const voiceprint = user ? await findVoiceprint(db, job.org_id, user.id) : undefined;
  const samples = voiceprint ? await countSamples(db, voiceprint.id) : 0;
  return { user, voiceprint, samples };
}

async function enrolmentCompletion(deps: AppDeps, engine: VoiceAnalyzer, job: JobRow): Promise<Completion> {
  const mode: EnrollmentMode = job.mode ?? 'new';
  const models = modelsOf(engine);
  const base = { event_type: 'enrollment.completed', request_uuid: job.request_uuid, external_id: job.external_id, mode };
  const current = await currentVoiceprint(deps.database.db, job);
  // A failed request leaves the voiceprint as it was: report its sample count unchanged.
  const samplesBefore = mode === 'new' ? 0 : current.samples;
  const fail = (reason: string, measured: { quality: number | null; deepfakeScore: number | null } = { quality: null, deepfakeScore: null }): Completion => {
    const completedAt = new Date().toISOString();
    const latencyMs = latencyFrom(job);
    return {
      eventType: 'enrollment.completed',
      outcome: { status: 'failed', failureReason: reason, qualityScore: measured.quality, samples: samplesBefore, deepfakeScore: measured.deepfakeScore, models, latencyMs, completedAt },
      payload: {
        ...base,
        user_id: null,
        status: 'failed',
        quality_score: measured.quality,
        failure_reason: reason,
        latency_ms: latencyMs,
        created_at: completedAt,
        samples: samplesBefore,
        deepfake_score: measured.deepfakeScore,
        models,
      },
    };
  };

  // Re-checked here: the user may have been deleted, or the voiceprint filled, after acceptance.
  if (mode === 'add') {
    if (!current.user || !current.voiceprint) return fail('voiceprint_not_found');
    if (current.samples >= MAX_VOICEPRINT_SAMPLES) return fail('max_samples_reached');
    if (current.voiceprint.model_id !== engine.speakerModelId) return fail('voiceprint_model_mismatch');
  }
  if (mode === 'new' && current.user) return fail('already_enrolled');

  try {
    const settings = await decisionSettings(deps, engine, job.org_id);
    const analysis = await engine.enrol(decodeBase64Audio(job.audio ?? ''));
    const quality = round(analysis.qualityScore, 3);
    const deepfakeScore = round(1 - analysis.spoof.bonafideProbability, 4);
    const timings = numericTimings(analysis.timings);
    if (settings.rejectDeepfakeEnrollments && deepfakeScore >= settings.deepfakeThreshold) {
      return { ...fail('deepfake_detected', { quality, deepfakeScore }), timings };
    }
    const completedAt = new Date().toISOString();
    const latencyMs = latencyFrom(job);
    const samples = mode === 'add' ? current.samples + 1 : 1;
    const write = async (trx: Executor) => {
      const { voiceprint, userId } = await voiceprintToExtend(trx, job, mode, analysis.voiceprint.modelId, quality);
      const sealed = sealEmbedding(deps.sealer, { orgId: job.org_id, userId, modelId: analysis.voiceprint.modelId }, analysis.voiceprint.embedding);
      await insertSample(trx, voiceprint, { modelId: analysis.voiceprint.modelId, sealedEmbedding: sealed.sealed, sealVersion: sealed.version, qualityScore: quality });
      await refreshVoiceprintQuality(trx, voiceprint.id);
      if (job.device_fingerprint) {
        await upsertDevice(trx, { orgId: job.org_id, userId, fingerprint: job.device_fingerprint, type: job.device_type ?? 0, usedAt: completedAt });
      }
      return userId;
    };
    return {
      eventType: 'enrollment.completed',
      outcome: { status: 'completed', qualityScore: quality, samples, deepfakeScore, deepfakeThreshold: settings.deepfakeThreshold, models, latencyMs, completedAt },
      payload: {
        ...base,
        user_id: null,
        status: 'enrolled',
        quality_score: quality,
        failure_reason: null,
        latency_ms: latencyMs,
        created_at: completedAt,
        samples,
        deepfake_score: deepfakeScore,
        models,
      },
      timings,
      write,
    };
  } catch (err) {
    if (!isEngineError(err) || isRetryable(err)) throw err;
    return fail(err.code);
  }
}

/**
 * Inside the completing transaction: the voiceprint the new sample goes into. `replace` deletes the
 * old voiceprint only here, so it keeps verifying until the new one is stored.
 */
async function voiceprintToExtend(trx: Executor, job: JobRow, mode: EnrollmentMode, modelId: string, quality: number) {
  const fresh = (userId: number) =>
    insertVoiceprint(trx, { orgId: job.org_id, userId, modelId, enrolmentFingerprint: job.device_fingerprint, qualityScore: quality });
  const user = await findUserByExternalId(trx, job.org_id, job.external_id);
  if (mode === 'add') {
    const voiceprint = user ? await findVoiceprint(trx, job.org_id, user.id) : undefined;
    // Deleted since the checks above: fail the attempt; the retry reports voiceprint_not_found.
    if (!user || !voiceprint) throw new Error('the voiceprint disappeared while the sample was being added');
    return { voiceprint, userId: user.id };
  }
  if (mode === 'replace' && user) {
    const old = await findVoiceprint(trx, job.org_id, user.id);
    if (old) await deleteVoiceprint(trx, old);
    return { voiceprint: await fresh(user.id), userId: user.id };
  }
  const created = await insertUser(trx, job.org_id, job.external_id);
  return { voiceprint: await fresh(created.id), userId: created.id };
}

async function verificationCompletion(deps: AppDeps, engine: VoiceAnalyzer, job: JobRow): Promise<Completion> {
  const db = deps.database.db;
  const models = modelsOf(engine);
  const settings = await decisionSettings(deps, engine, job.org_id);
  const base = { event_type: 'verification.completed', request_uuid: job.request_uuid, external_id: job.external_id };
  const finish = (
    fields: { result: VerificationResult; matchScore: number; deepfakeScore: number | null; reason: string | null; userId: number | null; deviceMismatch: boolean | null },
    write?: Completion['write'],
  ): Completion => {
    const completedAt = new Date().toISOString();
    const latencyMs = latencyFrom(job);
    const matchScore = round(fields.matchScore, 4);
    const deepfakeScore = fields.deepfakeScore === null ? null : round(fields.deepfakeScore, 4);
    const deepfake = deepfakeScore !== null && deepfakeScore >= settings.deepfakeThreshold;
    return {
      eventType: 'verification.completed',
      outcome: {
        status: 'completed',
        userId: fields.userId,
        result: fields.result,
        matchScore,
        deepfakeDetected: deepfake,
        failureReason: fields.reason,
        deviceMismatch: fields.deviceMismatch,
        deepfakeScore,
        matchThreshold: settings.matchThreshold,
        deepfakeThreshold: settings.deepfakeThreshold,
        models,
        latencyMs,
        completedAt,
      },
      payload: {
        ...base,
        result: fields.result,
        match_score: matchScore,
        deepfake_detected: deepfake,
        latency_ms: latencyMs,
        created_at: completedAt,
        deepfake_score: deepfakeScore,
        match_threshold: settings.matchThreshold,
        deepfake_threshold: settings.deepfakeThreshold,
        failure_reason: fields.reason,
        models,
      },
      write,
    };
  };

  // The user may have been deleted or deactivated after the request was accepted.
  const user = await findUserByExternalId(db, job.org_id, job.external_id);
  const voiceprint = user ? await findVoiceprint(db, job.org_id, user.id) : undefined;
  const samples = voiceprint ? await listSamples(db, voiceprint.id) : [];
  if (!user || !voiceprint || samples.length === 0) {
    return finish({ result: 'rejected', matchScore: 0, deepfakeScore: null, reason: 'user_not_found', userId: null, deviceMismatch: null });
  }
  if (!user.is_active) return finish({ result: 'rejected', matchScore: 0, deepfakeScore: null, reason: 'user_inactive', userId: user.id, deviceMismatch: null });

  const deviceMismatch = job.device_fingerprint && voiceprint.enrolment_fingerprint ? job.device_fingerprint !== voiceprint.enrolment_fingerprint : null;
  const recordDevice: Completion['write'] = async (trx) => {
    if (job.device_fingerprint) {
      await upsertDevice(trx, { orgId: job.org_id, userId: user.id, fingerprint: job.device_fingerprint, type: job.device_type ?? 0, usedAt: new Date().toISOString() });
    }
    return user.id;
  };

  try {
    const voiceprints = samples.map((sample) => ({
      modelId: sample.model_id,
      embedding: openEmbedding(deps.sealer, { orgId: job.org_id, userId: user.id, modelId: sample.model_id }, sample.sealed_embedding, sample.seal_version),
    }));
    const analysis = await engine.verify(decodeBase64Audio(job.audio ?? ''), voiceprints, { threshold: settings.matchThreshold });
    const completion = finish(
      {
        result: analysis.result,
        matchScore: analysis.matchScore,
        deepfakeScore: 1 - analysis.bonafideProbability,
        reason: analysis.result === 'inconclusive' ? (analysis.inconclusiveCode ?? 'low_quality') : null,
        userId: user.id,
        deviceMismatch,
      },
      recordDevice,
    );
    return { ...completion, timings: numericTimings(analysis.timings) };
  } catch (err) {
    if (!isEngineError(err) || isRetryable(err)) throw err;
    return finish({ result: 'inconclusive', matchScore: 0, deepfakeScore: null, reason: err.code, userId: user.id, deviceMismatch }, recordDevice);
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
    completion = await failedAfterRetries(deps, engine, job, code);
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

async function failedAfterRetries(deps: AppDeps, engine: VoiceAnalyzer, job: JobRow, code: string): Promise<Completion> {
  const models = modelsOf(engine);
  const completedAt = new Date().toISOString();
  const latencyMs = latencyFrom(job);
  const base = { request_uuid: job.request_uuid, external_id: job.external_id, latency_ms: latencyMs, created_at: completedAt };
  if (job.kind === 'enrollment') {
    const samples = job.mode === 'new' || job.mode === null ? 0 : (await currentVoiceprint(deps.database.db, job)).samples;
    return {
      eventType: 'enrollment.completed',
      outcome: { status: 'failed', failureReason: code, samples, models, latencyMs, completedAt },
      payload: {
        event_type: 'enrollment.completed',
        ...base,
        mode: job.mode ?? 'new',
        user_id: null,
        status: 'failed',
        quality_score: null,
        failure_reason: code,
        samples,
        deepfake_score: null,
        models,
      },
    };
  }
  const { matchThreshold, deepfakeThreshold } = await decisionSettings(deps, engine, job.org_id);
  return {
    eventType: 'verification.completed',
    outcome: {
      status: 'completed',
      result: 'inconclusive',
      matchScore: 0,
      deepfakeDetected: false,
      failureReason: code,
      matchThreshold,
      deepfakeThreshold,
      models,
      latencyMs,
      completedAt,
    },
    payload: {
      event_type: 'verification.completed',
      ...base,
      result: 'inconclusive',
      match_score: 0,
      deepfake_detected: false,
      deepfake_score: null,
      match_threshold: matchThreshold,
      deepfake_threshold: deepfakeThreshold,
      failure_reason: code,
      models,
    },
  };
}
