import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { EngineError } from '../errors.js';
import { PACKAGE_DIR } from '../package-dir.js';

export type ModelKind = 'speaker' | 'spoof' | 'vad' | 'speech-encoder' | 'speech-decoder';
const MODEL_KINDS: readonly ModelKind[] = [
  'speaker',
  'spoof',
  'vad',
  'speech-encoder',
  'speech-decoder',
];

export interface LogisticCalibration {
  type: 'logistic';
  /**
   * The comparison score it was fitted on (absent: `cosine`): `plda` when the entry names a PLDA. The engine refuses
   * an entry whose calibration and comparison differ: a PLDA's calibration applied to cosines would accept everyone.
   */
  score?: 'cosine' | 'plda';
  /** sha256 of the projection and PLDA files it was fitted with (absent: not recorded); the engine refuses others. */
  fittedWith?: { embeddingProjection?: string; plda?: string };
  /** match_score = sigmoid(a * score + b); score = the PLDA log-likelihood ratio with a PLDA, else the cosine, AS-normed with a cohort */
  a: number;
  b: number;
  /**
   * optional quality-aware terms (calibration.ts): score += testLogDuration * ln(test net speech s + 0.5),
   * enrolSamplesLog * ln(samples), and the channel terms in the measured quality of both recordings
   */
  quality?: {
    testLogDuration?: number;
    enrolSamplesLog?: number;
    channel?: {
      weights: Partial<
        Record<
          | 'minBandwidthKHz'
          | 'bandwidthGapKHz'
          | 'minDecayHundredDbPerS'
          | 'maxSpectralHoleRatio'
          | 'minSnrTenDb'
          | 'minLogSpeech'
          | 'narrowEitherKHz',
          number
        >
      >;
      neutral: {
        netSpeechSeconds: number;
        snrDb: number;
        bandwidthHz: number;
        spectralHoleRatio: number;
        decayRateDbPerS: number;
      };
    };
  };
}

export interface ModelEntry {
  name: string;
  file: string;
  sha256: string;
  kind: ModelKind;
  bundled: boolean;
  default?: boolean;
  /** HTTPS download address for pullable models. */
  url?: string;
  /** The command that builds a model which is neither bundled nor downloadable (for example an import). */
  build?: string;
  input: { name?: string; shape?: (number | string)[]; [k: string]: unknown };
  output: { name?: string; embeddingSize?: number; [k: string]: unknown };
  calibration?: LogisticCalibration;
  /**
   * speaker: also load this model beside the default one, so voiceprints it made keep verifying
   * after an upgrade (each voiceprint is scored with the model its samples were made with).
   */
  compatibility?: boolean;
  /**
   * speaker: the model whose embedding space this one shares (e.g. its int8 variant): voiceprint samples
   * record that model's name, so voiceprints made with either verify with either. Absent: its own name.
   */
  voiceprintModel?: string;
  /** speaker: match-score acceptance threshold; spoof: bona fide probability below which audio is flagged. */
  defaultThreshold?: number;
  /** spoof: bona fide probability below which an enrolment is refused (lower: refuses only when very sure). */
  enrolmentThreshold?: number;
  license: string;
  source: string;
  trainingData?: string;
  metrics?: Record<string, unknown>;
  [k: string]: unknown;
}

export interface Manifest {
  models: ModelEntry[];
}

/**
 * Speaker-model input features (fbank.ts): Kaldi fbank + per-utterance mean normalisation, on samples
 * scaled as the model was trained (int16 scale, or torchaudio's [-1, 1]).
 */
const SPEAKER_FEATURE_SCALES: Record<string, number> = {
  'kaldi-fbank-80-cmn': 32768,
  'kaldi-fbank-80-cmn-unit-scale': 1,
};

export function speakerInputScale(entry: ModelEntry): number {
  return SPEAKER_FEATURE_SCALES[String(entry.input.features ?? 'kaldi-fbank-80-cmn')]!;
}

/** Spoof-model inputs (models/spoof.ts): 4 s waveform windows (no `features`), or the engine's band features. */
const SPOOF_FEATURES = ['spoof-lfb64-mn', 'whisper-hidden-states'] as const;

