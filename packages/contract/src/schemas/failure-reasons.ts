import { z } from '../zod.js';
import { codeTable } from './common.js';

const SERVER_FAULT =
  'A server-side fault that outlasted the retries (see the server logs); not a verdict on the audio.';

/**
 * Why a voice request did not end in a decision on the voice (or why an enrolment failed): the
 * `failure_reason` of the webhooks, of the request record and of a stream's `result`. The engine's
 * error codes are listed too (a test checks them against the engine's).
 */
export const FAILURE_REASONS = {
  user_not_found:
    'Verification: the user or their voiceprint was deleted after the request was accepted.',
  user_inactive: 'Verification: the user was deactivated after the request was accepted.',
  user_deleted:
    'The user was deleted while the request was queued or processing (request records only; no webhook is sent).',
  already_enrolled:
    'Enrolment (mode `new`): the external_id was enrolled after the request was accepted.',
  voiceprint_not_found:
    'Enrolment (mode `add`): the user or their voiceprint was deleted after the request was accepted.',
  max_samples_reached:
    'Enrolment (mode `add`): the voiceprint reached its maximum number of recordings meanwhile.',
  deepfake_detected:
    'Enrolment: the recording was judged synthetic or replayed and the organisation rejects such enrolments.',
  phrase_not_matched:
    'The recording does not say the phrase it was asked to say (`phrase.matched` is false): a verification of an organisation with `require_phrase` is `rejected`, and an enrolment that carried a challenge_id or text_id fails.',
  low_snr:
    'Verification `inconclusive`: the recording is too noisy (its signal-to-noise ratio is below the minimum).',
  low_quality: 'Verification `inconclusive` for a reason the engine did not name.',
  processing_error: SERVER_FAULT,
  invalid_base64: 'The recording is not valid base64.',
  unsupported_format: 'The recording is neither WAV nor MP3.',
  corrupt_audio: "The recording's header or frames cannot be read.",
  sample_rate_too_low: "The recording's sample rate is below 16 kHz.",
  audio_too_short: 'The recording is shorter than the minimum duration.',
  audio_too_long: 'The recording is longer than the maximum duration.',
  audio_too_large: 'The decoded recording is larger than the maximum size.',
  silent_audio: 'The recording is silent.',
  clipped_audio: 'The recording is clipped too much to be analysed.',
  insufficient_speech: 'The recording has too little speech for a reliable decision.',
  voiceprint_model_mismatch:
    'The voiceprint was made with a speaker model this server does not load.',
  invalid_voiceprint: 'The stored voiceprint cannot be used (wrong size or values).',
  model_missing: SERVER_FAULT,
  model_integrity: SERVER_FAULT,
  model_invalid: SERVER_FAULT,
  manifest_invalid: SERVER_FAULT,
  model_not_found: SERVER_FAULT,
  download_failed: SERVER_FAULT,
  queue_full: SERVER_FAULT,
  timeout: SERVER_FAULT,
  aborted: SERVER_FAULT,
  engine_closed: SERVER_FAULT,
  worker_crashed: SERVER_FAULT,
  internal: SERVER_FAULT,
} as const satisfies Record<string, string>;

export type FailureReason = keyof typeof FAILURE_REASONS;
export const failureReasonNames = Object.keys(FAILURE_REASONS) as [
  FailureReason,
  ...FailureReason[],
];

export const FailureReasonSchema = z.enum(failureReasonNames).openapi('FailureReason', {
  description: `Why a voice request did not end in a decision on the voice, or why an enrolment failed.\n\n${codeTable(failureReasonNames.map((reason) => [reason, FAILURE_REASONS[reason]]))}`,
});
