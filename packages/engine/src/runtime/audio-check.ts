import type * as ort from 'onnxruntime-node';
import type { Checkpoint } from './analysis.js';
import {
  decodeInput,
  type AudioInfo,
  type AudioInput,
  type IntakeLimits,
} from '../audio/intake.js';
import { LIMITS } from '../limits.js';
import { clippingMessage, estimateSnrDb, signalStats, silenceMessage } from '../scoring/quality.js';
import { detectSpeech } from '../features/vad.js';

/** A reason a recording would fail enrolment or verification; `code` is the engine's error code (or `low_snr`). */
export interface AudioProblem {
  code: string;
  message: string;
}

export interface AudioCheck {
  audio: AudioInfo;
  /** Empty when the file headers already rule it out (sample rate, duration). */
  netSpeechSeconds: number;
  /** null when no speech was found to estimate it against. */
  snrDb: number | null;
  clippingRatio: number;
  problems: AudioProblem[];
  timings: { decodeMs: number; vadMs: number; workerMs: number };
}

/** Header-level problems: reported, not thrown, so the caller can show them. */
export function headerProblems(info: AudioInfo, limits: IntakeLimits): AudioProblem[] {
  const problems: AudioProblem[] = [];
  if (info.sampleRate < LIMITS.minSampleRate) {
    problems.push({
      code: 'sample_rate_too_low',
      message: `sample rate ${info.sampleRate} Hz is below the required ${LIMITS.minSampleRate} Hz`,
    });
  }
  if (info.durationSeconds > limits.maxDurationSeconds) {
    problems.push({
      code: 'audio_too_long',
      message: `audio is ${info.durationSeconds.toFixed(1)} s long; the limit is ${limits.maxDurationSeconds} s`,
    });
  }
  if (info.durationSeconds < limits.minDurationSeconds) {
    problems.push({
      code: 'audio_too_short',
      message: `audio is ${info.durationSeconds.toFixed(2)} s long; at least ${limits.minDurationSeconds} s (with ${LIMITS.minNetSpeechSeconds} s of speech) is required`,
    });
  }
  return problems;
}

/**
 * What enrolment and verification would see in a recording, without the speaker and spoof models:
 * decode, level and clipping, voice activity, SNR. Runs inside a pool worker. The checks and their
 * thresholds are the ones `analyse` gates on (and `decideVerification` for SNR).
 */
export async function checkSignal(
  audio: AudioInput,
  vad: ort.InferenceSession,
  limits: IntakeLimits,
  checkpoint: Checkpoint,
): Promise<AudioCheck> {
  const t0 = performance.now();
  const decoded = await decodeInput(audio, limits);
  checkpoint();
  const stats = signalStats(decoded.samples);
  const tVad = performance.now();
  const speech = await detectSpeech(vad, decoded.samples, undefined, checkpoint);
  const vadMs = performance.now() - tVad;
  const problems: AudioProblem[] = [];
  const silent = stats.peak < LIMITS.silencePeak;
  if (silent)
    problems.push({
      code: 'silent_audio',
      message: silenceMessage(stats.peak),
    });
  if (stats.clippingRatio > LIMITS.maxClippingRatio) {
    problems.push({
      code: 'clipped_audio',
      message: clippingMessage(stats.clippingRatio),
    });
  }
  if (speech.netSpeechSeconds < LIMITS.minNetSpeechSeconds) {
    problems.push({
      code: 'insufficient_speech',
      message: `only ${speech.netSpeechSeconds.toFixed(2)} s of speech detected; at least ${LIMITS.minNetSpeechSeconds} s is required (5 s recommended)`,
    });
  }
  const snrDb = speech.segments.length > 0 ? estimateSnrDb(decoded.samples, speech.segments) : null;
  if (snrDb !== null && !silent && snrDb < LIMITS.minVerifySnrDb) {
    problems.push({
      code: 'low_snr',
      message: `the background noise is too loud (SNR ${snrDb.toFixed(1)} dB, at least ${LIMITS.minVerifySnrDb} dB is needed); record somewhere quieter`,
    });
  }
  return {
    audio: decoded.info,
    netSpeechSeconds: speech.netSpeechSeconds,
    snrDb,
    clippingRatio: stats.clippingRatio,
    problems,
    timings: { decodeMs: decoded.timings.decodeMs, vadMs, workerMs: performance.now() - t0 },
  };
}
