import type {
  EnrollmentCompletedEventSchema,
  VerificationCompletedEventSchema,
} from '@voxkey/contract';
import type { PhraseOutcome, RecordingQuality } from '@voxkey/engine';
import type { z } from 'zod';
import type { EnrollmentMode, FailureReason, JobRow, VerificationResult } from '../db/types.js';
import { type JobCompletion, phraseFields } from '../repositories/jobs.js';
import { recordingQualityFields } from '../repositories/recording-quality.js';

export type EnrollmentCompletedEvent = z.infer<typeof EnrollmentCompletedEventSchema>;
export type VerificationCompletedEvent = z.infer<typeof VerificationCompletedEventSchema>;

interface Timing {
  latencyMs: number;
  completedAt: string;
}

/** The ids of the models that processed the recording. */
export interface Models {
  speaker: string;
  spoof: string;
}

/**
 * How an enrolment ended: a sample to store, or the reason there is none. `samples` is how many
 * recordings the voiceprint holds once this outcome is committed (unchanged after a failure).
 */
export type EnrolmentOutcome = Timing & {
  mode: EnrollmentMode;
  samples: number;
  qualityScore: number | null;
  deepfakeScore: number | null;
  deepfakeThreshold: number | null;
  models: Models;
  /** The recording as measured (stored with the sample); null when it could not be analysed. */
  recordingQuality: RecordingQuality | null;
  /** The phrase check; null when the request named no phrase or the audio could not be analysed. */
  phrase: PhraseOutcome | null;
} & (
    | {
        status: 'enrolled';
        qualityScore: number;
        voiceprint: { modelId: string; embedding: Float32Array };
      }
    | { status: 'failed'; failureReason: FailureReason }
  );

/** How a verification ended. `userId` is the user compared with (null when none was found or no comparison ran). */
export interface VerificationOutcome extends Timing {
  result: VerificationResult;
  matchScore: number;
  deepfakeDetected: boolean;
  failureReason: FailureReason | null;
  userId: number | null;
  deviceMismatch: boolean | null;
  /** True when the request came from a known, active user, so its device is recorded. */
  recordDevice: boolean;
  /** null when the audio could not be analysed. */
  deepfakeScore: number | null;
  matchThreshold: number;
  deepfakeThreshold: number;
  models: Models;
  /** The recording as measured; null when it could not be analysed. */
  recordingQuality: RecordingQuality | null;
  /** The phrase check; null when the request named no phrase or the audio could not be analysed. */
  phrase: PhraseOutcome | null;
  /** A sample of the default speaker model to add to the voiceprint (an upgrade from an older model). */
  upgradeSample: {
    modelId: string;
    embedding: Float32Array;
    qualityScore: number;
    recordingQuality?: RecordingQuality | null;
  } | null;
}

export type JobOutcome =
  | { kind: 'enrollment'; outcome: EnrolmentOutcome }
  | { kind: 'verification'; outcome: VerificationOutcome };

/** What completing a job writes: the request record's fields and the webhook payload, from one outcome. */
export interface CompletedEvent<Payload> {
  record: JobCompletion;
  payload: Payload;
}

export function enrollmentCompleted(
  job: JobRow,
  outcome: EnrolmentOutcome,
  userId: number | null,
): CompletedEvent<EnrollmentCompletedEvent> {
  const enrolled = outcome.status === 'enrolled';
  const qualityScore = outcome.qualityScore;
  const failureReason = enrolled ? null : outcome.failureReason;
  return {
    record: {
      status: enrolled ? 'completed' : 'failed',
      userId,
      qualityScore,
      failureReason,
      samples: outcome.samples,
      deepfakeScore: outcome.deepfakeScore,
      deepfakeThreshold: outcome.deepfakeThreshold,
      models: outcome.models,
      recordingQuality: outcome.recordingQuality,
      phrase: outcome.phrase,
      latencyMs: outcome.latencyMs,
      completedAt: outcome.completedAt,
    },
    payload: {
      event_type: 'enrollment.completed',
      request_uuid: job.request_uuid,
      external_id: job.external_id,
      user_id: userId,
      status: outcome.status,
      quality_score: qualityScore,
      failure_reason: failureReason,
      latency_ms: outcome.latencyMs,
      created_at: outcome.completedAt,
      mode: outcome.mode,
      samples: outcome.samples,
      deepfake_score: outcome.deepfakeScore,
      models: outcome.models,
      recording_quality: outcome.recordingQuality
        ? recordingQualityFields(outcome.recordingQuality)
        : null,
      phrase: phraseFields(outcome.phrase),
    },
  };
}

export function verificationCompleted(
  job: JobRow,
  outcome: VerificationOutcome,
): CompletedEvent<VerificationCompletedEvent> {
  return {
    record: {
      status: 'completed',
      userId: outcome.userId,
      result: outcome.result,
      matchScore: outcome.matchScore,
      deepfakeDetected: outcome.deepfakeDetected,
      failureReason: outcome.failureReason,
      deviceMismatch: outcome.deviceMismatch,
      deepfakeScore: outcome.deepfakeScore,
      matchThreshold: outcome.matchThreshold,
      deepfakeThreshold: outcome.deepfakeThreshold,
      models: outcome.models,
      voiceprintUpgraded: outcome.upgradeSample !== null,
      recordingQuality: outcome.recordingQuality,
      phrase: outcome.phrase,
      latencyMs: outcome.latencyMs,
      completedAt: outcome.completedAt,
    },
    payload: {
      event_type: 'verification.completed',
      request_uuid: job.request_uuid,
      external_id: job.external_id,
      result: outcome.result,
      match_score: outcome.matchScore,
      deepfake_detected: outcome.deepfakeDetected,
      latency_ms: outcome.latencyMs,
      created_at: outcome.completedAt,
      deepfake_score: outcome.deepfakeScore,
      match_threshold: outcome.matchThreshold,
      deepfake_threshold: outcome.deepfakeThreshold,
      failure_reason: outcome.failureReason,
      models: outcome.models,
      voiceprint_upgraded: outcome.upgradeSample !== null,
      recording_quality: outcome.recordingQuality
        ? recordingQualityFields(outcome.recordingQuality)
        : null,
      phrase: phraseFields(outcome.phrase),
    },
  };
}
