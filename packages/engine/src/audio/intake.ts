import { EngineError } from '../errors.js';
import { LIMITS, TARGET_SAMPLE_RATE } from '../limits.js';
import { decodeMp3 } from './mp3.js';
import { scanMp3 } from './mp3-frames.js';
import { resample } from './resample.js';
import { sniffFormat, type AudioFormat } from './sniff.js';
import { decodeWav, parseWavHeader } from './wav.js';

export interface AudioInfo {
  /** `pcm`: samples handed over already decoded (`PcmAudio`). */
  format: AudioFormat | 'pcm';
  sampleRate: number;
  channels: number;
  durationSeconds: number;
  bytes: number;
}

export interface IntakeLimits {
  maxFileBytes: number;
  maxDurationSeconds: number;
  minDurationSeconds: number;
}

export const DEFAULT_INTAKE_LIMITS: IntakeLimits = {
  maxFileBytes: LIMITS.maxFileBytes,
  maxDurationSeconds: LIMITS.maxDurationSeconds,
  minDurationSeconds: LIMITS.minDurationSeconds,
};

/**
 * The header check: size, format (sniffed from the bytes), headers, sample rate and duration,
 * without decoding samples. Synchronous and cheap; throws `EngineError` (category `invalid_input`).
 */
export function inspectBytes(
  bytes: Uint8Array,
  limits: IntakeLimits = DEFAULT_INTAKE_LIMITS,
): AudioInfo {
  if (bytes.length > limits.maxFileBytes) {
    throw new EngineError(
      'audio_too_large',
      `audio exceeds the ${limits.maxFileBytes} byte limit`,
      { limitBytes: limits.maxFileBytes },
    );
  }
  return inspectInfo(readAudioHeader(bytes), limits);
}

/** Sample rate and duration against the limits. */
function inspectInfo(info: AudioInfo, limits: IntakeLimits): AudioInfo {
  if (info.sampleRate < LIMITS.minSampleRate) {
    throw new EngineError(
      'sample_rate_too_low',
      `sample rate ${info.sampleRate} Hz is below the required ${LIMITS.minSampleRate} Hz`,
      {
        sampleRate: info.sampleRate,
      },
    );
  }
  if (info.durationSeconds > limits.maxDurationSeconds) {
    throw new EngineError(
      'audio_too_long',
      `audio is ${info.durationSeconds.toFixed(1)} s long; the limit is ${limits.maxDurationSeconds} s`,
      {
        durationSeconds: info.durationSeconds,
      },
    );
  }
  if (info.durationSeconds < limits.minDurationSeconds) {
    throw new EngineError(
      'audio_too_short',
      `audio is ${info.durationSeconds.toFixed(2)} s long; at least ${limits.minDurationSeconds} s (with 3 s of speech) is required`,
      {
        durationSeconds: info.durationSeconds,
      },
    );
  }
  return info;
}

/** Format, sample rate, channels and duration from the headers; throws only when the bytes are not WAV/MP3 audio. */
export function readAudioHeader(bytes: Uint8Array): AudioInfo {
  const format = sniffFormat(bytes);
  if (format === 'wav') {
    const h = parseWavHeader(bytes);
    return {
      format,
      sampleRate: h.sampleRate,
      channels: h.channels,
      durationSeconds: h.durationSeconds,
      bytes: bytes.length,
    };
  }
  const s = scanMp3(bytes);
  if (!s || s.frames === 0) throw new EngineError('corrupt_audio', 'corrupt MP3: no audio frames');
  return {
    format,
    sampleRate: s.sampleRate,
    channels: s.channels,
    durationSeconds: s.durationSeconds,
    bytes: bytes.length,
  };
}

export interface DecodedRecording {
  info: AudioInfo;
  /** Mono, 16 kHz, in [-1, 1]. */
  samples: Float32Array;
  timings: { decodeMs: number; resampleMs: number };
}

/**
 * Decode and resample file bytes to 16 kHz mono. `checked` is what `inspectBytes` returned for
 * these bytes; without it the header is checked here. The decoders bound their work and fail with
 * `corrupt_audio` on bad data either way.
 */
