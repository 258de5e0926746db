import { randomUUID } from 'node:crypto';
import { MAX_VOICEPRINT_SAMPLES } from '@voxkey/contract';
import {
  type EngineError,
  isEngineError,
  type PhraseOutcome,
  type RecordingQuality,
  type VerificationAnalysis,
  type VoiceEngine,
} from '@voxkey/engine';
import type { Executor } from '../db/connection.js';
import type { EnrollmentMode, FailureReason, JobRow } from '../db/types.js';
import type { AppDeps } from '../deps.js';
import { loadDecisionSettings } from '../decisions/settings.js';
import { loadVerificationSubject } from '../decisions/subject.js';
import { completeJob, findJobRecording, jobPhrase, releaseJob } from '../repositories/jobs.js';
import { insertUser, upsertDevice } from '../repositories/users.js';
import {
  countSamples,
  deleteVoiceprint,
  findUserWithVoiceprint,
  insertSample,
  insertVoiceprint,
  refreshVoiceprintQuality,
} from '../repositories/voiceprints.js';
import { storeUpgradeSample, type UpgradeSample } from './voiceprint-upgrade.js';
import { openRecording } from '../security/recordings.js';
import { sealEmbedding } from '../security/voiceprints.js';
import {
  type EnrolmentOutcome,
  enrollmentCompleted,
  type JobOutcome,
  type Models,
  type VerificationOutcome,
  verificationCompleted,
} from './job-events.js';

export type VoiceAnalyzer = Pick<
  VoiceEngine,
  | 'enrol'
  | 'verify'
  | 'speakerModelId'
  | 'spoofModelId'
  | 'defaultDeepfakeThreshold'
  | 'defaultEnrolmentDeepfakeThreshold'
>;

/** What happened to a claimed job, and the engine's stage timings when it ran. */
export interface ProcessResult {
  result: 'completed' | 'released' | 'lost';
  timings?: Record<string, number>;
}

interface Analysed {
  outcome: JobOutcome;
  timings?: Record<string, number>;
}

const isRetryable = (err: EngineError) =>
  err.category === 'capacity' || err.category === 'internal' || err.category === 'model';
const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;
const modelsOf = (engine: VoiceAnalyzer): Models => ({
  speaker: engine.speakerModelId,
  spoof: engine.spoofModelId,
});
/** 0..1, higher = more likely synthetic or replayed. */
const deepfakeScoreOf = (bonafideProbability: number) => round(1 - bonafideProbability, 4);

/** Latency from receipt to now, and now: when an outcome is known. */
function finishedNow(job: JobRow) {
  return {
    latencyMs: Math.max(0, Date.now() - Date.parse(job.created_at)),
    completedAt: new Date().toISOString(),
  };
}

/** The organisation's decision settings with the engine's defaults filled in too. */
async function decisionSettings(deps: AppDeps, engine: VoiceAnalyzer, orgId: number) {
  const settings = await loadDecisionSettings(deps, orgId);
  return {
    ...settings,
    deepfakeThreshold: settings.deepfakeThreshold ?? engine.defaultDeepfakeThreshold,
    enrolmentDeepfakeThreshold:
      settings.enrolmentDeepfakeThreshold ?? engine.defaultEnrolmentDeepfakeThreshold,
  };
}

/**
 * The recording as the request side stored it (its header was checked there, so the engine does not
 * check it again), with the phrase the engine is to check in it.
 */
async function recordingOf(deps: AppDeps, job: JobRow) {
  const recording = await findJobRecording(deps.database.db, job.id);
  if (!recording) throw new RecordingGoneError(job.id);
  const bytes = openRecording(deps.sealer, job.org_id, job.request_uuid, recording.bytes);
  const phrase = jobPhrase(job);
  return {
    bytes,
    options: {
      ...(recording.info ? { audio: recording.info } : {}),
      ...(phrase ? { phrase } : {}),
    },
  };
}

/** The engine's phrase outcome with its score rounded like the other scores; null when none. */
const phraseOf = (outcome: PhraseOutcome | null | undefined): PhraseOutcome | null =>
  outcome ? { ...outcome, matchScore: round(outcome.matchScore, 4) } : null;

/** Whether a phrase check passed; one the engine did not report counts as not matched. */
const phraseMatched = (outcome: PhraseOutcome | null | undefined) => outcome?.matched === true;

/** The user and voiceprint an enrolment builds on (add, replace), with its sample count. */
async function currentVoiceprint(db: Executor, job: JobRow) {
  const { user, voiceprint } =
    (await findUserWithVoiceprint(db, job.org_id, job.external_id)) ?? {};
  const samples = voiceprint ? await countSamples(db, voiceprint.id) : 0;
  return { user, voiceprint, samples };
}

