import type * as ort from 'onnxruntime-node';
import { embedSpeech, type SpeakerModelIo } from '../models/embedding.js';
import { EngineError } from '../errors.js';
import {
  decodeInput,
  DEFAULT_INTAKE_LIMITS,
  type AudioInfo,
  type AudioInput,
  type IntakeLimits,
} from '../audio/intake.js';
import { LIMITS } from '../limits.js';
import { clippingMessage, estimateSnrDb, signalStats, silenceMessage } from '../scoring/quality.js';
import { cosineSimilarity, meanEmbedding } from '../scoring/scoring.js';
import type { RecordingQuality } from '../scoring/calibration.js';
import {
  scoreRecordingSpoof,
  type SpoofModelIo,
  type SpoofPartner,
  type SpoofScore,
} from '../models/spoof.js';
import { concatSegments, detectSpeech } from '../features/vad.js';
import { encodeSpeech } from '../models/speech-encoder.js';
import { checkPhrase, PHRASE_PAD_SAMPLES, type PhraseChecker } from './phrase-check.js';
import type { PhraseOutcome, PhraseRequest } from '../phrase/check.js';
import { measureChannelQuality, type ChannelQuality } from '../features/channel-quality.js';

export interface LoadedSpeakerModel {
  session: ort.InferenceSession;
  io: SpeakerModelIo;
}

export interface LoadedModels {
  vad: ort.InferenceSession;
  /** Every speaker model the engine serves, by name. */
  speakers: Map<string, LoadedSpeakerModel>;
  /** The default speaker model's name. */
  defaultSpeaker: string;
  spoof: ort.InferenceSession;
  spoofIo: SpoofModelIo;
  /** The second model of a fused spoof model, which reads the audio itself. */
  spoofPartner?: SpoofPartner;
  /** Whisper's encoder, run once per recording when a model reads its hidden states or a phrase is checked. */
  speechEncoder?: ort.InferenceSession;
  /** The encoder's graph up to the hidden states the spoof model reads: run instead when no phrase is checked. */
  speechEncoderPrefix?: ort.InferenceSession;
  /** Whisper's decoder and vocabulary, when phrase checks are served. */
  phraseChecker?: PhraseChecker;
}

export interface AnalyseOptions {
  /** Reject silent, clipped or short-speech audio (production). Off for evaluation. */
  gating: boolean;
  /** Also embed the two halves of the speech to measure consistency (enrolment). */
  consistency: boolean;
  limits?: IntakeLimits;
  /** The header check's result for these bytes, when the caller already made it. */
  checked?: AudioInfo;
  /** Speaker models to embed the speech with (default: the default model); the first gives `embedding`. */
  speakerModels?: string[];
  /** Check that the recording says this text (the decoder runs only then). */
  phrase?: PhraseRequest;
  /** false: no deepfake check (neither the speech encoder, unless a phrase needs it, nor the spoof model). Default true. */
  spoofCheck?: boolean;
}

/** Throws when the caller gave up (abort or timeout); called between stages. */
export type Checkpoint = () => void;
const noCheckpoint: Checkpoint = () => {};

export interface AnalysisTimings {
  decodeMs: number;
  resampleMs: number;
  vadMs: number;
  embedMs: number;
  /** the speech encoder (0 when no model reads it) */
  encoderMs: number;
  spoofMs: number;
  /** the phrase check's decoding (0 when no phrase is asked) */
  phraseMs: number;
  workerMs: number;
}

export interface Analysis {
  info: AudioInfo;
  /** The first requested speaker model's embedding. */
  embedding: Float32Array;
  /** Every requested speaker model's embedding, by model name. */
  embeddings: Record<string, Float32Array>;
  segmentEmbeddings: number;
  consistency: number | null;
  netSpeechSeconds: number;
  speechSegments: number;
  snrDb: number;
  /** Bandwidth, codec holes and reverberation of the recording (features/channel-quality.ts). */
  channelQuality: ChannelQuality;
  clippingRatio: number;
  peak: number;
  spoof: SpoofScore;
  /** The phrase check's outcome, or null when no phrase was asked. */
  phrase: PhraseOutcome | null;
  timings: AnalysisTimings;
}

function requirePhraseChecker(models: LoadedModels): PhraseChecker {
  if (!models.phraseChecker || !models.speechEncoder)
    throw new EngineError(
      'model_missing',
      'phrase checks need the speech decoder, which is not loaded (see models/manifest.json)',
    );
  return models.phraseChecker;
}

/** What the calibration's channel terms read of an analysed recording. */
export function recordingQualityOf(
  a: Pick<Analysis, 'netSpeechSeconds' | 'snrDb' | 'channelQuality'>,
): RecordingQuality {
  return { netSpeechSeconds: a.netSpeechSeconds, snrDb: a.snrDb, ...a.channelQuality };
}

/** The spoof score of an analysis made without the deepfake check: no evidence either way. */
const SPOOF_NOT_CHECKED: SpoofScore = {
  bonafideProbability: Number.NaN,
  meanLogit: Number.NaN,
  windows: 0,
};

const SEGMENT_SECONDS = 20;
const MIN_HALF_SECONDS = 2;

