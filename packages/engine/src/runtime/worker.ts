import { workerData } from 'node:worker_threads';
import { analyse, type AnalyseOptions, type LoadedModels } from './analysis.js';
import { checkSignal } from './audio-check.js';
import type { AudioInput, IntakeLimits } from '../audio/intake.js';
import { EngineError, type SerializedEngineError } from '../errors.js';
import { openSession, resolveIo, type ModelRef } from '../models/sessions.js';
import type { SpoofFusion } from '../models/manifest.js';
import type { SpoofInput } from '../models/spoof.js';
import type { DecodingConfig } from '../models/manifest.js';
import { loadVocabulary } from '../phrase/vocabulary.js';
import type { PhraseChecker } from './phrase-check.js';

export interface SpeakerModelRef extends ModelRef {
  name: string;
  /** fbank input scale (manifest.ts speakerInputScale). */
  inputScale: number;
}

export interface WorkerConfig {
  vadPath: string;
  /** Every speaker model to serve; the first is the default. */
  speakers: SpeakerModelRef[];
  spoof: ModelRef & { input: SpoofInput; encoderStates?: number };
  /** A fused spoof model's second model (it reads the audio itself) and how the two scores combine. */
  spoofPartner?: ModelRef & { input: SpoofInput; fusion: SpoofFusion };
  /** The speech encoder (Whisper's), when the spoof model reads its hidden states or phrases are checked. */
  speechEncoder?: ModelRef;
  /** Its graph up to the hidden states the spoof model reads, run when no phrase is checked (manifest `prefixes`). */
  speechEncoderPrefix?: ModelRef & { states: number };
  /** The speech decoder, when phrases are checked. */
  phraseDecoder?: {
    stepPath: string;
    crossKvPath: string;
    vocabularyPath: string;
    decoding: DecodingConfig;
  };
  intraOpThreads: number;
  testHooks?: boolean;
}

export type WorkerTask = (
  | { kind: 'analyse'; audio: AudioInput; options: AnalyseOptions }
  | { kind: 'check'; audio: AudioInput; limits: IntakeLimits }
  | { kind: 'warmup' }
  | { kind: 'crash' }
  | { kind: 'sleep'; ms: number }
) & {
  /**
   * Int32 flag set by the main thread when the caller aborts or times out: 1 = aborted, 2 = timed out.
   * Cancellation is cooperative: terminating a worker thread while onnxruntime-node is running a
   * session aborts the whole process, so workers are never killed mid-task.
   */
  cancel?: SharedArrayBuffer;
};

export type WorkerReply<T> = { ok: true; value: T } | { ok: false; error: SerializedEngineError };

const config = workerData as WorkerConfig;

async function loadModels(): Promise<LoadedModels> {
  const [
    vad,
    spoof,
    spoofPartner,
    speechEncoder,
    speechEncoderPrefix,
    phraseChecker,
    ...speakerSessions
  ] = await Promise.all([
    openSession(config.vadPath, 1, 'silero-vad'),
    openSession(config.spoof.path, config.intraOpThreads),
    config.spoofPartner
      ? openSession(config.spoofPartner.path, config.intraOpThreads, 'spoof fusion partner')
      : undefined,
    config.speechEncoder
      ? openSession(config.speechEncoder.path, config.intraOpThreads, 'speech-encoder')
      : undefined,
    config.speechEncoderPrefix
      ? openSession(config.speechEncoderPrefix.path, config.intraOpThreads, 'speech-encoder prefix')
      : undefined,
    loadPhraseChecker(),
    ...config.speakers.map((ref) => openSession(ref.path, config.intraOpThreads, ref.name)),
  ]);
  const speakers = new Map(
    config.speakers.map((ref, i) => {
      const session = speakerSessions[i]!;
      return [
        ref.name,
        { session, io: { ...resolveIo(session, ref), inputScale: ref.inputScale } },
      ] as const;
    }),
  );
  return {
    vad,
    speakers,
    defaultSpeaker: config.speakers[0]!.name,
    spoof,
    spoofIo: {
      ...resolveIo(spoof, config.spoof),
      input: config.spoof.input,
      ...(config.spoof.encoderStates ? { encoderStates: config.spoof.encoderStates } : {}),
    },
    ...(spoofPartner && config.spoofPartner
      ? {
          spoofPartner: {
            session: spoofPartner,
            io: {
              ...resolveIo(spoofPartner, config.spoofPartner),
              input: config.spoofPartner.input,
            },
            fusion: config.spoofPartner.fusion,
          },
        }
      : {}),
    speechEncoder,
    ...(speechEncoderPrefix ? { speechEncoderPrefix } : {}),
    phraseChecker,
  };
}

