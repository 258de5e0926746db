import type * as ort from 'onnxruntime-node';
import { embedSpeech, type SpeakerModelIo } from './embedding.js';
import { EngineError } from './errors.js';
import { decodeAudio, DEFAULT_INTAKE_LIMITS, type AudioInfo, type IntakeLimits } from './intake.js';
import { LIMITS } from './limits.js';
import { estimateSnrDb, signalStats } from './quality.js';
import { cosineSimilarity, meanEmbedding } from './scoring.js';
import { scoreSpoof, type SpoofModelIo, type SpoofScore } from './spoof.js';
import { concatSegments, detectSpeech } from './vad.js';

export interface LoadedModels {
  vad: ort.InferenceSession;
  speaker: ort.InferenceSession;
  speakerIo: SpeakerModelIo;
  spoof: ort.InferenceSession;
  spoofIo: SpoofModelIo;
}

export interface AnalyseOptions {
  /** Reject silent, clipped or short-speech audio (production). Off for evaluation. */
  gating: boolean;
  /** Also embed the two halves of the speech to measure consistency (enrolment). */
  consistency: boolean;
  limits?: IntakeLimits;
  /** The header check's result for these bytes, when the caller already made it. */
  checked?: AudioInfo;
}

/** Throws when the caller gave up (abort or timeout); called between stages. */
export type Checkpoint = () => void;
const noCheckpoint: Checkpoint = () => {};

export interface AnalysisTimings {
  decodeMs: number;
  resampleMs: number;
  vadMs: number;
  embedMs: number;
  spoofMs: number;
  workerMs: number;
}

export interface Analysis {
  info: AudioInfo;
  embedding: Float32Array;
  segmentEmbeddings: number;
  consistency: number | null;
  netSpeechSeconds: number;
  speechSegments: number;
  snrDb: number;
  clippingRatio: number;
  peak: number;
  spoof: SpoofScore;
  timings: AnalysisTimings;
}

const SEGMENT_SECONDS = 20;
const MIN_HALF_SECONDS = 2;

/** Everything from file bytes to embedding and spoof score; runs inside a pool worker. */
export async function analyse(bytes: Uint8Array, models: LoadedModels, opts: AnalyseOptions, checkpoint: Checkpoint = noCheckpoint): Promise<Analysis> {
  const t0 = performance.now();
  const limits = opts.limits ?? DEFAULT_INTAKE_LIMITS;
  const decoded = await decodeAudio(bytes, limits, opts.checked);
  checkpoint();
  const samples = decoded.samples;
  const stats = signalStats(samples);
  if (opts.gating) {
    if (stats.peak < LIMITS.silencePeak) {
      throw new EngineError('silent_audio', `the recording is silent (peak ${(20 * Math.log10(stats.peak + 1e-12)).toFixed(1)} dBFS)`, { peak: stats.peak });
    }
    if (stats.clippingRatio > LIMITS.maxClippingRatio) {
      throw new EngineError('clipped_audio', `${(stats.clippingRatio * 100).toFixed(1)}% of the samples are clipped; record at a lower input level`, {
        clippingRatio: stats.clippingRatio,
      });
    }
  }

  const tVad = performance.now();
  const vad = await detectSpeech(models.vad, samples, undefined, checkpoint);
  const vadMs = performance.now() - tVad;
  if (opts.gating && vad.netSpeechSeconds < LIMITS.minNetSpeechSeconds) {
    throw new EngineError(
      'insufficient_speech',
      `only ${vad.netSpeechSeconds.toFixed(2)} s of speech detected; at least ${LIMITS.minNetSpeechSeconds} s is required (5 s recommended)`,
      { netSpeechSeconds: vad.netSpeechSeconds },
    );
  }
  // Without gating (evaluation), a clip where VAD finds almost nothing is embedded whole.
  const speech = vad.netSpeechSeconds >= 0.5 ? concatSegments(samples, vad.segments) : samples;

  const tEmbed = performance.now();
  const parts = Math.max(1, Math.round(speech.length / 16000 / SEGMENT_SECONDS));
  const partEmbeddings: Float32Array[] = [];
  for (let i = 0; i < parts; i++) {
    checkpoint();
    const a = Math.floor((i * speech.length) / parts);
    const b = Math.floor(((i + 1) * speech.length) / parts);
    partEmbeddings.push(await embedSpeech(models.speaker, models.speakerIo, speech.subarray(a, b)));
  }
  let consistency: number | null = null;
  if (opts.consistency) {
    if (parts >= 2) {
      let sum = 0;
      let n = 0;
      for (let i = 0; i < parts; i++) for (let j = i + 1; j < parts; j++, n++) sum += cosineSimilarity(partEmbeddings[i]!, partEmbeddings[j]!);
      consistency = sum / n;
    } else if (speech.length >= 2 * MIN_HALF_SECONDS * 16000) {
      const half = Math.floor(speech.length / 2);
      const first = await embedSpeech(models.speaker, models.speakerIo, speech.subarray(0, half));
      const second = await embedSpeech(models.speaker, models.speakerIo, speech.subarray(half));
      consistency = cosineSimilarity(first, second);
    }
  }
  const embedMs = performance.now() - tEmbed;
  // onnxruntime-node runs sessions synchronously on this thread, so running the spoof model
  // "concurrently" with VAD would only interleave them; sequential keeps the stage timings honest.
  const tSpoof = performance.now();
  const spoof = await scoreSpoof(models.spoof, models.spoofIo, samples, checkpoint);
  const spoofMs = performance.now() - tSpoof;
  for (const e of partEmbeddings) {
    if (!e.every(Number.isFinite)) throw new EngineError('model_invalid', 'the speaker model produced a non-finite embedding');
  }
  return {
    info: decoded.info,
    embedding: meanEmbedding(partEmbeddings),
    segmentEmbeddings: parts,
    consistency,
    netSpeechSeconds: vad.netSpeechSeconds,
    speechSegments: vad.segments.length,
    snrDb: estimateSnrDb(samples, vad.segments),
    clippingRatio: stats.clippingRatio,
    peak: stats.peak,
    spoof,
    timings: {
      decodeMs: decoded.timings.decodeMs,
      resampleMs: decoded.timings.resampleMs,
      vadMs,
      embedMs,
      spoofMs,
      workerMs: performance.now() - t0,
    },
  };
}
