/**
 * Stable error codes. `category` tells the server what to do with them:
 * - `invalid_input`: the request's audio is unusable (HTTP 400 at intake, failed enrolment later).
 * - `speech_quality`: the audio decoded but its speech does not allow a reliable decision
 *   (failed enrolment / `inconclusive` verification).
 * - `model`: a model or manifest problem (operator error; 5xx).
 * - `capacity`: the pool is saturated, the task timed out or was aborted (retry later; 503).
 * - `internal`: a bug or a crashed worker (5xx).
 */
export const ERROR_CATEGORIES = {
  invalid_base64: 'invalid_input',
  unsupported_format: 'invalid_input',
  corrupt_audio: 'invalid_input',
  sample_rate_too_low: 'invalid_input',
  audio_too_short: 'invalid_input',
  audio_too_long: 'invalid_input',
  audio_too_large: 'invalid_input',
  silent_audio: 'speech_quality',
  clipped_audio: 'speech_quality',
  insufficient_speech: 'speech_quality',
  voiceprint_model_mismatch: 'invalid_input',
  invalid_voiceprint: 'invalid_input',
  model_missing: 'model',
  model_integrity: 'model',
  model_invalid: 'model',
  manifest_invalid: 'model',
  model_not_found: 'model',
  download_failed: 'model',
  queue_full: 'capacity',
  timeout: 'capacity',
  aborted: 'capacity',
  engine_closed: 'capacity',
  worker_crashed: 'internal',
  internal: 'internal',
} as const;

export type EngineErrorCode = keyof typeof ERROR_CATEGORIES;
export type EngineErrorCategory = (typeof ERROR_CATEGORIES)[EngineErrorCode];

export class EngineError extends Error {
  readonly code: EngineErrorCode;
  readonly category: EngineErrorCategory;
  readonly details?: Record<string, unknown>;

  constructor(
    code: EngineErrorCode,
    message: string,
    details?: Record<string, unknown>,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'EngineError';
    this.code = code;
    this.category = ERROR_CATEGORIES[code] ?? 'internal';
    if (details) this.details = details;
  }

  toJSON(): SerializedEngineError {
    return { code: this.code, message: this.message, details: this.details };
  }
}

export interface SerializedEngineError {
  code: EngineErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

export function isEngineError(err: unknown): err is EngineError {
  return err instanceof EngineError;
}

export function deserializeEngineError(e: SerializedEngineError): EngineError {
  const code = e.code in ERROR_CATEGORIES ? e.code : 'internal';
  return new EngineError(code, e.message, e.details);
}