export function spoofInput(entry: ModelEntry): 'waveform' | (typeof SPOOF_FEATURES)[number] {
  return entry.input.features === undefined
    ? 'waveform'
    : (String(entry.input.features) as (typeof SPOOF_FEATURES)[number]);
}

/** The speech-encoder model a spoof model reads (its `input.encoder`), or null when it reads the audio itself. */
export function spoofEncoderName(entry: ModelEntry): string | null {
  return spoofInput(entry) === 'whisper-hidden-states' ? String(entry.input.encoder) : null;
}

/**
 * How many of its encoder's hidden states a spoof model reads (the second axis of its input shape: the first
 * that many), or null when it reads the audio itself.
 */
export function spoofEncoderStates(entry: ModelEntry): number | null {
  if (spoofInput(entry) !== 'whisper-hidden-states') return null;
  const states = entry.input.shape?.[1];
  return typeof states === 'number' && Number.isInteger(states) && states > 0 ? states : null;
}

/**
 * A speech encoder's graph that stops after its first `states` hidden states (import_whisper.py `prefixes`):
 * the same nodes and weights, the later layers left out, so a spoof model that reads no more pays for no more.
 */
export interface EncoderPrefix extends ModelFileRef {
  states: number;
}

/** The encoder prefix a spoof model reading `states` hidden states runs: the shortest that has them, if any. */
export function encoderPrefixFor(encoder: ModelEntry, states: number | null): EncoderPrefix | null {
  if (states === null || !Array.isArray(encoder.prefixes)) return null;
  const fits = (encoder.prefixes as EncoderPrefix[])
    .filter((p) => Number.isInteger(p.states) && p.states >= states)
    .sort((a, b) => a.states - b.states);
  return fits[0] ?? null;
}

/**
 * A spoof model fused with a second one (manifest `fusion`): both score each recording, each logit is
 * standardised by its real dev clips' median (`centre`) and interquartile range (`spread`), the two are
 * averaged with `with.weight` on the second, and the result is put back on this model's logit scale, so the
 * entry's thresholds read like this model's own logits would.
 */
export interface SpoofFusion {
  centre: number;
  spread: number;
  with: { model: string; weight: number; centre: number; spread: number };
}

export function spoofFusion(entry: ModelEntry): SpoofFusion | null {
  return (entry.fusion as SpoofFusion | undefined) ?? null;
}

function spoofFusionProblem(m: ModelEntry, models: ModelEntry[]): string | null {
  const f = m.fusion as Partial<SpoofFusion> | undefined;
  const finite = (x: unknown) => typeof x === 'number' && Number.isFinite(x);
  const positive = (x: unknown) => finite(x) && (x as number) > 0;
  if (m.kind !== 'spoof') return 'is for spoof models only';
  if (!f || typeof f !== 'object' || !f.with || typeof f.with !== 'object')
    return 'must be {"centre", "spread", "with": {"model", "weight", "centre", "spread"}}';
  if (
    !finite(f.centre) ||
    !positive(f.spread) ||
    !finite(f.with.centre) ||
    !positive(f.with.spread)
  )
    return 'centre values must be numbers and spread values positive numbers';
  if (!positive(f.with.weight) || f.with.weight! >= 1)
    return 'with.weight must be between 0 and 1 (the share of the second model)';
  const partner = models.find((x) => x && x.name === f.with!.model);
  if (!partner || partner.kind !== 'spoof' || partner.fusion !== undefined)
    return 'with.model must name a spoof model of the manifest that is not a fusion itself';
  if (spoofInput(partner) === 'whisper-hidden-states')
    return "with.model must read the audio itself: one speech encoder run serves the entry's own model";
  return null;
}

/** What serves a spoof model that reads a speech encoder's hidden states. */
export interface SpoofEncoder {
  entry: ModelEntry;
  /** How many hidden states the spoof model reads (null: none, the encoder serves a decoder only). */
  states: number | null;
  /** The encoder's graph up to those states, when the manifest lists one and its file is present. */
  prefix: EncoderPrefix | null;
}