/** Everything from file bytes (or PCM) to embedding and spoof score; runs inside a pool worker. */
export async function analyse(
  audio: AudioInput,
  models: LoadedModels,
  opts: AnalyseOptions,
  checkpoint: Checkpoint = noCheckpoint,
): Promise<Analysis> {
  const t0 = performance.now();
  const limits = opts.limits ?? DEFAULT_INTAKE_LIMITS;
  const decoded = await decodeInput(audio, limits, opts.checked);
  checkpoint();
  const samples = decoded.samples;
  const stats = signalStats(samples);
  if (opts.gating) {
    if (stats.peak < LIMITS.silencePeak) {
      throw new EngineError('silent_audio', silenceMessage(stats.peak), { peak: stats.peak });
    }
    if (stats.clippingRatio > LIMITS.maxClippingRatio) {
      throw new EngineError('clipped_audio', clippingMessage(stats.clippingRatio), {
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
  const speakerModels = (
    opts.speakerModels?.length ? opts.speakerModels : [models.defaultSpeaker]
  ).map((name) => {
    const model = models.speakers.get(name);
    if (!model)
      throw new EngineError('model_not_found', `speaker model ${name} is not loaded`, { name });
    return { name, ...model };
  });
  const primary = speakerModels[0]!;
  const parts = Math.max(1, Math.round(speech.length / 16000 / SEGMENT_SECONDS));
  const partEmbeddings = new Map<string, Float32Array[]>(speakerModels.map((m) => [m.name, []]));
  for (let i = 0; i < parts; i++) {
    const a = Math.floor((i * speech.length) / parts);
    const b = Math.floor(((i + 1) * speech.length) / parts);
    for (const model of speakerModels) {
      checkpoint();
      partEmbeddings
        .get(model.name)!
        .push(await embedSpeech(model.session, model.io, speech.subarray(a, b)));
    }
  }
  const primaryParts = partEmbeddings.get(primary.name)!;
  let consistency: number | null = null;
  if (opts.consistency) {
    if (parts >= 2) {
      let sum = 0;
      let n = 0;
      for (let i = 0; i < parts; i++)
        for (let j = i + 1; j < parts; j++, n++)
          sum += cosineSimilarity(primaryParts[i]!, primaryParts[j]!);
      consistency = sum / n;
    } else if (speech.length >= 2 * MIN_HALF_SECONDS * 16000) {
      const half = Math.floor(speech.length / 2);
      const first = await embedSpeech(primary.session, primary.io, speech.subarray(0, half));
      const second = await embedSpeech(primary.session, primary.io, speech.subarray(half));
      consistency = cosineSimilarity(first, second);
    }
  }
  const embedMs = performance.now() - tEmbed;
  // onnxruntime-node runs sessions synchronously on this thread, so running the spoof model
  // "concurrently" with VAD would only interleave them; sequential keeps the stage timings honest.
  const tEncoder = performance.now();
  const phraseChecker = opts.phrase ? requirePhraseChecker(models) : undefined;
  // One encoder run serves both readers: with a phrase asked, the whole encoder runs on the recording with
  // trailing silence (the decoder needs it) and the spoof model reads the recording's own frames of that run;
  // without one, only the layers the spoof model reads run.
  const spoofCheck = opts.spoofCheck !== false;
  const encoder = phraseChecker
    ? models.speechEncoder
    : (models.speechEncoderPrefix ?? models.speechEncoder);
  const encoded =
    ((spoofCheck && models.spoofIo.input === 'whisper-hidden-states') || phraseChecker) && encoder
      ? await encodeSpeech(
          encoder,
          samples,
          checkpoint,
          phraseChecker ? { padToSamples: PHRASE_PAD_SAMPLES, final: true } : {},
        )
      : undefined;
  const encoderMs = performance.now() - tEncoder;
  const tSpoof = performance.now();
  const spoof = spoofCheck
    ? await scoreRecordingSpoof(
        models.spoof,
        models.spoofIo,
        samples,
        checkpoint,
        encoded,
        models.spoofPartner,
      )
    : SPOOF_NOT_CHECKED;
  const spoofMs = performance.now() - tSpoof;
  const tPhrase = performance.now();
  const phrase =
    opts.phrase && phraseChecker && encoded?.final
      ? await checkPhrase(phraseChecker, encoded.final, opts.phrase, checkpoint)
      : null;
  const phraseMs = phrase ? performance.now() - tPhrase : 0;
  const channelQuality = await measureChannelQuality(samples, vad.segments);
  const embeddings: Record<string, Float32Array> = {};
  for (const [name, list] of partEmbeddings) {
    for (const e of list) {
      if (!e.every(Number.isFinite))
        throw new EngineError(
          'model_invalid',
          `the speaker model ${name} produced a non-finite embedding`,
        );
    }
    embeddings[name] = meanEmbedding(list);
  }
  return {
    info: decoded.info,
    embedding: embeddings[primary.name]!,
    embeddings,
    segmentEmbeddings: parts,
    consistency,
    netSpeechSeconds: vad.netSpeechSeconds,
    speechSegments: vad.segments.length,
    snrDb: estimateSnrDb(samples, vad.segments),
    channelQuality,
    clippingRatio: stats.clippingRatio,
    peak: stats.peak,
    spoof,
    phrase,
    timings: {
      decodeMs: decoded.timings.decodeMs,
      resampleMs: decoded.timings.resampleMs,
      vadMs,
      embedMs,
      encoderMs,
      spoofMs,
      phraseMs,
      workerMs: performance.now() - t0,
    },
  };
}
