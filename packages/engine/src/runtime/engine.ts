import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import {
  recordingQualityOf,
  type Analysis,
  type AnalysisTimings,
  type AnalyseOptions,
} from './analysis.js';
import { checkSignalTask, type AudioCheck } from './audio-check-task.js';
import { EngineError } from '../errors.js';
import {
  DEFAULT_INTAKE_LIMITS,
  inspectBytes,
  inspectInput,
  type AudioInfo,
  type AudioInput,
  type IntakeLimits,
} from '../audio/intake.js';
import {
  compatibilitySpeakerModels,
  voiceprintModelId,
  defaultManifestPath,
  defaultModelsDir,
  loadManifest,
  selectModel,
  speakerInputScale,
  speechDecoderParts,
  spoofEncoderName,
  resolveSpoofEncoder,
  spoofFusion,
  spoofInput,
  verifyModelFile,
  type ModelEntry,
} from '../models/manifest.js';
import { openSession, resolveIo } from '../models/sessions.js';
import { qualityScore } from '../scoring/quality.js';
import {
  decideVerification,
  DEFAULT_MATCH_THRESHOLD,
  type SampleScoringRule,
  type VerificationDecision,
  type VerificationResult,
} from '../scoring/scoring.js';
import { createTaskRunner } from './task-runner.js';
import { sileroModelPath, type SileroVariant } from '../features/vad.js';
import { loadModelScoring, scoreProbe, type ModelScoring } from '../scoring/probe-score.js';
import type { RecordingQuality } from '../scoring/calibration.js';
import { planVoiceprint } from '../models/voiceprint-models.js';
import type { SpeakerModelRef, WorkerConfig, WorkerTask } from './worker.js';
import { MAX_PHRASE_WORDS, type PhraseOutcome, type PhraseRequest } from '../phrase/check.js';
import { phraseWords } from '../phrase/normalise.js';
import { assertAudioInput, forWorker } from './worker-input.js';

export interface EngineOptions {
  /** Folder holding the model files (default: the repository's `models/`, or $VOXKEY_MODELS_DIR). */
  modelsDir?: string;
  /** Manifest path (default: `<modelsDir>/manifest.json`, or $VOXKEY_MODELS_MANIFEST). */
  manifestPath?: string;
  /** Speaker model name from the manifest (default: its `default: true` speaker model). */
  speakerModel?: string;
  /** Spoof model name from the manifest (default: its `default: true` spoof model). */
  spoofModel?: string;
  /**
   * Speech decoder for phrase checks (default: the manifest's `default: true` speech-decoder when its files
   * are present; `false`: no phrase checks, and the decoder is not loaded).
   */
  phraseDecoder?: string | false;
  /** Pool threads (default: max(1, floor(cores / intraOpThreads))). */
  threads?: number;
  /** onnxruntime intra-op threads per worker (default 1). threads x intraOpThreads should not exceed the cores. */
  intraOpThreads?: number;
  /** Tasks allowed to wait for a worker before `queue_full` (default 64). */
  maxQueue?: number;
  /**
   * Per-task limit including queueing (default 30 000 ms). Past it the caller gets `timeout` at once;
   * a task already running is not killed (cancellation is cooperative): its worker stops at the next
   * checkpoint between stages, so it holds its thread until then.
   */
  taskTimeoutMs?: number;
  /** Run one warm-up task per thread before resolving (default true). */
  warmup?: boolean;
  /** Override intake limits (size, duration). */
  limits?: Partial<IntakeLimits>;
  /** Enables the `crash`/`sleep` worker tasks used by the engine's own tests. */
  testHooks?: boolean;
  /** Silero VAD build (default `batched`; `scan` is the one before it, for side-by-side benches). */
  vad?: SileroVariant;
  /**
   * Score with the default calibration instead of the speaker models' own, which then need not fit their comparison:
   * for `npm run eval -- --write-calibration` refitting a calibration the manifest no longer matches. Not for serving.
   */
  ignoreCalibration?: boolean;
}

export interface Voiceprint {
  modelId: string;
  embedding: Float32Array;
  /** The enrolment recording's measured quality, when stored with the sample (the calibration's channel terms use it). */
  quality?: RecordingQuality | null;
}