/**
 * The speech encoder `encoderName` (by default the one the spoof model reads) and the prefix graph that serves
 * the spoof model when no phrase is checked; null when there is no encoder to run.
 */
export function resolveSpoofEncoder(
  manifest: Manifest,
  modelsDir: string,
  spoofEntry: ModelEntry,
  encoderName: string | null = spoofEncoderName(spoofEntry),
): SpoofEncoder | null {
  if (encoderName === null) return null;
  const entry = selectModel(manifest, 'speech-encoder', modelsDir, encoderName);
  const states = spoofEncoderStates(spoofEntry);
  const gives = (entry.output.shape as unknown[] | undefined)?.[1];
  if (states && typeof gives === 'number' && states > gives)
    throw new EngineError(
      'model_invalid',
      `the spoof model ${spoofEntry.name} reads ${states} hidden states, but ${entry.name} gives ${gives}`,
    );
  const prefix = encoderPrefixFor(entry, states);
  // The prefix only saves time: without its file the whole encoder serves the spoof model.
  if (prefix && !existsSync(join(modelsDir, prefix.file))) {
    process.emitWarning(
      `${entry.name}: ${prefix.file} is missing; the spoof check runs the whole encoder`,
      { code: 'VOXKEY_ENCODER_PREFIX_MISSING' },
    );
    return { entry, states, prefix: null };
  }
  return { entry, states, prefix };
}

/** A companion file of a model entry (a decoder's cross-attention graph, a vocabulary), checked by sha256 like the model. */
export interface ModelFileRef {
  file: string;
  sha256: string;
}

/** How a speech decoder turns the encoder's output into tokens (greedy, timestamps off). */
export interface DecodingConfig {
  /** Tokens the decoder starts from (Whisper: start of transcript, no timestamps). */
  prompt: number[];
  /** Whisper's `<|startofprev|>`: preceding text (DecodeOptions.context) goes between it and `prompt`. */
  startOfPrevious?: number;
  endOfText: number;
  /** Never generated. */
  suppressIds: number[];
  /** Not generated as the first token. */
  suppressIdsBegin: number[];
}

/** A speech-decoder entry's parts (`kind: 'speech-decoder'`): its step graph is the entry's own file. */
export interface SpeechDecoderParts {
  /** The speech encoder whose final output (`encoder_out`) it reads. */
  encoder: string;
  crossKv: ModelFileRef;
  vocabulary: ModelFileRef;
  decoding: DecodingConfig;
  /** Primary language subtags it can check (e.g. ["en"]). */
  languages: string[];
}

const isFileRef = (x: unknown): x is ModelFileRef =>
  !!x &&
  typeof x === 'object' &&
  typeof (x as ModelFileRef).file === 'string' &&
  !(x as ModelFileRef).file.includes('..') &&
  !isAbsolute((x as ModelFileRef).file) &&
  /^[0-9a-f]{64}$/i.test(String((x as ModelFileRef).sha256));
const isIdList = (x: unknown): x is number[] =>
  Array.isArray(x) && x.every((v) => Number.isInteger(v) && v >= 0);

function speechDecoderProblem(m: ModelEntry): string | null {
  if (typeof m.pairsWith !== 'string') return 'pairsWith must name the speech encoder it reads';
  if (!isFileRef(m.crossKv)) return 'crossKv must be {"file": name, "sha256": 64 hex digits}';
  if (!isFileRef(m.vocabulary)) return 'vocabulary must be {"file": name, "sha256": 64 hex digits}';
  const d = m.decoding as Partial<DecodingConfig> | undefined;
  if (
    !d ||
    !isIdList(d.prompt) ||
    d.prompt.length === 0 ||
    !Number.isInteger(d.endOfText) ||
    !isIdList(d.suppressIds) ||
    !isIdList(d.suppressIdsBegin) ||
    (d.startOfPrevious !== undefined && !isIdList([d.startOfPrevious]))
  )
    return 'decoding must be {"prompt": ids, "endOfText": id, "suppressIds": ids, "suppressIdsBegin": ids, "startOfPrevious"?: id}';
  if (!Array.isArray(m.languages) || !m.languages.every((l) => typeof l === 'string'))
    return 'languages must list the primary language subtags it checks (e.g. ["en"])';
  return null;
}

