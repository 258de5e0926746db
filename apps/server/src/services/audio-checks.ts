import type { AudioCheckSchema } from '@voxkey/contract';
import {
  type AudioFormat,
  decodeBase64Audio,
  DEFAULT_INTAKE_LIMITS,
  type EngineError,
  isEngineError,
  readAudioHeader,
} from '@voxkey/engine';
import type { z } from 'zod';
import type { AppDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { AUDIO_FIELD_CODES, voiceUnavailableError } from './voice-requests.js';

export type AudioCheck = z.infer<typeof AudioCheckSchema>;

/** A pre-check answers while the person waits; past this it is a 503, not a hung request. */
export const AUDIO_CHECK_TIMEOUT_MS = 5_000;
const BUSY_RETRY_AFTER_S = 1;
const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;

/**
 * What the engine sees in a recording, and the problems that would fail an enrolment or
 * verification. Stores nothing and is not billed; runs in the engine's worker pool.
 */
export async function checkRecording(
  deps: AppDeps,
  voiceData: string,
  signal?: AbortSignal,
): Promise<AudioCheck> {
  // Bad input is a 400 whether or not this server can run the check.
  const bytes = decodeAudioField(voiceData);
  const checker = deps.audioChecker;
  if (!checker) throw voiceUnavailableError(deps.voiceUnavailable?.code);
  const timeout = AbortSignal.timeout(AUDIO_CHECK_TIMEOUT_MS);
  try {
    const check = await checker.checkAudio(bytes, {
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    return {
      usable: check.problems.length === 0,
      format: check.audio.format as AudioFormat, // file bytes went in, so a file's format comes out
      sample_rate: check.audio.sampleRate,
      duration_s: round(check.audio.durationSeconds, 3),
      net_speech_s: round(check.netSpeechSeconds, 3),
      snr_db: check.snrDb === null ? null : round(check.snrDb, 1),
      clipping_ratio: round(check.clippingRatio, 5),
      problems: check.problems,
    };
  } catch (err) {
    if (!isEngineError(err)) throw err;
    if (err.category === 'invalid_input') throw audioFieldError(err);
    if (err.category === 'model') {
      deps.observability.logger.error(
        { code: err.code },
        `voice processing unavailable: ${err.message}`,
      );
      throw voiceUnavailableError(err.code);
    }
    if (err.category === 'capacity') {
      const why =
        err.code === 'timeout' || (err.code === 'aborted' && timeout.aborted)
          ? `the check took longer than ${AUDIO_CHECK_TIMEOUT_MS} ms`
          : 'the engine is busy';
      throw new ApiError('unavailable', `The audio check could not run: ${why}; retry shortly`, {
        headers: { 'Retry-After': String(BUSY_RETRY_AFTER_S) },
      });
    }
    throw err;
  }
}

const audioFieldError = (err: EngineError) =>
  ApiError.field('voice_data', AUDIO_FIELD_CODES[err.code] ?? 'invalid_value', err.message);

/** Base64 that decodes to WAV or MP3 (a header problem such as the sample rate is the check's answer, not an error). */
function decodeAudioField(voiceData: string): Uint8Array {
  try {
    const bytes = decodeBase64Audio(voiceData, DEFAULT_INTAKE_LIMITS.maxFileBytes);
    readAudioHeader(bytes);
    return bytes;
  } catch (err) {
    if (isEngineError(err) && err.category === 'invalid_input') throw audioFieldError(err);
    throw err;
  }
}