async function analyseEnrolment(
  deps: AppDeps,
  engine: VoiceAnalyzer,
  job: JobRow,
): Promise<Analysed> {
  const mode: EnrollmentMode = job.mode ?? 'new';
  const current = await currentVoiceprint(deps.database.db, job);
  const common = {
    mode,
    models: modelsOf(engine),
    deepfakeThreshold: null as number | null,
    recordingQuality: null as RecordingQuality | null,
    phrase: null as PhraseOutcome | null,
  };
  // A failed request leaves the voiceprint as it was: its sample count is reported unchanged.
  const failed = (
    failureReason: FailureReason,
    measured: { qualityScore: number | null; deepfakeScore: number | null } = {
      qualityScore: null,
      deepfakeScore: null,
    },
  ): JobOutcome => ({
    kind: 'enrollment',
    outcome: {
      ...common,
      status: 'failed',
      failureReason,
      samples: mode === 'new' ? 0 : current.samples,
      ...measured,
      ...finishedNow(job),
    },
  });

  // Checked on the request side too; re-checked here because the user may have been deleted since.
  if (mode === 'add') {
    if (!current.user || !current.voiceprint) return { outcome: failed('voiceprint_not_found') };
    if (current.samples >= MAX_VOICEPRINT_SAMPLES)
      return { outcome: failed('max_samples_reached') };
  }
  if (mode === 'new' && current.user) return { outcome: failed('already_enrolled') };

  const { bytes, options } = await recordingOf(deps, job);
  try {
    const settings = await decisionSettings(deps, engine, job.org_id);
    common.deepfakeThreshold = settings.enrolmentDeepfakeThreshold;
    const analysis = await engine.enrol(bytes, options);
    common.recordingQuality = analysis.recordingQuality ?? null;
    common.phrase = phraseOf(analysis.phrase);
    const timings = numericTimings(analysis.timings);
    const qualityScore = round(analysis.qualityScore, 3);
    const deepfakeScore = deepfakeScoreOf(analysis.spoof.bonafideProbability);
    if (
      settings.rejectDeepfakeEnrollments &&
      deepfakeScore >= settings.enrolmentDeepfakeThreshold
    ) {
      return { outcome: failed('deepfake_detected', { qualityScore, deepfakeScore }), timings };
    }
    // The caller asked for a live recording: a voiceprint is never built from one that does not say the phrase.
    if (options.phrase && !phraseMatched(analysis.phrase)) {
      return { outcome: failed('phrase_not_matched', { qualityScore, deepfakeScore }), timings };
    }
    const outcome: EnrolmentOutcome = {
      ...common,
      status: 'enrolled',
      samples: mode === 'add' ? current.samples + 1 : 1,
      qualityScore,
      deepfakeScore,
      voiceprint: {
        modelId: analysis.voiceprint.modelId,
        embedding: analysis.voiceprint.embedding,
      },
      ...finishedNow(job),
    };
    return { outcome: { kind: 'enrollment', outcome }, timings };
  } catch (err) {
    if (!isEngineError(err) || isRetryable(err)) throw err;
    return { outcome: failed(err.code) };
  }
}