export interface EngineTimings extends AnalysisTimings {
  /** Time waiting for a worker. */
  queueMs: number;
  /** From the call to the result, including the header check (when made here) and queueing. */
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
  /** Measured quality (speech, SNR, bandwidth, codec holes, reverberation): store it with the voiceprint sample. */
  recordingQuality: RecordingQuality;
  spoof: SpoofResult;
  /** Whether the recording says the phrase asked for, or null when none was. */
  phrase: PhraseOutcome | null;
  audio: AudioInfo;
  timings: EngineTimings;
}

export interface VerificationAnalysis {
  result: VerificationResult;
  /** The speaker model that scored this verification (the one the voiceprint's samples were made with). */
  speakerModelId: string;
  /**
   * The default model's embedding of this recording, when the voiceprint is being upgraded to it
   * (voiceprint-models.ts): store it as a new sample only if the verification passed and is no deepfake.
   */
  upgradeSample?: Voiceprint;
  /** Quality of the recording as an enrolment sample would be scored (for `upgradeSample`). */
  qualityScore: number;
  matchScore: number;
  cosine: number;
  threshold: number;
  deepfakeDetected: boolean;
  bonafideProbability: number;
  netSpeechSeconds: number;
  snrDb: number;
  /** Measured quality of this recording (and of `upgradeSample`). */
  recordingQuality: RecordingQuality;
  /** Why the result is inconclusive, when it is. */
  inconclusiveReason?: string;
  /** Its stable code (`low_snr`). */
  inconclusiveCode?: VerificationDecision['inconclusiveCode'];
  /** Whether the recording says the phrase asked for, or null when none was. */
  phrase: PhraseOutcome | null;
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
  recordingQuality: RecordingQuality;
  phrase: PhraseOutcome | null;
  timings: EngineTimings;
}

export interface EngineStats {
  queueSize: number;
  utilization: number;
  completed: number;
  threads: number;
}

/** Options of the calls that analyse a recording. */
export interface AnalyseCallOptions {
  signal?: AbortSignal;
  /**
   * What `inspectAudio`/`inspectBytes` returned for these bytes, when the caller already checked the
   * header (e.g. on the request side): the engine then does not check it again.
   */
  audio?: AudioInfo;
  /**
   * Hand the bytes' buffer to the worker instead of copying it (it must hold nothing else);
   * `bytes` is detached (empty) afterwards. Default false: the engine transfers a copy.
   */
  transfer?: boolean;
  /** Check that the recording says this text (needs `phraseLanguages` to be non-empty). */
  phrase?: PhraseRequest;
}

export interface VoiceEngine {
  /** The header check with this engine's limits: synchronous, no sample decoding; throws `EngineError`. */
  inspectAudio(bytes: Uint8Array): AudioInfo;
  /** Recording file bytes (WAV or MP3), or PCM -> voiceprint, quality and spoof result. */
  enrol(input: AudioInput, opts?: AnalyseCallOptions): Promise<EnrolmentAnalysis>;
  /**
   * Recording file bytes (WAV or MP3), or PCM, compared with a stored voiceprint, or with every
   * sample of one (`scoreAgainstSamples`; `rule` defaults to `DEFAULT_SAMPLE_SCORING_RULE`).
   */
  verify(
    input: AudioInput,
    voiceprint: Voiceprint | Voiceprint[],
    opts?: AnalyseCallOptions & {
      threshold?: number;
      rule?: SampleScoringRule;
      /**
       * false: skip the deepfake check, for a caller that reads only the voice match (a stream's early-decision
       * probe, whose decision is then made by a full verification): `deepfakeDetected` is false and
       * `bonafideProbability` NaN. Default true.
       */
      spoofCheck?: boolean;
    },
  ): Promise<VerificationAnalysis>;
  /** Audio pre-check: format, speech, noise and clipping, and the problems that would fail an enrolment or verification. */
  checkAudio(input: AudioInput, opts?: { signal?: AbortSignal }): Promise<AudioCheck>;
  /** Evaluation/bench helper: file bytes (WAV/MP3) -> embedding + spoof score, gating off. */
  embedBytes(
    bytes: Uint8Array,
    opts?: { signal?: AbortSignal; phrase?: PhraseRequest },
  ): Promise<ClipEmbedding>;
  /** The default speaker model's voiceprint model id (`voiceprintModelId`): enrolments record it, and voiceprints are upgraded to it. */
  readonly speakerModelId: string;
  readonly spoofModelId: string;
  readonly speakerModel: ModelEntry;
  /** Every speaker model served, the default first, then those kept for older voiceprints. */
  readonly speakerModels: readonly ModelEntry[];
  readonly spoofModel: ModelEntry;
  /** Identifies the spoof scoring for caches: the model file's sha256, and a fusion's partner file and parameters. */
  readonly spoofModelKey: string;
  /** The speech decoder that checks phrases, or null when none is loaded. */
  readonly phraseDecoder: ModelEntry | null;
  /** Primary language subtags whose phrases can be checked (e.g. ['en']); empty without a decoder. */
  readonly phraseLanguages: readonly string[];
  readonly defaultThreshold: number;
  /** deepfake score (1 - bona-fide probability) at or above which a recording counts as a deepfake by default. */
  readonly defaultDeepfakeThreshold: number;
  /** The same for enrolments: the spoof model's `enrolmentThreshold` (stricter to refuse), else its verification one. */
  readonly defaultEnrolmentDeepfakeThreshold: number;
  readonly limits: IntakeLimits;
  stats(): EngineStats;
  close(): Promise<void>;
  /** @internal test hook */
  runRaw(task: WorkerTask, opts?: { signal?: AbortSignal }): Promise<unknown>;
}