export function speechDecoderParts(entry: ModelEntry): SpeechDecoderParts {
  return {
    encoder: String(entry.pairsWith),
    crossKv: entry.crossKv as ModelFileRef,
    vocabulary: entry.vocabulary as ModelFileRef,
    decoding: entry.decoding as DecodingConfig,
    languages: entry.languages as string[],
  };
}

/** Repository root `models/` (packages/engine -> ../../models). */
export function defaultModelsDir(): string {
  return process.env.VOXKEY_MODELS_DIR ?? resolve(PACKAGE_DIR, '..', '..', 'models');
}

export function defaultManifestPath(modelsDir = defaultModelsDir()): string {
  return process.env.VOXKEY_MODELS_MANIFEST ?? join(modelsDir, 'manifest.json');
}

const CHANNEL_WEIGHTS = [
  'minBandwidthKHz',
  'bandwidthGapKHz',
  'minDecayHundredDbPerS',
  'maxSpectralHoleRatio',
  'minSnrTenDb',
  'minLogSpeech',
  'narrowEitherKHz',
];
const CHANNEL_NEUTRAL = [
  'netSpeechSeconds',
  'snrDb',
  'bandwidthHz',
  'spectralHoleRatio',
  'decayRateDbPerS',
];

function validChannelTerms(c: unknown): boolean {
  if (!c || typeof c !== 'object') return false;
  const { weights, neutral } = c as {
    weights?: Record<string, unknown>;
    neutral?: Record<string, unknown>;
  };
  if (!weights || typeof weights !== 'object' || !neutral || typeof neutral !== 'object')
    return false;
  return (
    Object.entries(weights).every(([k, v]) => CHANNEL_WEIGHTS.includes(k) && Number.isFinite(v)) &&
    CHANNEL_NEUTRAL.every((k) => Number.isFinite(neutral[k]))
  );
}

function invalid(path: string, message: string): EngineError {
  return new EngineError('manifest_invalid', `model manifest ${path}: ${message}`);
}

