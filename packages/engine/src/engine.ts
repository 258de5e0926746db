import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { Analysis, AnalysisTimings, AnalyseOptions } from './analysis.js';
import { decodeBase64Audio } from './base64.js';
import { deserializeEngineError, EngineError } from './errors.js';
import { DEFAULT_INTAKE_LIMITS, inspectBytes, type AudioInfo, type IntakeLimits } from './intake.js';
import { LIMITS } from './limits.js';
import { defaultManifestPath, defaultModelsDir, loadManifest, selectModel, verifyModelFile, type LogisticCalibration, type ModelEntry } from './manifest.js';
import { openSession, resolveIo } from './models.js';
import { qualityScore } from './quality.js';
import { cosineSimilarity, decide, DEFAULT_CALIBRATION, DEFAULT_MATCH_THRESHOLD, matchScore, type VerificationResult } from './scoring.js';
import { sileroModelPath } from './vad.js';
import { loadCohort, normalisedScore } from './score-norm.js';
import { qualityAdjustedScore } from './calibration.js';
import type { WorkerConfig, WorkerReply, WorkerTask } from './worker.js';

export interface EngineOptions {
  /** Folder holding the model files (default: the repository's `models/`, or $VOXKEY_MODELS_DIR). */
  modelsDir?: string;
  /** Manifest path (default: `<modelsDir>/manifest.json`, or $VOXKEY_MODELS_MANIFEST). */
  manifestPath?: string;
  /** Speaker model name from the manifest (default: its `default: true` speaker model). */
  speakerModel?: string;
  /** Spoof model name from the manifest (default: its `default: true` spoof model). */
  spoofModel?: string;
  /** Pool threads (default: max(1, floor(cores / intraOpThreads))). */
  threads?: number;
  /** onnxruntime intra-op threads per worker (default 1). threads x intraOpThreads should not exceed the cores. */
  intraOpThreads?: number;
  /** Tasks allowed to wait for a worker before `queue_full` (default 64). */
  maxQueue?: number;
  /** Per-task limit including queueing (default 30 000 ms); a running task past it is killed with its worker. */
  taskTimeoutMs?: number;
  /** Run one warm-up task per thread before resolving (default true). */
  warmup?: boolean;
  /** Override intake limits (size, duration). */
  limits?: Partial<IntakeLimits>;
  /** Enables the `crash`/`sleep` worker tasks used by the engine's own tests. */
  testHooks?: boolean;
}

export interface Voiceprint {
  modelId: string;
  embedding: Float32Array;
}

export interface EngineTimings extends AnalysisTimings {
  /** Time waiting for a worker. */
  queueMs: number;
  /** From the call to the result, including base64 decoding, validation and queueing. */
  totalMs: number;
}

export interface SpoofResult {
  bonafideProbability: number;
  deepfakeDetected: boolean;
}

export interface EnrolmentAnalysis {
  voiceprint: Voiceprint;
  qualityScore: number;
  netSpeechSeconds: number;
  snrDb: number;
  clippingRatio: number;
  /** Cosine between the embeddings of the two halves of the speech (null under 4 s of speech). */
  consistency: number | null;
  spoof: SpoofResult;
  audio: AudioInfo;
  timings: EngineTimings;
}

export interface VerificationAnalysis {
  result: VerificationResult;
  matchScore: number;
  cosine: number;
  threshold: number;
  deepfakeDetected: boolean;
  bonafideProbability: number;
  netSpeechSeconds: number;
  snrDb: number;
  /** Why the result is inconclusive, when it is. */
  inconclusiveReason?: string;
  audio: AudioInfo;
  timings: EngineTimings;
}

/** Raw analysis for evaluation tools: embedding and spoof score without production gating. */
export interface ClipEmbedding {
  embedding: Float32Array;
  bonafideProbability: number;
  spoofLogit: number;
  netSpeechSeconds: number;
  snrDb: number;
  timings: EngineTimings;
}

export interface EngineStats {
  queueSize: number;
  utilization: number;
  completed: number;
  threads: number;
}