export async function decodeAudio(
  bytes: Uint8Array,
  limits: IntakeLimits = DEFAULT_INTAKE_LIMITS,
  checked?: AudioInfo,
): Promise<DecodedRecording> {
  const info = checked ?? inspectBytes(bytes, limits);
  const t0 = performance.now();
  // A little slack over the limit: MP3 frame counts include encoder padding.
  const maxFrames = Math.ceil(info.sampleRate * (limits.maxDurationSeconds + 1));
  const decoded =
    info.format === 'wav' ? decodeWav(bytes, maxFrames) : await decodeMp3(bytes, maxFrames);
  const t1 = performance.now();
  if (decoded.sampleRate < LIMITS.minSampleRate) {
    throw new EngineError(
      'sample_rate_too_low',
      `sample rate ${decoded.sampleRate} Hz is below the required ${LIMITS.minSampleRate} Hz`,
    );
  }
  const samples = await resample(decoded.samples, decoded.sampleRate, TARGET_SAMPLE_RATE);
  const t2 = performance.now();
  const durationSeconds = samples.length / TARGET_SAMPLE_RATE;
  if (durationSeconds < limits.minDurationSeconds) {
    throw new EngineError(
      'audio_too_short',
      `audio decodes to ${durationSeconds.toFixed(2)} s; at least ${limits.minDurationSeconds} s is required`,
      {
        durationSeconds,
      },
    );
  }
  return {
    info: { ...info, sampleRate: decoded.sampleRate, durationSeconds },
    samples,
    timings: { decodeMs: t1 - t0, resampleMs: t2 - t1 },
  };
}

/**
 * Mono samples already decoded (a stream's audio): full-scale 16-bit, or float in [-1, 1], at
 * `sampleRate` (16 to 192 kHz). The engine skips decoding, and resampling at 16 kHz.
 */
export interface PcmAudio {
  pcm: Int16Array | Float32Array;
  sampleRate: number;
}

/** What the engine analyses: a recording file's bytes (WAV or MP3), or PCM. */
export type AudioInput = Uint8Array | PcmAudio;

export const isPcmAudio = (audio: AudioInput): audio is PcmAudio => !(audio instanceof Uint8Array);

/** The header check of PCM: its sample rate and duration against the limits; throws `EngineError`. */
export function inspectPcm(
  audio: PcmAudio,
  limits: IntakeLimits = DEFAULT_INTAKE_LIMITS,
): AudioInfo {
  if (!Number.isInteger(audio.sampleRate) || audio.sampleRate > LIMITS.maxSampleRate)
    throw new EngineError(
      'unsupported_format',
      `sample rate ${audio.sampleRate} Hz is not an integer up to ${LIMITS.maxSampleRate} Hz`,
      { sampleRate: audio.sampleRate },
    );
  return inspectInfo(pcmInfo(audio), limits);
}

/** Format, rate and duration of PCM (nothing to read: it is all in hand). */
export function pcmInfo(audio: PcmAudio): AudioInfo {
  return {
    format: 'pcm',
    sampleRate: audio.sampleRate,
    channels: 1,
    durationSeconds: audio.pcm.length / audio.sampleRate,
    bytes: audio.pcm.byteLength,
  };
}

/** `inspectBytes` or `inspectPcm`, by the input's form. */
export function inspectInput(
  audio: AudioInput,
  limits: IntakeLimits = DEFAULT_INTAKE_LIMITS,
): AudioInfo {
  return isPcmAudio(audio) ? inspectPcm(audio, limits) : inspectBytes(audio, limits);
}

/** `decodeAudio` for file bytes; PCM is only converted to float (and resampled when not at 16 kHz). */
export async function decodeInput(
  audio: AudioInput,
  limits: IntakeLimits = DEFAULT_INTAKE_LIMITS,
  checked?: AudioInfo,
): Promise<DecodedRecording> {
  if (!isPcmAudio(audio)) return decodeAudio(audio, limits, checked);
  const info = checked ?? inspectPcm(audio, limits);
  const t0 = performance.now();
  const float = audio.pcm instanceof Float32Array ? audio.pcm : int16ToFloat(audio.pcm);
  const t1 = performance.now();
  const samples = await resample(float, audio.sampleRate, TARGET_SAMPLE_RATE);
  const t2 = performance.now();
  return {
    info,
    samples,
    timings: { decodeMs: t1 - t0, resampleMs: t2 - t1 },
  };
}

/** The same scale as a 16-bit WAV's samples (wav.ts). */
function int16ToFloat(pcm: Int16Array): Float32Array {
  const out = new Float32Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = pcm[i]! / 32768;
  return out;
}