export function validateManifest(doc: unknown, path = 'manifest'): Manifest {
  if (!doc || typeof doc !== 'object' || !Array.isArray((doc as Manifest).models))
    throw invalid(path, 'expected {"models": [...]}');
  const names = new Set<string>();
  for (const [i, m] of (doc as Manifest).models.entries()) {
    const where = `models[${i}]`;
    if (!m || typeof m !== 'object') throw invalid(path, `${where} is not an object`);
    for (const key of ['name', 'file', 'sha256', 'kind', 'license', 'source'] as const) {
      if (typeof m[key] !== 'string' || !m[key])
        throw invalid(path, `${where}.${key} must be a non-empty string`);
    }
    if (!/^[0-9a-f]{64}$/i.test(m.sha256))
      throw invalid(path, `${where}.sha256 must be 64 hex digits`);
    if (!MODEL_KINDS.includes(m.kind))
      throw invalid(path, `${where}.kind must be one of ${MODEL_KINDS.join(', ')}`);
    if (typeof m.bundled !== 'boolean') throw invalid(path, `${where}.bundled must be a boolean`);
    if (m.file.includes('..') || isAbsolute(m.file))
      throw invalid(path, `${where}.file must be a plain file name inside the models folder`);
    if (m.url !== undefined && (typeof m.url !== 'string' || !/^https?:\/\//.test(m.url)))
      throw invalid(path, `${where}.url must be an http(s) URL`);
    if (m.build !== undefined && (typeof m.build !== 'string' || !m.build.trim()))
      throw invalid(path, `${where}.build must be a non-empty command`);
    if (
      m.calibration &&
      (m.calibration.type !== 'logistic' ||
        !Number.isFinite(m.calibration.a) ||
        !Number.isFinite(m.calibration.b))
    ) {
      throw invalid(path, `${where}.calibration must be {"type":"logistic","a":number,"b":number}`);
    }
    const fittedOn = m.calibration?.score;
    if (fittedOn !== undefined && fittedOn !== 'cosine' && fittedOn !== 'plda')
      throw invalid(path, `${where}.calibration.score must be "cosine" or "plda"`);
    const fittedWith = m.calibration?.fittedWith as Record<string, unknown> | undefined;
    if (
      fittedWith !== undefined &&
      (typeof fittedWith !== 'object' ||
        fittedWith === null ||
        Object.entries(fittedWith).some(
          ([k, v]) =>
            !['embeddingProjection', 'plda'].includes(k) ||
            typeof v !== 'string' ||
            !/^[0-9a-f]{64}$/i.test(v),
        ))
    )
      throw invalid(
        path,
        `${where}.calibration.fittedWith must be {"embeddingProjection"?: sha256, "plda"?: sha256}`,
      );
    const channel = m.calibration?.quality?.channel;
    if (channel !== undefined && !validChannelTerms(channel)) {
      throw invalid(
        path,
        `${where}.calibration.quality.channel must be {"weights":{${CHANNEL_WEIGHTS.join('|')}: number},"neutral":{${CHANNEL_NEUTRAL.join(', ')}: number}}`,
      );
    }
    if (
      m.kind === 'speaker' &&
      m.input?.features !== undefined &&
      !(String(m.input.features) in SPEAKER_FEATURE_SCALES)
    ) {
      throw invalid(
        path,
        `${where}.input.features must be one of ${Object.keys(SPEAKER_FEATURE_SCALES).join(', ')}`,
      );
    }
    if (
      m.kind === 'spoof' &&
      m.input?.features !== undefined &&
      !(SPOOF_FEATURES as readonly string[]).includes(String(m.input.features))
    ) {
      throw invalid(
        path,
        `${where}.input.features must be one of ${SPOOF_FEATURES.join(', ')} (or absent: waveform windows)`,
      );
    }
    if (
      m.kind === 'spoof' &&
      m.input?.features === 'whisper-hidden-states' &&
      typeof m.input.encoder !== 'string'
    ) {
      throw invalid(
        path,
        `${where}.input.encoder must name the speech-encoder model whose hidden states it reads`,
      );
    }
    if (
      m.prefixes !== undefined &&
      (m.kind !== 'speech-encoder' ||
        !Array.isArray(m.prefixes) ||
        !m.prefixes.every(
          (p) =>
            isFileRef(p) &&
            Number.isInteger((p as EncoderPrefix).states) &&
            (p as EncoderPrefix).states > 0,
        ))
    )
      throw invalid(
        path,
        `${where}.prefixes must be a list of {"states": positive integer, "file": name, "sha256": 64 hex digits} (speech encoders only)`,
      );
    if (m.kind === 'speech-decoder') {
      const problem = speechDecoderProblem(m);
      if (problem) throw invalid(path, `${where}.${problem}`);
    }
    if (
      m.voiceprintModel !== undefined &&
      (m.kind !== 'speaker' || typeof m.voiceprintModel !== 'string')
    )
      throw invalid(
        path,
        `${where}.voiceprintModel must be a speaker model's name (speaker models only)`,
      );
    if (names.has(m.name)) throw invalid(path, `duplicate model name ${m.name}`);
    names.add(m.name);
    m.input ??= {};
    m.output ??= {};
  }
  for (const [i, m] of (doc as Manifest).models.entries()) {
    if (m.fusion === undefined) continue;
    const problem = spoofFusionProblem(m, (doc as Manifest).models);
    if (problem) throw invalid(path, `models[${i}].fusion ${problem}`);
  }
  for (const m of (doc as Manifest).models) {
    if (m.voiceprintModel === undefined) continue;
    const shared = (doc as Manifest).models.find((x) => x.name === m.voiceprintModel);
    if (!shared || shared.kind !== 'speaker' || shared.voiceprintModel !== undefined)
      throw invalid(
        path,
        `${m.name}.voiceprintModel must name a speaker model of the manifest that has no voiceprintModel itself`,
      );
  }
  return doc as Manifest;
}

export async function loadManifest(path = defaultManifestPath()): Promise<Manifest> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new EngineError(
      'model_missing',
      `model manifest not found at ${path}`,
      { path },
      { cause: e },
    );
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw invalid(path, `not valid JSON (${(e as Error).message})`);
  }
  return validateManifest(doc, path);
}