function assertBytes(bytes: Uint8Array): void {
  if (!(bytes instanceof Uint8Array))
    throw new TypeError(
      'audio must be the recording file bytes as a Uint8Array (base64 is decoded by the caller: decodeBase64Audio)',
    );
}

/** How one speaker model's scores become match scores, and its default threshold. */
interface SpeakerScoring extends ModelScoring {
  entry: ModelEntry;
  defaultThreshold: number;
}

/** The speech decoder to load: the named one, else the default one when its files are present, else none. */
function selectPhraseDecoder(
  manifest: Awaited<ReturnType<typeof loadManifest>>,
  modelsDir: string,
  choice: string | false | undefined,
): ModelEntry | null {
  if (choice === false) return null;
  if (choice) return selectModel(manifest, 'speech-decoder', modelsDir, choice);
  const fallback = manifest.models.find((m) => m.kind === 'speech-decoder' && m.default);
  if (!fallback) return null;
  try {
    return selectModel(manifest, 'speech-decoder', modelsDir);
  } catch (e) {
    // A deployment without the decoder's file still serves everything but phrase checks.
    if (e instanceof EngineError && e.code === 'model_missing') return null;
    throw e;
  }
}

function assertPhraseRequest(phrase: PhraseRequest): void {
  if (
    !phrase ||
    typeof phrase.expected !== 'string' ||
    (phrase.vocabulary !== 'digits' && phrase.vocabulary !== 'free')
  )
    throw new TypeError("phrase must be { expected: string, vocabulary: 'digits' | 'free' }");
  const words = phraseWords(phrase.expected).length;
  if (words === 0 || words > MAX_PHRASE_WORDS)
    throw new TypeError(
      `phrase.expected must have 1 to ${MAX_PHRASE_WORDS} words once normalised, got ${words}`,
    );
}