async function analyseVerification(
  deps: AppDeps,
  engine: VoiceAnalyzer,
  job: JobRow,
): Promise<Analysed> {
  const settings = await decisionSettings(deps, engine, job.org_id);
  type Fields = Omit<
    VerificationOutcome,
    | 'latencyMs'
    | 'completedAt'
    | 'deepfakeDetected'
    | 'matchThreshold'
    | 'deepfakeThreshold'
    | 'models'
    | 'upgradeSample'
    | 'recordingQuality'
    | 'phrase'
  >;
  const phraseAsked = jobPhrase(job) !== null;
  const verification = (fields: Fields, analysis?: VerificationAnalysis): JobOutcome => {
    const deepfakeDetected =
      fields.deepfakeScore !== null && fields.deepfakeScore >= settings.deepfakeThreshold;
    const phrase = phraseOf(analysis?.phrase);
    const decided = withPhraseRequirement(fields, phrase, settings.requirePhrase);
    // Only a passed, genuine-looking, live (when a phrase was asked) verification may give the
    // voiceprint a sample of the default model.
    const upgrade =
      analysis?.upgradeSample &&
      decided.result === 'verified' &&
      !deepfakeDetected &&
      (!phraseAsked || phraseMatched(phrase))
        ? analysis.upgradeSample
        : null;
    return {
      kind: 'verification',
      outcome: {
        ...decided,
        phrase,
        matchScore: round(fields.matchScore, 4),
        deepfakeDetected,
        matchThreshold: settings.matchThreshold,
        deepfakeThreshold: settings.deepfakeThreshold,
        models: { ...modelsOf(engine), speaker: analysis?.speakerModelId ?? engine.speakerModelId },
        recordingQuality: analysis?.recordingQuality ?? null,
        upgradeSample: upgrade
          ? {
              ...upgrade,
              qualityScore: round(analysis!.qualityScore, 3),
              recordingQuality: analysis!.recordingQuality,
            }
          : null,
        ...finishedNow(job),
      },
    };
  };
  const rejected = (reason: FailureReason, userId: number | null) =>
    verification({
      result: 'rejected',
      matchScore: 0,
      deepfakeScore: null,
      failureReason: reason,
      userId,
      deviceMismatch: null,
      recordDevice: false,
    });

  // The user may have been deleted or deactivated after the request was accepted.
  const subject = await loadVerificationSubject(deps, job.org_id, job.external_id);
  if (!subject) return { outcome: rejected('user_not_found', null) };
  const { user, voiceprint } = subject;
  if (!user.is_active) return { outcome: rejected('user_inactive', user.id) };

  const deviceMismatch =
    job.device_fingerprint && voiceprint.enrolment_fingerprint
      ? job.device_fingerprint !== voiceprint.enrolment_fingerprint
      : null;
  const { bytes, options } = await recordingOf(deps, job);
  try {
    const analysis = await engine.verify(bytes, subject.samples, {
      ...options,
      threshold: settings.matchThreshold,
    });
    const outcome = verification(
      {
        result: analysis.result,
        matchScore: analysis.matchScore,
        deepfakeScore: deepfakeScoreOf(analysis.bonafideProbability),
        failureReason:
          analysis.result === 'inconclusive' ? (analysis.inconclusiveCode ?? 'low_quality') : null,
        userId: user.id,
        deviceMismatch,
        recordDevice: true,
      },
      analysis,
    );
    return { outcome, timings: numericTimings(analysis.timings) };
  } catch (err) {
    if (!isEngineError(err) || isRetryable(err)) throw err;
    return {
      outcome: verification({
        result: 'inconclusive',
        matchScore: 0,
        deepfakeScore: null,
        failureReason: err.code,
        userId: user.id,
        deviceMismatch,
        recordDevice: true,
      }),
    };
  }
}

/**
 * `require_phrase`: a verification whose recording did not say its phrase (or that named none, when
 * the setting was turned on after it was accepted) is `rejected` with `phrase_not_matched`, whatever
 * the voice scored. An `inconclusive` result keeps its own reason: the audio allowed no decision.
 */
function withPhraseRequirement<T extends Pick<VerificationOutcome, 'result' | 'failureReason'>>(
  fields: T,
  phrase: PhraseOutcome | null,
  requirePhrase: boolean,
): T {
  if (!requirePhrase || fields.result === 'inconclusive' || phraseMatched(phrase)) return fields;
  return { ...fields, result: 'rejected', failureReason: 'phrase_not_matched' };
}

/** The outcome of a job that kept failing for reasons outside the recording. */
async function failedAfterRetries(
  deps: AppDeps,
  engine: VoiceAnalyzer,
  job: JobRow,
  code: FailureReason,
): Promise<JobOutcome> {
  const models = modelsOf(engine);
  if (job.kind === 'enrollment') {
    const mode = job.mode ?? 'new';
    const samples = mode === 'new' ? 0 : (await currentVoiceprint(deps.database.db, job)).samples;
    return {
      kind: 'enrollment',
      outcome: {
        status: 'failed',
        failureReason: code,
        mode,
        samples,
        qualityScore: null,
        deepfakeScore: null,
        deepfakeThreshold: null,
        models,
        recordingQuality: null,
        phrase: null,
        ...finishedNow(job),
      },
    };
  }
  const settings = await decisionSettings(deps, engine, job.org_id);
  return {
    kind: 'verification',
    outcome: {
      result: 'inconclusive',
      matchScore: 0,
      deepfakeDetected: false,
      deepfakeScore: null,
      failureReason: code,
      userId: null,
      deviceMismatch: null,
      recordDevice: false,
      matchThreshold: settings.matchThreshold,
      deepfakeThreshold: settings.deepfakeThreshold,
      models,
      recordingQuality: null,
      phrase: null,
      upgradeSample: null,
      ...finishedNow(job),
    },
  };
}

/**
 * Inside the completing transaction: the voiceprint the new sample goes into. `replace` deletes the
 * old voiceprint only here, so it keeps verifying until the new one is stored.
 */
