import type { StreamStart } from '@voxkey/contract';
import { createStreamDecoder, isEngineError, type StreamDecoder } from '@voxkey/engine';
import { ApiError } from '../errors.js';
import { AUDIO_FIELD_CODES } from '../services/voice-requests.js';

/**
 * A stream's audio refused by the engine's decoder, as the client sees it: a refused sample rate
 * on `sample_rate` (too high is `out_of_range`, as for any field), anything else a protocol error
 * naming the declared format.
 */
function streamAudioError(err: unknown, format: StreamStart['format']): unknown {
  if (!isEngineError(err) || err.category !== 'invalid_input') return err;
  if (err.details?.sampleRate !== undefined)
    return ApiError.field(
      'sample_rate',
      err.code === 'sample_rate_too_low' ? AUDIO_FIELD_CODES[err.code]! : 'out_of_range',
      err.message,
    );
  return new ApiError('stream_protocol_error', `The audio is not ${format}: ${err.message}`);
}

/** The engine's decoder for the format the `start` message declared, throwing `ApiError`s. */
export function openStreamDecoder(
  start: Pick<StreamStart, 'format' | 'sample_rate'>,
): StreamDecoder {
  const refused = (err: unknown) => streamAudioError(err, start.format);
  let decoder: StreamDecoder;
  try {
    decoder = createStreamDecoder(start.format, start.sample_rate);
  } catch (err) {
    throw refused(err);
  }
  return {
    get sampleRate() {
      return decoder.sampleRate;
    },
    ready: () => decoder.ready(),
    async push(bytes) {
      try {
        return await decoder.push(bytes);
      } catch (err) {
        throw refused(err);
      }
    },
    async flush() {
      try {
        return await decoder.flush();
      } catch (err) {
        throw refused(err);
      }
    },
    free: () => decoder.free(),
  };
}
