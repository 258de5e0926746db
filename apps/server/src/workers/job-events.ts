import type { EnrollmentCompletedEventSchema, VerificationCompletedEventSchema } from '@voxkey/contract';
import type { z } from 'zod';
import type { JobRow, VerificationResult } from '../db/types.js';
import type { JobCompletion } from '../repositories/jobs.js';

export type EnrollmentCompletedEvent = z.infer<typeof EnrollmentCompletedEventSchema>;
export type VerificationCompletedEvent = z.infer<typeof VerificationCompletedEventSchema>;

interface Timing {
  latencyMs: number;
  completedAt: string;
}

/** How an enrolment ended: a voiceprint to store, or the reason there is none. */
export type EnrolmentOutcome = Timing &
  (
    | { status: 'enrolled'; qualityScore: number; voiceprint: { modelId: string; embedding: Float32Array } }
    | { status: 'failed'; failureReason: string }
  );

/** How a verification ended. `userId` is the user compared with (null when none was found or no comparison ran). */
export interface VerificationOutcome extends Timing {
  result: VerificationResult;
  matchScore: number;
  deepfakeDetected: boolean;
  failureReason: string | null;
  userId: number | null;
  deviceMismatch: boolean | null;
  /** True when the request came from a known, active user, so its device is recorded. */
  recordDevice: boolean;
}

export type JobOutcome = { kind: 'enrollment'; outcome: EnrolmentOutcome } | { kind: 'verification'; outcome: VerificationOutcome };

/** What completing a job writes: the request record's fields and the webhook payload, from one outcome. */
export interface CompletedEvent<Payload> {
  record: JobCompletion;
  payload: Payload;
}

export function enrollmentCompleted(job: JobRow, outcome: EnrolmentOutcome, userId: number | null): CompletedEvent<EnrollmentCompletedEvent> {
  const enrolled = outcome.status === 'enrolled';
  const qualityScore = enrolled ? outcome.qualityScore : null;
  const failureReason = enrolled ? null : outcome.failureReason;
  return {
    record: {
      status: enrolled ? 'completed' : 'failed',
      userId,
      qualityScore,
      failureReason,
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
    },
  };
}

export function verificationCompleted(job: JobRow, outcome: VerificationOutcome): CompletedEvent<VerificationCompletedEvent> {
  return {
    record: {
      status: 'completed',
      userId: outcome.userId,
      result: outcome.result,
      matchScore: outcome.matchScore,
      deepfakeDetected: outcome.deepfakeDetected,
      failureReason: outcome.failureReason,
      deviceMismatch: outcome.deviceMismatch,
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
    },
  };
}