async function voiceprintToExtend(
  trx: Executor,
  job: JobRow,
  mode: EnrollmentMode,
  modelId: string,
  qualityScore: number,
) {
  const fresh = (userId: number) =>
    insertVoiceprint(trx, {
      orgId: job.org_id,
      userId,
      modelId,
      enrolmentFingerprint: job.device_fingerprint,
      qualityScore,
    });
  const { user, voiceprint } =
    (await findUserWithVoiceprint(trx, job.org_id, job.external_id)) ?? {};
  if (mode === 'add') {
    // Deleted since the analysis: fail the attempt; the retry reports voiceprint_not_found.
    if (!user || !voiceprint)
      throw new Error('the voiceprint disappeared while the sample was being added');
    return { voiceprint, userId: user.id };
  }
  if (mode === 'replace' && user) {
    if (voiceprint) await deleteVoiceprint(trx, voiceprint);
    return { voiceprint: await fresh(user.id), userId: user.id };
  }
  const created = await insertUser(trx, job.org_id, job.external_id);
  return { voiceprint: await fresh(created.id), userId: created.id };
}

type EnrolledOutcome = Extract<EnrolmentOutcome, { status: 'enrolled' }>;

/** One write a completion makes besides the job's own row and webhook. */
type SideEffect =
  | { write: 'device'; userId: number }
  | { write: 'upgrade-sample'; userId: number; sample: UpgradeSample }
  | { write: 'enrolment'; outcome: EnrolledOutcome };

/**
 * What committing the outcome writes besides the job's row and webhook, in order. The one list both
 * performs the writes and decides whether the completion needs a transaction.
 */
function sideEffectsOf(job: JobRow, { kind, outcome }: JobOutcome): SideEffect[] {
  if (kind === 'enrollment') {
    return outcome.status === 'enrolled' ? [{ write: 'enrolment', outcome }] : [];
  }
  const { userId } = outcome;
  if (userId === null) return [];
  const effects: SideEffect[] = [];
  if (outcome.recordDevice && job.device_fingerprint) effects.push({ write: 'device', userId });
  if (outcome.upgradeSample) {
    effects.push({ write: 'upgrade-sample', userId, sample: outcome.upgradeSample });
  }
  return effects;
}

async function recordDevice(trx: Executor, job: JobRow, userId: number, usedAt: string) {
  if (!job.device_fingerprint) return;
  await upsertDevice(trx, {
    orgId: job.org_id,
    userId,
    fingerprint: job.device_fingerprint,
    type: job.device_type,
    usedAt,
  });
}

/** Stores an enrolment's sample (in a new, replaced or extended voiceprint) and returns its user. */
async function storeEnrolment(deps: AppDeps, trx: Executor, job: JobRow, outcome: EnrolledOutcome) {
  const { modelId, embedding } = outcome.voiceprint;
  const target = await voiceprintToExtend(trx, job, outcome.mode, modelId, outcome.qualityScore);
  const { userId } = target;
  const sealed = sealEmbedding(deps.sealer, { orgId: job.org_id, userId, modelId }, embedding);
  await insertSample(trx, target.voiceprint, {
    modelId,
    sealedEmbedding: sealed.sealed,
    sealVersion: sealed.version,
    qualityScore: outcome.qualityScore,
    recordingQuality: outcome.recordingQuality,
  });
  await refreshVoiceprintQuality(trx, target.voiceprint.id);
  await recordDevice(trx, job, userId, outcome.completedAt);
  return userId;
}

/** Performs the side effects and returns the event that records and announces the outcome. */
async function commitOutcome(
  deps: AppDeps,
  trx: Executor,
  job: JobRow,
  { kind, outcome }: JobOutcome,
  effects: SideEffect[],
) {
  let upgraded = false;
  let enrolledUserId: number | null = null;
  for (const effect of effects) {
    if (effect.write === 'device') {
      await recordDevice(trx, job, effect.userId, outcome.completedAt);
    } else if (effect.write === 'upgrade-sample') {
      upgraded = await storeUpgradeSample(deps, trx, job.org_id, effect.userId, effect.sample);
    } else {
      enrolledUserId = await storeEnrolment(deps, trx, job, effect.outcome);
    }
  }
  if (kind === 'verification') {
    const stored = upgraded ? outcome : { ...outcome, upgradeSample: null };
    return { eventType: 'verification.completed' as const, ...verificationCompleted(job, stored) };
  }
  return {
    eventType: 'enrollment.completed' as const,
    ...enrollmentCompleted(job, outcome, enrolledUserId),
  };
}