export interface VoiceEngine {
  inspectAudio(voiceDataBase64: string): AudioInfo;
  enrol(voiceDataBase64: string, opts?: { signal?: AbortSignal }): Promise<EnrolmentAnalysis>;
  verify(voiceDataBase64: string, voiceprint: Voiceprint, opts?: { signal?: AbortSignal; threshold?: number }): Promise<VerificationAnalysis>;
  /** Evaluation/bench helper: file bytes (WAV/MP3) -> embedding + spoof score, gating off. */
  embedBytes(bytes: Uint8Array, opts?: { signal?: AbortSignal }): Promise<ClipEmbedding>;
  readonly speakerModelId: string;
  readonly spoofModelId: string;
  readonly speakerModel: ModelEntry;
  readonly spoofModel: ModelEntry;
  readonly defaultThreshold: number;
  readonly limits: IntakeLimits;
  stats(): EngineStats;
  close(): Promise<void>;
  /** @internal test hook */
  runRaw(task: WorkerTask, opts?: { signal?: AbortSignal }): Promise<unknown>;
}

function workerFile(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const candidate of [join(here, 'worker.js'), join(here, '..', 'dist', 'worker.js')]) {
    if (existsSync(candidate)) return candidate;
  }
  throw new EngineError('internal', `engine worker bundle not found next to ${here}; run \`npm -w @voxkey/engine run build\``);
}

/** Copy into an ArrayBuffer of its own so it can be transferred (Buffer views may share a pool). */
function ownBuffer(bytes: Uint8Array): ArrayBuffer {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer) return bytes.buffer;
  return bytes.slice().buffer as ArrayBuffer;
}