export async function createEngine(opts: EngineOptions = {}): Promise<VoiceEngine> {
  const modelsDir = opts.modelsDir ?? defaultModelsDir();
  const manifestPath =
    opts.manifestPath ??
    (opts.modelsDir ? join(opts.modelsDir, 'manifest.json') : defaultManifestPath(modelsDir));
  const manifest = await loadManifest(manifestPath);
  const speakerEntry = selectModel(manifest, 'speaker', modelsDir, opts.speakerModel);
  // Voiceprints, scoring and the worker's sessions go by the embedding space: a variant shares its model's.
  const speakerId = voiceprintModelId(speakerEntry);
  const speakerEntries = [
    speakerEntry,
    ...compatibilitySpeakerModels(manifest, modelsDir, speakerEntry),
  ];
  const spoofEntry = selectModel(manifest, 'spoof', modelsDir, opts.spoofModel);
  const decoderEntry = selectPhraseDecoder(manifest, modelsDir, opts.phraseDecoder);
  const decoderParts = decoderEntry ? speechDecoderParts(decoderEntry) : null;
  const encoderName = spoofEncoderName(spoofEntry) ?? decoderParts?.encoder ?? null;
  if (decoderParts && encoderName !== decoderParts.encoder)
    throw new EngineError(
      'model_invalid',
      `the speech decoder ${decoderEntry!.name} reads ${decoderParts.encoder}, but the spoof model ${spoofEntry.name} reads ${encoderName}; one encoder run serves both (to run this spoof model, give the decoder "default": false in the manifest)`,
    );
  const spoofEncoder = resolveSpoofEncoder(manifest, modelsDir, spoofEntry, encoderName);
  const encoderEntry = spoofEncoder?.entry ?? null;
  const encoderStates = spoofEncoder?.states ?? null;
  const encoderPrefix = spoofEncoder?.prefix ?? null;
  const fusion = spoofFusion(spoofEntry);
  const partnerEntry = fusion ? selectModel(manifest, 'spoof', modelsDir, fusion.with.model) : null;
  const [spoofPath, ...speakerPaths] = await Promise.all(
    [spoofEntry, ...speakerEntries].map((entry) => verifyModelFile(entry, modelsDir)),
  );
  const partnerPath = partnerEntry ? await verifyModelFile(partnerEntry, modelsDir) : null;
  // Without a phrase decoder the whole encoder never runs when a prefix serves the spoof model.
  const encoderPath =
    encoderEntry && (decoderEntry || !encoderPrefix)
      ? await verifyModelFile(encoderEntry, modelsDir)
      : null;
  const encoderPrefixPath =
    encoderEntry && encoderPrefix
      ? await verifyModelFile(
          {
            name: `${encoderEntry.name} (${encoderPrefix.states} hidden states)`,
            ...encoderPrefix,
          },
          modelsDir,
        )
      : null;
  const phraseDecoder =
    decoderEntry && decoderParts
      ? {
          stepPath: await verifyModelFile(decoderEntry, modelsDir),
          crossKvPath: await verifyModelFile(
            { name: `${decoderEntry.name} cross-kv`, ...decoderParts.crossKv },
            modelsDir,
          ),
          vocabularyPath: await verifyModelFile(
            { name: `${decoderEntry.name} vocabulary`, ...decoderParts.vocabulary },
            modelsDir,
          ),
          decoding: decoderParts.decoding,
        }
      : null;

  // Load once here to fail early with a clear error and to resolve the I/O names.
  const ioOf = async (path: string, entry: ModelEntry) => {
    const session = await openSession(path, 1, entry.name);
    try {
      return resolveIo(session, { inputName: entry.input.name, outputName: entry.output.name });
    } finally {
      await session.release();
    }
  };
  const spoofIo = await ioOf(spoofPath!, spoofEntry);
  const spoofPartner =
    fusion && partnerEntry && partnerPath
      ? {
          path: partnerPath,
          ...(await ioOf(partnerPath, partnerEntry)),
          input: spoofInput(partnerEntry),
          fusion,
        }
      : null;
  const speakerRefs: SpeakerModelRef[] = [];
  const scorers = new Map<string, SpeakerScoring>();
  for (const [i, entry] of speakerEntries.entries()) {
    const path = speakerPaths[i]!;
    speakerRefs.push({
      name: voiceprintModelId(entry),
      path,
      inputScale: speakerInputScale(entry),
      ...(await ioOf(path, entry)),
    });
    scorers.set(voiceprintModelId(entry), {
      entry,
      ...(await loadModelScoring(entry, modelsDir, { ignoreCalibration: opts.ignoreCalibration })),
      defaultThreshold: opts.ignoreCalibration
        ? DEFAULT_MATCH_THRESHOLD
        : (entry.defaultThreshold ?? DEFAULT_MATCH_THRESHOLD),
    });
  }

  // The VAD too: a worker whose model fails to load would take the process down, not fail cleanly.
  const vadPath = sileroModelPath(opts.vad);
  await (await openSession(vadPath, 1, 'silero-vad')).release();

  const intraOpThreads = Math.max(1, Math.floor(opts.intraOpThreads ?? 1));
  const threads = Math.max(
    1,
    Math.floor(opts.threads ?? Math.max(1, Math.floor(availableParallelism() / intraOpThreads))),
  );
  if (threads * intraOpThreads > availableParallelism()) {
    process.emitWarning(
      `engine threads (${threads}) x intra-op threads (${intraOpThreads}) exceed the ${availableParallelism()} available cores; inference will contend`,
      { code: 'VOXKEY_ENGINE_OVERSUBSCRIBED' },
    );
  }
  const taskTimeoutMs = opts.taskTimeoutMs ?? 30_000;
  const limits: IntakeLimits = { ...DEFAULT_INTAKE_LIMITS, ...opts.limits };
  const workerConfig: WorkerConfig = {
    vadPath,
    speakers: speakerRefs,
    spoof: {
      path: spoofPath!,
      ...spoofIo,
      input: spoofInput(spoofEntry),
      ...(encoderStates ? { encoderStates } : {}),
    },
    ...(spoofPartner ? { spoofPartner } : {}),
    ...(encoderPath ? { speechEncoder: { path: encoderPath } } : {}),
    ...(encoderPrefixPath && encoderPrefix
      ? { speechEncoderPrefix: { path: encoderPrefixPath, states: encoderPrefix.states } }
      : {}),
    ...(phraseDecoder ? { phraseDecoder } : {}),
    intraOpThreads,
    testHooks: opts.testHooks ?? false,
  };
  const runner = createTaskRunner({
    threads,
    maxQueue: opts.maxQueue ?? 64,
    taskTimeoutMs,
    workerConfig,
  });
  const defaultThreshold = scorers.get(speakerId)!.defaultThreshold;
  const loadedSpeakers = new Set(scorers.keys());
  const spoofThreshold = spoofEntry.defaultThreshold ?? 0.5;
  const enrolmentSpoofThreshold = spoofEntry.enrolmentThreshold ?? spoofThreshold;

  async function analyseBytes(
    input: AudioInput,
    options: AnalyseOptions,
    call: AnalyseCallOptions,
  ) {
    const t0 = performance.now();
    assertAudioInput(input);
    const audio = call.audio ?? inspectInput(input, options.limits);
    if (call.phrase) {
      assertPhraseRequest(call.phrase);
      if (!phraseDecoder)
        throw new EngineError(
          'model_missing',
          'phrase checks need a speech decoder, and none is loaded',
        );
    }
    const { audio: carried, transfer } = forWorker(input, call.transfer ?? false);
    const { value, queueMs } = await runner.run<Analysis>(
      {
        kind: 'analyse',
        audio: carried,
        options: { ...options, checked: audio, ...(call.phrase ? { phrase: call.phrase } : {}) },
      },
      { signal: call.signal, transfer },
    );
    return {
      analysis: value,
      audio: value.info ?? audio,
      timings: { ...value.timings, queueMs, totalMs: performance.now() - t0 },
    };
  }

  if (opts.warmup ?? true) {
    await Promise.all(
      Array.from({ length: threads }, () => runner.run({ kind: 'warmup' }).catch(() => undefined)),
    );
  }

  const engine: VoiceEngine = {
    speakerModelId: speakerId,
    spoofModelId: spoofEntry.name,
    speakerModel: speakerEntry,
    speakerModels: speakerEntries,
    spoofModel: spoofEntry,
    spoofModelKey: partnerEntry
      ? createHash('sha256')
          .update(`${spoofEntry.sha256} ${partnerEntry.sha256} ${JSON.stringify(fusion)}`)
          .digest('hex')
      : spoofEntry.sha256,
    phraseDecoder: decoderEntry,
    phraseLanguages: decoderParts?.languages ?? [],
    defaultThreshold,
    defaultDeepfakeThreshold: 1 - spoofThreshold,
    defaultEnrolmentDeepfakeThreshold: 1 - enrolmentSpoofThreshold,
    limits,

    inspectAudio(bytes) {
      assertBytes(bytes);
      return inspectBytes(bytes, limits);
    },

    async enrol(bytes, o = {}) {
      const {
        analysis: a,
        audio,
        timings,
      } = await analyseBytes(bytes, { gating: true, consistency: true, limits }, o);
      const bonafideProbability = a.spoof.bonafideProbability;
      return {
        voiceprint: { modelId: speakerId, embedding: a.embedding },
        qualityScore: qualityScore({
          netSpeechSeconds: a.netSpeechSeconds,
          snrDb: a.snrDb,
          clippingRatio: a.clippingRatio,
          consistency: a.consistency,
        }),
        netSpeechSeconds: a.netSpeechSeconds,
        snrDb: a.snrDb,
        clippingRatio: a.clippingRatio,
        consistency: a.consistency,
        recordingQuality: recordingQualityOf(a),
        spoof: {
          bonafideProbability,
          deepfakeDetected: bonafideProbability < enrolmentSpoofThreshold,
        },
        phrase: a.phrase,
        audio,
        timings,
      };
    },

    async verify(bytes, voiceprint, o = {}) {
      const samples = Array.isArray(voiceprint) ? voiceprint : [voiceprint];
      if (samples.length === 0)
        throw new EngineError('invalid_voiceprint', 'the voiceprint has no samples');
      for (const sample of samples) {
        if (
          !sample ||
          typeof sample.modelId !== 'string' ||
          !(sample.embedding instanceof Float32Array)
        ) {
          throw new EngineError(
            'invalid_voiceprint',
            'voiceprint must be { modelId: string, embedding: Float32Array }',
          );
        }
        if (!sample.embedding.every(Number.isFinite))
          throw new EngineError('invalid_voiceprint', 'voiceprint embedding has non-finite values');
      }
      const plan = planVoiceprint(samples, speakerId, loadedSpeakers);
      const scoring = scorers.get(plan.scoringModel)!;
      const threshold = o.threshold ?? scoring.defaultThreshold;
      if (!(threshold >= 0 && threshold <= 1)) throw new RangeError('threshold must be in [0, 1]');
      const upgradeWith =
        plan.collectUpgradeSample && plan.scoringModel !== speakerId ? [speakerId] : [];
      const {
        analysis: a,
        audio,
        timings,
      } = await analyseBytes(
        bytes,
        {
          gating: true,
          consistency: false,
          limits,
          speakerModels: [plan.scoringModel, ...upgradeWith],
          spoofCheck: o.spoofCheck ?? true,
        },
        o,
      );
      const misfit = plan.scoringSamples.find((sample) => sample.length !== a.embedding.length);
      if (misfit)
        throw new EngineError(
          'invalid_voiceprint',
          `voiceprint has ${misfit.length} dimensions, the model ${plan.scoringModel} produces ${a.embedding.length}`,
        );
      const { matchScore: score, cosine } = scoreProbe(
        plan.scoringSamples,
        a.embedding,
        a.netSpeechSeconds,
        scoring,
        o.rule,
        {
          probe: recordingQualityOf(a),
          samples: plan.scoringSamples.map(
            (embedding) =>
              samples.find((sample) => sample.embedding === embedding)?.quality ?? null,
          ),
        },
      );
      const bonafideProbability = a.spoof.bonafideProbability;
      return {
        ...decideVerification({ matchScore: score, threshold, snrDb: a.snrDb }),
        speakerModelId: plan.scoringModel,
        ...(plan.collectUpgradeSample
          ? {
              upgradeSample: {
                modelId: speakerId,
                embedding: a.embeddings[speakerId]!,
              },
            }
          : {}),
        qualityScore: qualityScore({
          netSpeechSeconds: a.netSpeechSeconds,
          snrDb: a.snrDb,
          clippingRatio: a.clippingRatio,
          consistency: null,
        }),
        matchScore: score,
        cosine,
        threshold,
        deepfakeDetected: bonafideProbability < spoofThreshold,
        bonafideProbability,
        netSpeechSeconds: a.netSpeechSeconds,
        snrDb: a.snrDb,
        recordingQuality: recordingQualityOf(a),
        phrase: a.phrase,
        audio,
        timings,
      };
    },

    async checkAudio(input, o = {}) {
      assertAudioInput(input);
      return checkSignalTask(input, limits, (task, transfer) =>
        runner.run(task, { signal: o.signal, transfer }),
      );
    },

    async embedBytes(bytes, o = {}) {
      const { analysis: a, timings } = await analyseBytes(
        bytes,
        { gating: false, consistency: false, limits: { ...limits, minDurationSeconds: 0 } },
        o,
      );
      return {
        embedding: a.embedding,
        bonafideProbability: a.spoof.bonafideProbability,
        spoofLogit: a.spoof.meanLogit,
        netSpeechSeconds: a.netSpeechSeconds,
        snrDb: a.snrDb,
        recordingQuality: recordingQualityOf(a),
        phrase: a.phrase,
        timings,
      };
    },

    stats: () => runner.stats(),
    close: () => runner.close(),

    async runRaw(task, o = {}) {
      return (await runner.run(task, o)).value;
    },
  };
  return engine;
}