/**
 * Runs one claimed job through the engine and commits its outcome, its side effects and its
 * webhook atomically, guarded by the lease so the job completes exactly once.
 */
export async function processJob(
  deps: AppDeps,
  engine: VoiceAnalyzer,
  job: JobRow,
  owner: string,
): Promise<ProcessResult> {
  let analysed: Analysed;
  // Every earlier attempt ended without an outcome (its worker died, hung or could not commit):
  // a poison job. End it instead of letting it take a worker down again.
  const poisoned = job.attempts > deps.config.JOB_MAX_ATTEMPTS;
  try {
    if (poisoned) {
      deps.observability.logger.error(
        { jobId: job.id, orgId: job.org_id, attempts: job.attempts },
        'job exceeded its attempt limit without an outcome; failing it',
      );
      analysed = { outcome: await failedAfterRetries(deps, engine, job, 'processing_error') };
    } else {
      analysed =
        job.kind === 'enrollment'
          ? await analyseEnrolment(deps, engine, job)
          : await analyseVerification(deps, engine, job);
    }
  } catch (err) {
    // The job ended elsewhere after this claim (its user was erased, which deletes the recording):
    // nothing to run or hand back. Should the job still be ours, its lease runs out and the claim's
    // attempt limit ends it.
    if (err instanceof RecordingGoneError) return { result: 'lost' };
    if (job.attempts < deps.config.JOB_MAX_ATTEMPTS) {
      deps.observability.logger.warn(
        { err, jobId: job.id, attempt: job.attempts },
        'job failed; handed back for a retry',
      );
      await releaseJob(deps.database.db, job.id, owner, Math.min(60_000, 1000 * 2 ** job.attempts));
      return { result: 'released' };
    }
    analysed = {
      outcome: await failedAfterRetries(
        deps,
        engine,
        job,
        isEngineError(err) ? err.code : 'processing_error',
      ),
    };
  }

  let committed: { voiceprintUpgraded: boolean } | false;
  try {
    committed = await commitCompletion(deps, job, owner, analysed.outcome, poisoned);
  } catch (err) {
    // A commit that fails (e.g. a constraint the outcome breaks) is retried like a crash; past the
    // attempt limit the next claim ends the job as a poison job.
    deps.observability.logger.error(
      { err, jobId: job.id, attempt: job.attempts },
      'job outcome could not be committed; handed back',
    );
    await releaseJob(deps.database.db, job.id, owner, Math.min(60_000, 1000 * 2 ** job.attempts));
    return { result: 'released' };
  }
  if (!committed) return { result: 'lost' };
  const { kind, outcome } = analysed.outcome;
  if (kind === 'verification' && committed.voiceprintUpgraded && outcome.upgradeSample) {
    deps.observability.metrics.voiceprintUpgrades.inc({
      from_model: outcome.models.speaker,
      to_model: outcome.upgradeSample.modelId,
    });
  }
  deps.signals.deliveryQueued();
  return { result: 'completed', timings: analysed.timings };
}

function commitCompletion(
  deps: AppDeps,
  job: JobRow,
  owner: string,
  outcome: JobOutcome,
  poisoned: boolean,
): Promise<{ voiceprintUpgraded: boolean } | false> {
  const effects = sideEffectsOf(job, outcome);
  const commit = async (db: Executor) => {
    const event = await commitOutcome(deps, db, job, outcome, effects);
    const record = poisoned ? { ...event.record, status: 'failed' as const } : event.record;
    const webhook = {
      webhookId: `msg_${randomUUID()}`,
      eventType: event.eventType,
      payload: JSON.stringify(event.payload),
    };
    if (!(await completeJob(db, deps.database.dialect, job.id, owner, record, webhook))) {
      // Our lease ran out and another worker owns the job now: undo our writes.
      throw new LeaseLostError();
    }
    return { voiceprintUpgraded: event.record.voiceprintUpgraded === true };
  };
  const db = deps.database.db;
  // On PostgreSQL the completion is one statement: atomic without a transaction when it is all there is to write.
  const oneStatement = deps.database.dialect === 'postgres' && effects.length === 0;
  return (oneStatement ? commit(db) : db.transaction().execute(commit)).catch((err) => {
    if (err instanceof LeaseLostError) return false;
    throw err;
  });
}

function numericTimings(timings: object): Record<string, number> {
  return Object.fromEntries(
    Object.entries(timings).filter(
      (entry): entry is [string, number] => typeof entry[1] === 'number',
    ),
  );
}

class LeaseLostError extends Error {}

class RecordingGoneError extends Error {
  constructor(jobId: number) {
    super(`job ${jobId} has no recording`);
  }
}