async function loadPhraseChecker(): Promise<PhraseChecker | undefined> {
  const ref = config.phraseDecoder;
  if (!ref) return undefined;
  const [step, crossKv] = await Promise.all([
    openSession(ref.stepPath, config.intraOpThreads, 'speech-decoder'),
    openSession(ref.crossKvPath, config.intraOpThreads, 'speech-decoder cross-kv'),
  ]);
  const vocabulary = loadVocabulary(ref.vocabularyPath);
  return {
    decoder: { step, crossKv, decoding: ref.decoding },
    vocabulary,
    digitTokens: vocabulary.digitTokens(),
  };
}

// Each worker loads every model once, when it starts.
const models = await loadModels();

function warmupAudio(): Uint8Array {
  // 1 s of quiet noise as a 16 kHz 16-bit WAV header + data (exercises decode, VAD, fbank, both models)
  const n = 16000;
  const buf = new Uint8Array(44 + n * 2);
  const v = new DataView(buf.buffer);
  const w = (o: number, s: string) => [...s].forEach((c, i) => v.setUint8(o + i, c.charCodeAt(0)));
  (w(0, 'RIFF'),
    v.setUint32(4, 36 + n * 2, true),
    w(8, 'WAVE'),
    w(12, 'fmt '),
    v.setUint32(16, 16, true));
  (v.setUint16(20, 1, true),
    v.setUint16(22, 1, true),
    v.setUint32(24, 16000, true),
    v.setUint32(28, 32000, true));
  (v.setUint16(32, 2, true),
    v.setUint16(34, 16, true),
    w(36, 'data'),
    v.setUint32(40, n * 2, true));
  let seed = 1;
  for (let i = 0; i < n; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    v.setInt16(44 + 2 * i, (seed % 2000) - 1000, true);
  }
  return buf;
}

export default async function run(task: WorkerTask): Promise<WorkerReply<unknown>> {
  const flag = task.cancel ? new Int32Array(task.cancel) : null;
  const checkpoint = () => {
    const state = flag ? Atomics.load(flag, 0) : 0;
    if (state === 1) throw new EngineError('aborted', 'the task was aborted');
    if (state === 2) throw new EngineError('timeout', 'the task timed out');
  };
  try {
    checkpoint();
    switch (task.kind) {
      case 'analyse':
        return {
          ok: true,
          value: await analyse(task.audio, models, task.options, checkpoint),
        };
      case 'check':
        return {
          ok: true,
          value: await checkSignal(task.audio, models.vad, task.limits, checkpoint),
        };
      case 'warmup': {
        const warmup: AnalyseOptions = {
          gating: false,
          consistency: false,
          limits: { maxFileBytes: 1e6, maxDurationSeconds: 2, minDurationSeconds: 0 },
          speakerModels: [...models.speakers.keys()],
        };
        // both encoder graphs: the prefix serves recordings without a phrase, the whole encoder the rest
        if (models.speechEncoderPrefix || !models.phraseChecker)
          await analyse(warmupAudio(), models, warmup);
        if (models.phraseChecker)
          await analyse(warmupAudio(), models, {
            ...warmup,
            phrase: { expected: 'one two three', vocabulary: 'digits' },
          });
        return { ok: true, value: null };
      }
      case 'crash':
        if (config.testHooks) process.exit(3);
        break;
      case 'sleep':
        if (config.testHooks) {
          for (let waited = 0; waited < task.ms; waited += 10) {
            await new Promise((r) => setTimeout(r, 10));
            checkpoint();
          }
          return { ok: true, value: null };
        }
        break;
    }
    throw new EngineError('internal', `unknown worker task ${(task as { kind: string }).kind}`);
  } catch (e) {
    if (e instanceof EngineError) return { ok: false, error: e.toJSON() };
    return {
      ok: false,
      error: {
        code: 'internal',
        message: `engine worker failed: ${(e as Error)?.message ?? String(e)}`,
      },
    };
  }
}