/** The named model, or the manifest's `default: true` model of that kind whose file is present. */
export function selectModel(
  manifest: Manifest,
  kind: ModelKind,
  modelsDir: string,
  name?: string,
): ModelEntry {
  if (name) {
    const m = manifest.models.find((x) => x.name === name);
    if (!m)
      throw new EngineError('model_not_found', `model ${name} is not in the manifest`, { name });
    if (m.kind !== kind)
      throw new EngineError(
        'model_invalid',
        `model ${name} is a ${m.kind} model, not a ${kind} model`,
      );
    if (!existsSync(join(modelsDir, m.file))) {
      throw new EngineError(
        'model_missing',
        `model file ${m.file} for ${name} is not in ${modelsDir}` +
          (m.url ? `; run \`npx voxkey models pull ${name}\`` : '') +
          (m.build ? `; build it with \`${m.build}\`` : ''),
        { name },
      );
    }
    return m;
  }
  const candidates = manifest.models.filter((m) => m.kind === kind && m.default);
  const present = candidates.find((m) => existsSync(join(modelsDir, m.file)));
  if (present) return present;
  const pullable = manifest.models.filter((m) => m.kind === kind && m.url).map((m) => m.name);
  throw new EngineError(
    'model_missing',
    `no default ${kind} model file found in ${modelsDir}` +
      (candidates.length ? ` (expected ${candidates.map((m) => m.file).join(', ')})` : '') +
      (pullable.length
        ? `; download one with \`npx voxkey models pull ${pullable[0]}\` and pass its name`
        : '; add a model file and a manifest entry (see packages/engine/README.md)'),
    { kind },
  );
}

/** The model name voiceprint samples record for embeddings of this speaker model (its `voiceprintModel`, else its name). */
export function voiceprintModelId(entry: ModelEntry): string {
  return entry.voiceprintModel ?? entry.name;
}

/** The speaker models loaded beside the default for older voiceprints: `compatibility: true`, present, another embedding space. */
export function compatibilitySpeakerModels(
  manifest: Manifest,
  modelsDir: string,
  defaultModel: ModelEntry,
): ModelEntry[] {
  return manifest.models.filter(
    (m) =>
      m.kind === 'speaker' &&
      m.compatibility === true &&
      voiceprintModelId(m) !== voiceprintModelId(defaultModel) &&
      existsSync(join(modelsDir, m.file)),
  );
}

const COMPANION_FILES = {
  embeddingProjection: 'embedding projection',
  plda: 'PLDA',
  scoreNormalization: 'score-normalisation cohort',
} as const;

/** The files a speaker model's entry names beside the model (projection, PLDA, cohort), each with its sha256. */
export function companionFiles(
  entry: ModelEntry,
): { what: string; file: string; sha256: string }[] {
  return Object.entries(COMPANION_FILES).flatMap(([key, what]) => {
    const spec = entry[key] as { file?: unknown; sha256?: unknown } | undefined;
    return spec && typeof spec.file === 'string' && typeof spec.sha256 === 'string'
      ? [{ what, file: spec.file, sha256: spec.sha256 }]
      : [];
  });
}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Throws model_integrity when the file's sha256 differs from the manifest's. */
export async function verifyModelFile(
  entry: Pick<ModelEntry, 'name' | 'file' | 'sha256'>,
  modelsDir: string,
): Promise<string> {
  const path = join(modelsDir, entry.file);
  const actual = await sha256File(path);
  if (actual.toLowerCase() !== entry.sha256.toLowerCase()) {
    throw new EngineError(
      'model_integrity',
      `model ${entry.name} (${path}) has sha256 ${actual}, but the manifest says ${entry.sha256}; refusing to load it`,
      {
        name: entry.name,
        expected: entry.sha256,
        actual,
      },
    );
  }
  return path;
}