export async function createEngine(opts: EngineOptions = {}): Promise<VoiceEngine> {
  const modelsDir = opts.modelsDir ?? defaultModelsDir();
  const manifestPath = opts.manifestPath ?? (opts.modelsDir ? join(opts.modelsDir, 'manifest.json') : defaultManifestPath(modelsDir));
  const manifest = await loadManifest(manifestPath);
  const speakerEntry = selectModel(manifest, 'speaker', modelsDir, opts.speakerModel);
  const spoofEntry = selectModel(manifest, 'spoof', modelsDir, opts.spoofModel);
  const [speakerPath, spoofPath] = await Promise.all([verifyModelFile(speakerEntry, modelsDir), verifyModelFile(spoofEntry, modelsDir)]);
  // Score normalisation cohort named by the speaker model's manifest entry (null when none).
  const cohort = await loadCohort(speakerEntry, modelsDir);

  // Load once here to fail early with a clear error and to resolve the I/O names.
  const io = await Promise.all(
    [
      [speakerPath, speakerEntry],
      [spoofPath, spoofEntry],
    ].map(async ([path, entry]) => {
      const e = entry as ModelEntry;
      const session = await openSession(path as string, 1, e.name);
      try {
        return resolveIo(session, { inputName: e.input.name, outputName: e.output.name });
      } finally {
        await session.release();
      }
    }),
  );

  const intraOpThreads = Math.max(1, Math.floor(opts.intraOpThreads ?? 1));
  const threads = Math.max(1, Math.floor(opts.threads ?? Math.max(1, Math.floor(availableParallelism() / intraOpThreads))));
  if (threads * intraOpThreads > availableParallelism()) {
    process.emitWarning(`engine threads (${threads}) x intra-op threads (${intraOpThreads}) exceed the ${availableParallelism()} available cores; inference will contend`, { code: 'VOXKEY_ENGINE_OVERSUBSCRIBED' });
  }
  const taskTimeoutMs = opts.taskTimeoutMs ?? 30_000;
  const limits: IntakeLimits = { ...DEFAULT_INTAKE_LIMITS, ...opts.limits };
  const workerConfig: WorkerConfig = {
    vadPath: sileroModelPath(),
    speaker: { path: speakerPath, ...io[0]! },
    spoof: { path: spoofPath, ...io[1]! },
    intraOpThreads,
    testHooks: opts.testHooks ?? false,
  };
  const pool = new Piscina({
    filename: workerFile(),
    minThreads: threads,
    maxThreads: threads,
    maxQueue: opts.maxQueue ?? 64,
    concurrentTasksPerWorker: 1,
    idleTimeout: Number.MAX_SAFE_INTEGER >>> 0,
    workerData: workerConfig,
    resourceLimits: { maxOldGenerationSizeMb: 512 },
  });
  let closed = false;
  const calibration: LogisticCalibration = speakerEntry.calibration ?? DEFAULT_CALIBRATION;
  const defaultThreshold = speakerEntry.defaultThreshold ?? DEFAULT_MATCH_THRESHOLD;
  const spoofThreshold = spoofEntry.defaultThreshold ?? 0.5;

  async function runTask<T>(task: WorkerTask, signal?: AbortSignal, transfer?: ArrayBuffer): Promise<{ value: T; queueMs: number }> {
    if (closed) throw new EngineError('engine_closed', 'the engine has been closed');
    if (signal?.aborted) throw new EngineError('aborted', 'the task was aborted before it started');
    const cancel = new SharedArrayBuffer(4);
    const flag = new Int32Array(cancel);
    const queuedAt = performance.now();
    const work = pool.run({ ...task, cancel }, { transferList: transfer ? [transfer] : undefined });
    const reply = await new Promise<WorkerReply<T>>((resolve, reject) => {
      const finish = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      // The caller is answered at once; the worker notices the flag at its next checkpoint and stops.
      const onAbort = () => {
        finish();
        Atomics.store(flag, 0, 1);
        reject(new EngineError('aborted', 'the task was aborted'));
      };
      const timer = setTimeout(() => {
        finish();
        Atomics.store(flag, 0, 2);
        reject(new EngineError('timeout', `the task exceeded the ${taskTimeoutMs} ms limit`, { taskTimeoutMs }));
      }, taskTimeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      work.then(
        (r: WorkerReply<T>) => {
          finish();
          resolve(r);
        },
        (e: unknown) => {
          finish();
          const message = (e as Error)?.message ?? String(e);
          if (/queue is at limit/i.test(message)) {
            reject(new EngineError('queue_full', 'the engine queue is full; retry later', { maxQueue: pool.options.maxQueue }, { cause: e }));
          } else if (closed) {
            reject(new EngineError('engine_closed', 'the engine has been closed', undefined, { cause: e }));
          } else {
            reject(new EngineError('worker_crashed', `an engine worker failed while running the task: ${message}`, undefined, { cause: e }));
          }
        },
      );
    });
    if (!reply.ok) throw deserializeEngineError(reply.error);
    const workerMs = (reply.value as { timings?: { workerMs?: number } } | null)?.timings?.workerMs ?? 0;
    return { value: reply.value, queueMs: Math.max(0, performance.now() - queuedAt - workerMs) };
  }

  async function analyseBase64(voiceDataBase64: string, options: AnalyseOptions, signal?: AbortSignal) {
    const t0 = performance.now();
    const bytes = decodeBase64Audio(voiceDataBase64, limits.maxFileBytes);
    const audio = inspectBytes(bytes, limits);
    const buffer = ownBuffer(bytes);
    const { value, queueMs } = await runTask<Analysis>({ kind: 'analyse', audio: buffer, options: { ...options, limits } }, signal, buffer);
    return { analysis: value, audio: value.info ?? audio, timings: { ...value.timings, queueMs, totalMs: performance.now() - t0 } };
  }

  if (opts.warmup ?? true) {
    await Promise.all(Array.from({ length: threads }, () => runTask({ kind: 'warmup' }).catch(() => undefined)));
  }

  const engine: VoiceEngine = {
    speakerModelId: speakerEntry.name,
    spoofModelId: spoofEntry.name,
    speakerModel: speakerEntry,
    spoofModel: spoofEntry,
    defaultThreshold,
    limits,

    inspectAudio(voiceDataBase64) {
      return inspectBytes(decodeBase64Audio(voiceDataBase64, limits.maxFileBytes), limits);
    },

    async enrol(voiceDataBase64, o = {}) {
      const { analysis: a, audio, timings } = await analyseBase64(voiceDataBase64, { gating: true, consistency: true }, o.signal);
      const bonafideProbability = a.spoof.bonafideProbability;
      return {
        voiceprint: { modelId: speakerEntry.name, embedding: a.embedding },
        qualityScore: qualityScore({ netSpeechSeconds: a.netSpeechSeconds, snrDb: a.snrDb, clippingRatio: a.clippingRatio, consistency: a.consistency }),
        netSpeechSeconds: a.netSpeechSeconds,
        snrDb: a.snrDb,
        clippingRatio: a.clippingRatio,
        consistency: a.consistency,
        spoof: { bonafideProbability, deepfakeDetected: bonafideProbability < spoofThreshold },
        audio,
        timings,
      };
    },

    async verify(voiceDataBase64, voiceprint, o = {}) {
      if (!voiceprint || typeof voiceprint.modelId !== 'string' || !(voiceprint.embedding instanceof Float32Array)) {
        throw new EngineError('invalid_voiceprint', 'voiceprint must be { modelId: string, embedding: Float32Array }');
      }
      if (voiceprint.modelId !== speakerEntry.name) {
        throw new EngineError('voiceprint_model_mismatch', `the voiceprint was made by model ${voiceprint.modelId}, the engine runs ${speakerEntry.name}; re-enrol the user`, {
          voiceprintModel: voiceprint.modelId,
          engineModel: speakerEntry.name,
        });
      }
      if (!voiceprint.embedding.every(Number.isFinite)) throw new EngineError('invalid_voiceprint', 'voiceprint embedding has non-finite values');
      const threshold = o.threshold ?? defaultThreshold;
      if (!(threshold >= 0 && threshold <= 1)) throw new RangeError('threshold must be in [0, 1]');
      const { analysis: a, audio, timings } = await analyseBase64(voiceDataBase64, { gating: true, consistency: false }, o.signal);
      if (a.embedding.length !== voiceprint.embedding.length) {
        throw new EngineError('invalid_voiceprint', `voiceprint has ${voiceprint.embedding.length} dimensions, the model produces ${a.embedding.length}`);
      }
      const cosine = cosineSimilarity(a.embedding, voiceprint.embedding);
      const score = matchScore(qualityAdjustedScore(normalisedScore(cosine, voiceprint.embedding, a.embedding, cohort), a.netSpeechSeconds, calibration), calibration);
      const reliable = a.snrDb >= LIMITS.minVerifySnrDb;
      const bonafideProbability = a.spoof.bonafideProbability;
      return {
        result: decide(score, threshold, reliable),
        matchScore: score,
        cosine,
        threshold,
        deepfakeDetected: bonafideProbability < spoofThreshold,
        bonafideProbability,
        netSpeechSeconds: a.netSpeechSeconds,
        snrDb: a.snrDb,
        ...(reliable ? {} : { inconclusiveReason: `SNR ${a.snrDb.toFixed(1)} dB is below ${LIMITS.minVerifySnrDb} dB` }),
        audio,
        timings,
      };
    },

    async embedBytes(bytes, o = {}) {
      const t0 = performance.now();
      const evalLimits: IntakeLimits = { ...limits, minDurationSeconds: 0 };
      inspectBytes(bytes, evalLimits);
      const buffer = bytes.slice().buffer as ArrayBuffer;
      const { value: a, queueMs } = await runTask<Analysis>(
        { kind: 'analyse', audio: buffer, options: { gating: false, consistency: false, limits: evalLimits } },
        o.signal,
        buffer,
      );
      return {
        embedding: a.embedding,
        bonafideProbability: a.spoof.bonafideProbability,
        spoofLogit: a.spoof.meanLogit,
        netSpeechSeconds: a.netSpeechSeconds,
        snrDb: a.snrDb,
        timings: { ...a.timings, queueMs, totalMs: performance.now() - t0 },
      };
    },

    stats() {
      return { queueSize: pool.queueSize, utilization: pool.utilization, completed: pool.completed, threads: pool.threads.length };
    },

    async close() {
      if (closed) return;
      closed = true;
      await pool.destroy();
    },

    async runRaw(task, o = {}) {
      return (await runTask(task, o.signal)).value;
    },
  };
  return engine;
}

