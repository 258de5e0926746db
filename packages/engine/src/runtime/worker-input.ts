import { isPcmAudio, type AudioInput } from '../audio/intake.js';

/**
 * The input as a worker task carries it, and the buffer that moves to the worker with it instead of
 * being copied. `handOver`: the caller's own buffer moves when the input spans all of it (it is
 * detached afterwards); otherwise a copy does.
 */
export function forWorker(
  audio: AudioInput,
  handOver: boolean,
): { audio: AudioInput; transfer: ArrayBuffer } {
  const view = isPcmAudio(audio) ? audio.pcm : audio;
  const whole =
    handOver &&
    view.byteOffset === 0 &&
    view.byteLength === view.buffer.byteLength &&
    view.buffer instanceof ArrayBuffer;
  const own = whole ? view : view.slice();
  const transfer = own.buffer as ArrayBuffer;
  if (!isPcmAudio(audio)) return { audio: own as Uint8Array, transfer };
  return {
    audio: { pcm: own as Int16Array | Float32Array, sampleRate: audio.sampleRate },
    transfer,
  };
}

/** Throws a TypeError for anything but file bytes or `{ pcm, sampleRate }`. */
export function assertAudioInput(audio: AudioInput): void {
  if (audio instanceof Uint8Array) return;
  if (
    audio &&
    (audio.pcm instanceof Int16Array || audio.pcm instanceof Float32Array) &&
    typeof audio.sampleRate === 'number'
  )
    return;
  throw new TypeError(
    'audio must be the recording file bytes as a Uint8Array (base64 is decoded by the caller: decodeBase64Audio), or { pcm: Int16Array | Float32Array, sampleRate }',
  );
}
