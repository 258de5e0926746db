/**
 * npm run eval -- --sv <sv-trials.csv> --cm <cm-trials.csv> [--out file.json] [--threads N]
 *   [--models-dir dir] [--speaker-model name] [--spoof-model name] [--limit N] [--no-cache]
 *   [--write-calibration] [--write-cohort] [--max-far 0.01] [--match-threshold 0.85]
 *   [--write-spoof-threshold] [--max-flagged 0.05] [--quality-duration]
 *
 * Embeds every unique clip once (through the engine pool, production front-end, no quality gating),
 * caches embeddings per model pair, and prints/writes SV metrics (EER, minDCF at P_target 0.01,
 * FAR/FRR at the model's default threshold, Cllr) and CM metrics (EER, FAR at 1% FRR).
 * FLAC (dataset only; the API takes WAV/MP3) is decoded to WAV by tools/flac.ts (@wasm-audio-decoders/flac).
 * With an embedding projection in the speaker model's manifest entry, embeddings are projected before
 * they are compared (projection.ts; --no-projection compares the model's own by cosine); with a PLDA, trial
 * scores are its log-likelihood ratios (plda.ts); with a score-normalisation
 * cohort, trial scores are AS-normed cosines (score-norm.ts): exactly as engine.verify scores them. --write-cohort builds that cohort
 * from train-split speakers (tools/cohort.ts); --write-calibration fits the decision calibration
 * (calibration.ts: FAR <= --max-far in every block at match_score >= --match-threshold) into the manifest.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEngine, type VoiceEngine } from '../runtime/engine.js';
import type { SileroVariant } from '../features/vad.js';
import { EngineError } from '../errors.js';
import {
  defaultManifestPath,
  defaultModelsDir,
  loadManifest,
  selectModel,
  voiceprintModelId,
  type LogisticCalibration,
  type ModelEntry,
} from '../models/manifest.js';
import {
  cllr,
  eer,
  farAtFrr,
  fitLogisticCalibration,
  logit,
  minDcf,
  ratesAtThreshold,
} from '../scoring/metrics.js';
import { DEFAULT_CALIBRATION, matchScore } from '../scoring/scoring.js';
import { calibrationMismatch, loadModelScoring } from '../scoring/probe-score.js';
import { describeProjection, projectEmbedding } from '../scoring/projection.js';
import { describeComparison, pldaScore } from '../scoring/plda.js';
import { asNorm, cohortStats, type CohortStats } from '../scoring/score-norm.js';
import {
  channelFeatures,
  channelTerm,
  CHANNEL_FEATURE_NAMES,
  fitDecisionCalibration,
  fitQualityWeight,
  fitTailWeights,
  type ChannelTerms,
  type RecordingQuality,
} from '../scoring/calibration.js';
import { buildCohort } from './cohort.js';
import { familyOf } from './families.js';
import { median, num, parseArgs, userPath } from './args.js';
import { readCsv } from './csv.js';
import { flacToWav } from './flac.js';
import { renderEval, type EvalResult } from './render.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

interface ClipResult {
  e: string; // base64 float32 embedding
  logit: number;
  speech: number;
  snr?: number;
  /** bandwidth (Hz), spectral hole ratio, decay rate (dB/s): features/channel-quality.ts */
  q?: [number, number, number];
}

/** Cache keys of the channel dev set's clips (paths relative to its own folder). */
const CHANNEL_KEY = 'channels:';

async function loadClip(datasetDir: string, rel: string): Promise<Uint8Array> {
  const path = join(datasetDir, rel);
  const bytes = new Uint8Array(await readFile(path));
  return path.endsWith('.flac') ? flacToWav(bytes) : bytes;
}

function svMetrics(
  trials: { cos: number; target: boolean }[],
  cal: { a: number; b: number },
  threshold: number,
) {
  const tar = trials.filter((t) => t.target).map((t) => t.cos);
  const non = trials.filter((t) => !t.target).map((t) => t.cos);
  if (!tar.length || !non.length) return { targets: tar.length, nontargets: non.length };
  const e = eer(tar, non);
  const d = minDcf(tar, non, { pTarget: 0.01 });
  const score = (c: number) => matchScore(c, { type: 'logistic', ...cal });
  const actual = ratesAtThreshold(tar.map(score), non.map(score), threshold);
  const llr = (c: number) => cal.a * c + cal.b;
  return {
    targets: tar.length,
    nontargets: non.length,
    eer: e.eer,
    // the score the calibration maps (cosine or PLDA log-likelihood ratio, with the quality terms) at the equal-error point
    eerScoreThreshold: e.threshold,
    minDcf001: d.minDcf,
    actualThreshold: threshold,
    far: actual.far,
    frr: actual.frr,
    cllr: cllr(tar.map(llr), non.map(llr)),
  };
}

/** `thresholdLogit`: logit of the spoof model's defaultThreshold (deepfake when P(bona fide) is below it). */
function cmMetrics(bona: number[], spoof: number[], thresholdLogit: number) {
  if (!bona.length || !spoof.length) return { bonafide: bona.length, spoof: spoof.length };
  const e = eer(bona, spoof);
  const f = farAtFrr(bona, spoof, 0.01);
  const actual = ratesAtThreshold(bona, spoof, thresholdLogit);
  return {
    bonafide: bona.length,
    spoof: spoof.length,
    eer: e.eer,
    farAt1PctFrr: f.far,
    thresholdLogitAt1PctFrr: f.threshold,
    farAtDefault: actual.far,
    frrAtDefault: actual.frr,
  };
}

/** The shipped decision's rule: FAR at most 1% in every dev block with enough non-targets (issue 31). */
const DEFAULT_MAX_FAR = 0.01;
/** A block constrains the decision only if its FAR can be measured there: one allowed false accept at least (and >= 30 nontargets). */
const minNontargetsFor = (maxFar: number) => Math.max(30, Math.ceil(1 / maxFar - 1e-9));

async function main() {
  const args = parseArgs(process.argv.slice(2), {
    name: 'npm run eval --',
    description:
      'Score the engine on speaker-verification (--sv) and/or spoof (--cm) trial lists; writes bench/results/engine-eval-<model>.json.',
    options: {
      'sv <trials.csv>': 'speaker-verification trials',
      'channels <trials.csv>':
        "with --sv: the channel dev set (training/voxkey_train/channel_devset.py: enrol_channel, test_channel columns; clips relative to the folder above the CSV's)",
      'channel-terms':
        "with --write-calibration: fit the calibration's channel terms (measured quality of both recordings; the impostor-score tail at 1 - max-far levelled across conditions) too",
      'cm <trials.csv>': 'spoof (countermeasure) trials',
      'phrase-encoding':
        "score every clip as a verification with a phrase check encodes it (silence appended up to 10 s, the spoof model reading the recording's own frames)",
      'out <file>': 'result file (default bench/results/engine-eval-<speaker model>.json)',
      'threads <n>': 'inference threads (default: all cores)',
      'models-dir <dir>': 'models directory (default ./models)',
      'speaker-model <name>': 'speaker model from the manifest (default: its default)',
      'spoof-model <name>': 'spoof model from the manifest (default: its default)',
      'limit <n>': 'score at most n trials of each list',
      'vad <variant>': 'Silero VAD build: batched (the engine default) or scan (the one before it)',
      'cache-dir <dir>': 'per-clip score cache (default: the OS temp directory)',
      'no-cache': 'ignore the per-clip score cache',
      'write-calibration':
        "fit the speaker model's score calibration and write it into the manifest",
      'quality-duration': 'with --write-calibration: fit the net-speech quality term too',
      'max-far <x>': `FAR allowed in every block at the decision: the held-out operating point, the refitted decision and, with --write-calibration, the calibration written (default ${DEFAULT_MAX_FAR}, the shipped rule)`,
      'match-threshold <x>':
        'with --write-calibration: the match score the calibration maps that point to (default 0.85)',
      'write-cohort':
        "build the speaker model's AS-norm cohort from train-split speakers and name it in the manifest",
      'cohort-topk <k>': "AS-norm top-K (default: the manifest's)",
      'plain-cosine': 'score plain cosines even when the model has a cohort or a PLDA',
      'no-projection':
        "compare the model's own embeddings by cosine even when it names an embedding projection (and a PLDA)",
      'write-spoof-threshold':
        "choose the spoof model's verification threshold and write it into the manifest",
      'max-flagged <x>':
        'with --write-spoof-threshold: share of real clips of any corpus flagged (default 0.05)',
      'write-enrolment-spoof-threshold':
        "choose the spoof model's enrolment threshold (refuse only when very sure) and write it into the manifest",
      'max-flagged-enrolment <x>':
        'with --write-enrolment-spoof-threshold: share of real clips of any corpus refused (default 0.005)',
    },
  });
  const maxFar = num(args['max-far'], DEFAULT_MAX_FAR);
  const svPath = typeof args.sv === 'string' ? userPath(args.sv) : undefined;
  const cmPath = typeof args.cm === 'string' ? userPath(args.cm) : undefined;
  if (!svPath && !cmPath) {
    console.error(
      'usage: npm run eval -- --sv <trials.csv> --cm <trials.csv> [--out results.json] [--threads N] [--models-dir dir] [--limit N]',
    );
    process.exit(2);
  }
  if (args['plain-cosine'] && args['write-calibration']) {
    console.error(
      "--plain-cosine cannot be combined with --write-calibration: the manifest's calibration belongs to the scores the engine computes (its cohort or PLDA)",
    );
    process.exit(2);
  }
  if (args['no-projection'] && (args['write-calibration'] || args['write-cohort'])) {
    console.error(
      "--no-projection cannot be combined with --write-calibration or --write-cohort: the manifest's calibration and cohort belong to the scores the engine computes, through the model's projection",
    );
    process.exit(2);
  }
  const modelsDir =
    typeof args['models-dir'] === 'string' ? userPath(args['models-dir']) : defaultModelsDir();
  const threads = num(args.threads, availableParallelism());
  const limit = num(args.limit, Infinity);
  const t0 = performance.now();
  const vad: SileroVariant = args.vad === 'scan' ? 'scan' : 'batched';
  // A calibration the manifest's comparison no longer matches (a PLDA added or dropped) is refitted, not used.
  const staleCalibration = args['write-calibration']
    ? calibrationMismatch(
        selectModel(
          await loadManifest(defaultManifestPath(modelsDir)),
          'speaker',
          modelsDir,
          typeof args['speaker-model'] === 'string' ? args['speaker-model'] : undefined,
        ),
      )
    : null;
  if (staleCalibration)
    console.error(
      `${staleCalibration}: the default calibration scores until the new one is written`,
    );
  const engine: VoiceEngine = await createEngine({
    ignoreCalibration: Boolean(staleCalibration),
    modelsDir,
    manifestPath: defaultManifestPath(modelsDir),
    speakerModel: typeof args['speaker-model'] === 'string' ? args['speaker-model'] : undefined,
    spoofModel: typeof args['spoof-model'] === 'string' ? args['spoof-model'] : undefined,
    vad,
    threads,
    maxQueue: 1024,
    taskTimeoutMs: 120_000,
  });
  if (args['write-cohort'] && engine.speakerModel.plda) {
    await engine.close();
    console.error('--write-cohort: this model compares by PLDA, which AS-norm cannot normalise');
    process.exit(2);
  }
  if (args['write-cohort'] && engine.speakerModel.embeddingProjection) {
    await engine.close();
    console.error(
      "--write-cohort builds the cohort from the model's own embeddings, but this model compares projected ones: not supported",
    );
    process.exit(2);
  }
  const datasetDir = dirname(dirname((svPath ?? cmPath)!));
  const manifestCsv = join(datasetDir, 'manifest.csv');
  const meta = new Map(
    existsSync(manifestCsv) ? readCsv(manifestCsv).map((r) => [r.path!, r]) : [],
  );

  let sv = svPath ? readCsv(svPath) : [];
  let cm = cmPath ? readCsv(cmPath) : [];
  if (Number.isFinite(limit)) {
    // deterministic subsample for quick runs: every k-th trial
    const every = <T>(xs: T[]) =>
      xs.filter((_, i) => i % Math.max(1, Math.ceil(xs.length / limit)) === 0);
    sv = every(sv);
    cm = every(cm);
  }
  const channelPath = typeof args.channels === 'string' ? userPath(args.channels) : undefined;
  const channelDir = channelPath ? dirname(dirname(channelPath)) : '';
  let channelTrials = channelPath ? readCsv(channelPath) : [];
  if (Number.isFinite(limit))
    channelTrials = channelTrials.filter(
      (_, i) => i % Math.max(1, Math.ceil(channelTrials.length / limit)) === 0,
    );
  const clips = [
    ...new Set([...sv.flatMap((t) => [t.enrol!, t.test!]), ...cm.map((t) => t.path!)]),
  ];
  const channelClips = [...new Set(channelTrials.flatMap((t) => [t.enrol!, t.test!]))];

  const phraseEncoding = Boolean(args['phrase-encoding']);
  // The VAD decides which samples are embedded, so its build is part of the key.
  const key = `${engine.speakerModel.sha256.slice(0, 12)}-${engine.spoofModelKey.slice(0, 12)}-vad-${vad}${phraseEncoding ? '-phrase' : ''}`;
  const cacheDir =
    typeof args['cache-dir'] === 'string'
      ? userPath(args['cache-dir'])
      : join(tmpdir(), 'voxkey-eval-cache');
  const cacheFileOf = (dir: string) =>
    join(cacheDir, `${key}-${createHash('sha1').update(dir).digest('hex').slice(0, 8)}.json`);
  const readCache = (file: string): Record<string, ClipResult> =>
    args['no-cache'] || !existsSync(file) ? {} : JSON.parse(readFileSync(file, 'utf8'));
  const cacheFile = cacheFileOf(datasetDir);
  const cache = readCache(cacheFile);
  const channelCacheFile = channelPath ? cacheFileOf(channelDir) : '';
  if (channelPath)
    for (const [clip, r] of Object.entries(readCache(channelCacheFile)))
      cache[CHANNEL_KEY + clip] = r;
  // entries cached before the channel-quality measures existed are embedded again
  const todo = [...clips, ...channelClips.map((c) => CHANNEL_KEY + c)].filter((c) => !cache[c]?.q);
  const failed: Record<string, string> = {};
  console.error(
    `eval: ${clips.length + channelClips.length} clips (${todo.length} to embed, ${clips.length + channelClips.length - todo.length} cached), ${sv.length} SV trials, ${channelTrials.length} channel trials, ${cm.length} CM trials, speaker ${engine.speakerModel.name}, spoof ${engine.spoofModelId}, ${threads} threads`,
  );
  let done = 0;
  let next = 0;
  const workerMs: number[] = [];
  const tEmbed = performance.now();
  await Promise.all(
    Array.from({ length: threads + 1 }, async () => {
      while (next < todo.length) {
        const clip = todo[next++]!;
        try {
          const r = await engine.embedBytes(
            await (clip.startsWith(CHANNEL_KEY)
              ? loadClip(channelDir, clip.slice(CHANNEL_KEY.length))
              : loadClip(datasetDir, clip)),
            phraseEncoding ? { phrase: { expected: 'one', vocabulary: 'digits' } } : {},
          );
          const q = r.recordingQuality;
          cache[clip] = {
            e: Buffer.from(
              r.embedding.buffer,
              r.embedding.byteOffset,
              r.embedding.byteLength,
            ).toString('base64'),
            logit: logit(r.bonafideProbability),
            speech: r.netSpeechSeconds,
            snr: r.snrDb,
            q: [
              Number(q.bandwidthHz.toFixed(1)),
              Number(q.spectralHoleRatio.toFixed(5)),
              Number(q.decayRateDbPerS.toFixed(2)),
            ],
          };
          workerMs.push(r.timings.workerMs);
        } catch (e) {
          failed[clip] = e instanceof EngineError ? `${e.code}: ${e.message}` : String(e);
        }
        if (++done % 100 === 0)
          console.error(
            `  ${done}/${todo.length} clips, ${((performance.now() - tEmbed) / 1000).toFixed(0)} s`,
          );
      }
    }),
  );
  if (args['write-cohort']) {
    const spec = await buildCohort(engine, datasetDir, [...meta.values()], modelsDir, threads + 1);
    if (typeof args['cohort-topk'] === 'string') spec.topK = num(args['cohort-topk'], spec.topK);
    const manifestPath = defaultManifestPath(modelsDir);
    const m = JSON.parse(readFileSync(manifestPath, 'utf8'));
    m.models.find((x: { name: string }) => x.name === engine.speakerModel.name).scoreNormalization =
      spec;
    writeFileSync(manifestPath, JSON.stringify(m, null, 2) + '\n');
    engine.speakerModel.scoreNormalization = spec;
    console.error(
      `wrote cohort ${spec.file} (${spec.count} speakers, top-${spec.topK}) for ${engine.speakerModel.name} into ${manifestPath}`,
    );
  }
  await engine.close();
  if (typeof args['cohort-topk'] === 'string' && engine.speakerModel.scoreNormalization) {
    (engine.speakerModel.scoreNormalization as { topK: number }).topK = num(
      args['cohort-topk'],
      100,
    );
  }
  if (args['plain-cosine']) delete engine.speakerModel.scoreNormalization;
  if (args['plain-cosine'] || args['no-projection']) {
    if (engine.speakerModel.plda) {
      // its calibration belongs to PLDA scores: FAR and FRR then use the engine's default calibration
      delete engine.speakerModel.plda;
      delete engine.speakerModel.calibration;
      console.error(
        `${engine.speakerModel.name} compares by PLDA: scoring cosines with the default calibration (read the EER, not FAR/FRR)`,
      );
    }
  }
  if (args['no-projection']) delete engine.speakerModel.embeddingProjection;
  if (staleCalibration) delete engine.speakerModel.calibration;
  const { projection, plda, cohort } = await loadModelScoring(engine.speakerModel, modelsDir, {
    ignoreCalibration: Boolean(staleCalibration),
  });
  mkdirSync(cacheDir, { recursive: true });
  const channelCache = Object.fromEntries(
    Object.entries(cache)
      .filter(([c]) => c.startsWith(CHANNEL_KEY))
      .map(([c, r]) => [c.slice(CHANNEL_KEY.length), r]),
  );
  await writeFile(
    cacheFile,
    JSON.stringify(
      Object.fromEntries(Object.entries(cache).filter(([c]) => !c.startsWith(CHANNEL_KEY))),
    ),
  );
  if (channelPath) await writeFile(channelCacheFile, JSON.stringify(channelCache));
  const emb = new Map<string, Float32Array>();
  // the embeddings engine.verify compares: projected when the model names a projection
  const vec = (c: string) => {
    let v = emb.get(c);
    if (!v) {
      const b = Buffer.from(cache[c]!.e, 'base64');
      v = projectEmbedding(
        new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)),
        projection,
      );
      emb.set(c, v);
    }
    return v;
  };
  const cos = (a: Float32Array, b: Float32Array) => {
    let d = 0;
    for (let i = 0; i < a.length; i++) d += a[i]! * b[i]!;
    return d; // embeddings are unit length
  };
  const statsOf = new Map<string, CohortStats>();
  const stats = (c: string) => {
    let s = statsOf.get(c);
    if (!s) statsOf.set(c, (s = cohortStats(vec(c), cohort!)));
    return s;
  };
  // the score engine.verify calibrates (probe-score.ts comparisonScore): PLDA, AS-normed cosine with a cohort, the cosine
  const trialScore = (e: string, t: string) =>
    plda
      ? pldaScore(vec(e), vec(t), plda)
      : cohort
        ? asNorm(cos(vec(e), vec(t)), stats(e), stats(t))
        : cos(vec(e), vec(t));

  const corpusOf = (p: string) => p.split('/')[1] ?? '?';
  const result: Record<string, unknown> = {
    command: `npm run eval -- ${process.argv.slice(2).join(' ')}`,
    date: new Date().toISOString(),
    speakerModel: { name: engine.speakerModel.name, sha256: engine.speakerModel.sha256 },
    vad,
    spoofModel: {
      name: engine.spoofModelId,
      sha256: engine.spoofModel.sha256,
      ...(engine.spoofModelKey !== engine.spoofModel.sha256 ? { key: engine.spoofModelKey } : {}),
    },
    dataset: datasetDir,
    /** the per-clip scores this run read and wrote (training's cm_fusion_check and sv studies read it) */
    cacheFile,
    clips: {
      total: clips.length,
      embedded: todo.length - Object.keys(failed).length,
      failed: Object.keys(failed).length,
      failures: failed,
    },
  };
  const cal = engine.speakerModel.calibration ?? DEFAULT_CALIBRATION;
  const threshold = engine.defaultThreshold;

  if (sv.length) {
    const qualityOf = (clip: string): RecordingQuality | null => {
      const r = cache[clip]!;
      return r.q
        ? {
            netSpeechSeconds: r.speech,
            snrDb: r.snr ?? 0,
            bandwidthHz: r.q[0],
            spectralHoleRatio: r.q[1],
            decayRateDbPerS: r.q[2],
          }
        : null;
    };
    const rows: (Record<string, string> & { set: 'clean' | 'channels' })[] = [
      ...sv.map((t) => ({ ...t, set: 'clean' as const })),
      ...channelTrials.map((t) => ({
        ...t,
        enrol: CHANNEL_KEY + t.enrol,
        test: CHANNEL_KEY + t.test,
        set: 'channels' as const,
      })),
    ];
    const scored = rows.filter((t) => cache[t.enrol!] && cache[t.test!]);
    const manifestQuality = (engine.speakerModel.calibration as LogisticCalibration | undefined)
      ?.quality;
    // quality-aware terms (calibration.ts): fitted with --write-calibration (--quality-duration, --channel-terms), else the manifest's
    const qOf = (t: Record<string, string>) => Math.log(Math.max(0, cache[t.test!]!.speech) + 0.5);
    let qualityW = manifestQuality?.testLogDuration ?? 0;
    let channelTerms: ChannelTerms | undefined = manifestQuality?.channel;
    const raw = scored.map((t) => ({
      row: t,
      s: trialScore(t.enrol!, t.test!),
      qe: qualityOf(t.enrol!),
      qt: qualityOf(t.test!),
      y: t.target === '1',
    }));
    if (args['write-calibration']) {
      qualityW = 0;
      channelTerms = undefined;
      if (args['quality-duration']) {
        const pts = raw.map((p) => ({ s: p.s, q: qOf(p.row), y: p.y }));
        qualityW = Number(
          fitQualityWeight(
            pts.filter((p) => p.y),
            pts.filter((p) => !p.y),
          ).toFixed(6),
        );
      }
      if (args['channel-terms']) {
        const clean = raw.filter((p) => p.row.set === 'clean' && p.qe && p.qt);
        const med = (f: keyof RecordingQuality) =>
          Number(median(clean.flatMap((p) => [p.qe![f], p.qt![f]])).toFixed(3));
        const neutral: RecordingQuality = {
          netSpeechSeconds: med('netSpeechSeconds'),
          snrDb: med('snrDb'),
          bandwidthHz: med('bandwidthHz'),
          spectralHoleRatio: med('spectralHoleRatio'),
          decayRateDbPerS: med('decayRateDbPerS'),
        };
        // The impostor tail of each kind of trial weighs the same: clean pairs, channel pairs with different
        // channels and the (fewer) pairs with the same channel on both sides.
        const kindOf = (p: (typeof raw)[number]) =>
          p.row.set === 'clean'
            ? 'clean'
            : p.row.enrol_channel === p.row.test_channel
              ? 'same'
              : 'different';
        const non = raw.filter((p) => !p.y && p.qe && p.qt);
        const count = new Map<string, number>();
        for (const p of non) count.set(kindOf(p), (count.get(kindOf(p)) ?? 0) + 1);
        const pts = non.map((p) => ({
          s: p.s + qualityW * qOf(p.row),
          q: Object.values(channelFeatures(p.qe, p.qt!, neutral)),
          w: non.length / count.size / count.get(kindOf(p))!,
        }));
        const w = fitTailWeights(pts, 1 - maxFar);
        channelTerms = {
          weights: Object.fromEntries(
            CHANNEL_FEATURE_NAMES.map((f, i) => [f, Number(w[i]!.toFixed(6))]),
          ),
          neutral,
        };
      }
    }
    const trialCal = { quality: { channel: channelTerms } };
    const trials = raw.map((p) => ({
      cos: p.s + qualityW * qOf(p.row) + channelTerm(trialCal, p.qe, p.qt),
      target: p.y,
      enrol: p.row.enrol!,
      test: p.row.test!,
      set: p.row.set,
      ce: corpusOf(p.row.enrol!),
      ct: corpusOf(p.row.test!),
      lang: p.row.lang ?? '',
      speech: Math.min(cache[p.row.enrol!]!.speech, cache[p.row.test!]!.speech),
      enrolChannel: p.row.enrol_channel ?? '',
      testChannel: p.row.test_channel ?? '',
    }));
    const cleanTrials = trials.filter((t) => t.set === 'clean');
    const groups: Record<string, typeof trials> = { pooled: cleanTrials };
    for (const c of [...new Set(cleanTrials.map((t) => t.ce))].sort())
      groups[`corpus:${c}`] = cleanTrials.filter((t) => t.ce === c && t.ct === c);
    const cv = cleanTrials.filter((t) => t.ce === 'commonvoice' && t.ct === 'commonvoice');
    groups['commonvoice:same-language-nontargets'] = cv.filter(
      (t) => t.target || !t.lang.includes('/'),
    );
    groups['commonvoice:cross-language-nontargets'] = cv.filter(
      (t) => t.target || t.lang.includes('/'),
    );
    groups['other-corpora (incl. cross-corpus nontargets)'] = cleanTrials.filter(
      (t) => t.ce !== 'commonvoice' && t.ct !== 'commonvoice',
    );
    groups['cross-corpus nontargets (+ all targets)'] = cleanTrials.filter(
      (t) => t.target || t.ce !== t.ct,
    );
    groups['both clips >= 3 s net speech'] = cleanTrials.filter((t) => t.speech >= 3);
    const channelSet = trials.filter((t) => t.set === 'channels');
    if (channelSet.length) {
      groups['channels:pooled'] = channelSet;
      groups['channels:pair:same'] = channelSet.filter((t) => t.enrolChannel === t.testChannel);
      groups['channels:pair:different'] = channelSet.filter(
        (t) => t.enrolChannel !== t.testChannel,
      );
      for (const c of [...new Set(channelSet.map((t) => t.testChannel))].sort())
        groups[`channels:test:${c}`] = channelSet.filter((t) => t.testChannel === c);
    }
    const tar = trials.filter((t) => t.target).map((t) => t.cos);
    const non = trials.filter((t) => !t.target).map((t) => t.cos);
    const fitted = fitLogisticCalibration(tar, non);
    const blockNames = Object.keys(groups).filter(
      (k) => k !== 'pooled' && !k.startsWith('both clips'),
    );
    const decision = fitDecisionCalibration(
      tar,
      non,
      blockNames.map((k) => ({
        name: k,
        targets: groups[k]!.filter((t) => t.target).map((t) => t.cos),
        nontargets: groups[k]!.filter((t) => !t.target).map((t) => t.cos),
      })),
      {
        threshold: num(args['match-threshold'], 0.85),
        maxFar,
        minNontargets: minNontargetsFor(maxFar),
      },
    );
    // The operating point fitted on one half of the dev speakers, measured on the other half (and the
    // other way round): the figures docs/accuracy.md reports are not fitted on the trials they report.
    const speakerOf = (clip: string) => clip.split('/').slice(1, 3).join('/');
    const foldOf = (clip: string) =>
      createHash('sha1')
        .update(`voxkey-cv:${speakerOf(clip)}`)
        .digest()[0]! % 2;
    const foldTrials = trials.map((trial) => ({
      trial,
      fold: foldOf(trial.enrol) === foldOf(trial.test) ? foldOf(trial.enrol) : -1,
    }));
    const groupSets = new Map(Object.entries(groups).map(([name, ts]) => [name, new Set(ts)]));
    const heldOut: Record<
      string,
      { targets: number; nontargets: number; falseAccepts: number; falseRejects: number }
    > = {};
    for (const fold of [0, 1]) {
      const fit = foldTrials.filter((x) => x.fold === 1 - fold).map((x) => x.trial);
      const test = foldTrials.filter((x) => x.fold === fold).map((x) => x.trial);
      const split = (ts: typeof trials) => ({
        targets: ts.filter((t) => t.target).map((t) => t.cos),
        nontargets: ts.filter((t) => !t.target).map((t) => t.cos),
      });
      const blockOf = (ts: typeof trials, name: string) =>
        ts.filter((t) => groupSets.get(name)!.has(t));
      const fitted = fitDecisionCalibration(
        split(fit).targets,
        split(fit).nontargets,
        blockNames.map((k) => ({ name: k, ...split(blockOf(fit, k)) })),
        {
          threshold: num(args['match-threshold'], 0.85),
          maxFar,
          minNontargets: minNontargetsFor(maxFar),
        },
      );
      for (const name of ['pooled', ...blockNames]) {
        const { targets, nontargets } = split(blockOf(test, name));
        const h = (heldOut[name] ??= {
          targets: 0,
          nontargets: 0,
          falseAccepts: 0,
          falseRejects: 0,
        });
        h.targets += targets.length;
        h.nontargets += nontargets.length;
        h.falseAccepts += nontargets.filter((x) => x >= fitted.scoreThreshold).length;
        h.falseRejects += targets.filter((x) => x < fitted.scoreThreshold).length;
      }
    }
    const crossValidated = Object.fromEntries(
      Object.entries(heldOut).map(([name, h]) => [
        name,
        {
          targets: h.targets,
          nontargets: h.nontargets,
          far: h.falseAccepts / Math.max(1, h.nontargets),
          frr: h.falseRejects / Math.max(1, h.targets),
        },
      ]),
    );
    // a trial's score already carries its quality terms: the decision maps it with a and b only
    const scoreCal = { type: 'logistic' as const, a: cal.a, b: cal.b };
    result.sv = {
      crossValidatedOperatingPoint: {
        method:
          '2-fold by speaker (sha1 of corpus/speaker): the decision calibration fitted on one fold, FAR/FRR counted on the other; cross-fold nontargets left out',
        maxFar,
        groups: crossValidated,
      },
      trials: cleanTrials.length,
      channelTrials: channelSet.length,
      skippedTrials: sv.length + channelTrials.length - trials.length,
      calibration: {
        ...cal,
        source: engine.speakerModel.calibration ? 'manifest' : 'engine default (none in manifest)',
      },
      qualityTestLogDuration: qualityW,
      channelTerms: channelTerms ?? null,
      embeddingProjection: projection
        ? {
            method: projection.spec.method,
            file: projection.spec.file,
            sha256: projection.spec.sha256,
            outputDim: projection.spec.outputDim,
          }
        : null,
      plda: plda
        ? { method: plda.spec.method, file: plda.spec.file, sha256: plda.spec.sha256 }
        : null,
      scoreNormalization: cohort
        ? {
            method: cohort.spec.method,
            file: cohort.spec.file,
            cohortSpeakers: cohort.spec.count,
            topK: cohort.spec.topK,
          }
        : null,
      decisionCalibrationOnTheseTrials: decision,
      fittedCalibrationOnTheseTrials: fitted,
      groups: Object.fromEntries(
        Object.entries(groups).map(([k, g]) => [k, svMetrics(g, scoreCal, threshold)]),
      ),
      pooledWithFittedCalibration: svMetrics(cleanTrials, fitted, threshold),
      pooledOperatingPoints: [0.5, 0.85, 0.95].map((t) => {
        const score = (c: number) => matchScore(c, scoreCal);
        return {
          matchScore: t,
          ...ratesAtThreshold(
            cleanTrials.filter((x) => x.target).map((x) => score(x.cos)),
            cleanTrials.filter((x) => !x.target).map((x) => score(x.cos)),
            t,
          ),
        };
      }),
    };
    if (args['write-calibration']) {
      const manifestPath = defaultManifestPath(modelsDir);
      const m = JSON.parse(readFileSync(manifestPath, 'utf8'));
      // Every model of this embedding space (a model and its int8 variant) scores with one calibration.
      const space = voiceprintModelId(engine.speakerModel);
      const entries = (m.models as ModelEntry[]).filter(
        (x) => x.kind === 'speaker' && voiceprintModelId(x) === space,
      );
      const entry = entries.find((x) => x.name === engine.speakerModel.name)!;
      // The enrolment-samples term comes from training/voxkey_train/sv_study.py multi and is kept, unless it
      // was fitted on the other comparison's scale (cosine vs PLDA): then it is dropped until multi refits it.
      const samplesTerm = entry.calibration?.quality?.enrolSamplesLog;
      const keepSamplesTerm = samplesTerm && !staleCalibration;
      if (samplesTerm && !keepSamplesTerm)
        console.error(
          `dropped enrolSamplesLog ${samplesTerm}: it was fitted on other scores (${staleCalibration}); refit it with $VOXKEY_VENV/bin/python -m training.voxkey_train.sv_study multi --cache <this run's clean-set cache> --model ${engine.speakerModel.name} --max-far ${maxFar} --out <result.json> and copy its enrolSamplesLog into the calibration's quality block of every entry of this embedding space`,
        );
      const quality = {
        ...(qualityW ? { testLogDuration: Number(qualityW.toFixed(6)) } : {}),
        ...(keepSamplesTerm ? { enrolSamplesLog: samplesTerm } : {}),
        ...(channelTerms ? { channel: channelTerms } : {}),
      };
      const calibration: LogisticCalibration = {
        type: 'logistic',
        ...(plda ? { score: 'plda' as const } : {}),
        ...(projection || plda
          ? {
              fittedWith: {
                ...(projection ? { embeddingProjection: projection.spec.sha256 } : {}),
                ...(plda ? { plda: plda.spec.sha256 } : {}),
              },
            }
          : {}),
        a: Number(decision.a.toFixed(6)),
        b: Number(decision.b.toFixed(6)),
        ...(Object.keys(quality).length ? { quality } : {}),
      };
      const thresholdNote = `match_score >= ${decision.threshold} keeps FAR <= ${decision.maxFar} in every dev block${channelSet.length ? ' (clean and channel dev sets)' : ''} (worst: ${decision.worstBlock}); slope a fitted by logistic regression on all dev trials${projection ? `, ${describeProjection(projection.spec)}` : ''}${plda ? `, compared by ${describeComparison(plda.spec)}` : ''}${cohort ? ', scores AS-normed against the cohort' : ''}${channelTerms ? '; channel terms in the measured quality of both recordings (npm run eval -- --channel-terms)' : ''}; fitted on ${engine.speakerModel.name}'s embeddings, shared by ${entries.map((x) => x.name).join(', ')}`;
      for (const x of entries)
        Object.assign(x, { calibration, defaultThreshold: decision.threshold, thresholdNote });
      writeFileSync(manifestPath, JSON.stringify(m, null, 2) + '\n');
      console.error(
        `wrote calibration a=${decision.a.toFixed(6)} b=${decision.b.toFixed(6)} (worst block ${decision.worstBlock}) for ${entries.map((x) => x.name).join(', ')} into ${manifestPath}`,
      );
    }
  }

  if (cm.length) {
    const rows = cm
      .filter((r) => cache[r.path!])
      .map((r) => ({
        label: r.label!,
        logit: cache[r.path!]!.logit,
        corpus: corpusOf(r.path!),
        attack: meta.get(r.path!)?.attack ?? '',
      }));
    const spoofThreshold = engine.spoofModel.defaultThreshold ?? 0.5;
    const cmm = (b: number[], sp: number[]) => cmMetrics(b, sp, logit(spoofThreshold));
    const bona = rows.filter((r) => r.label === 'bonafide');
    const spoof = rows.filter((r) => r.label === 'spoof');
    const groups: Record<string, ReturnType<typeof cmMetrics>> = {
      pooled: cmm(
        bona.map((r) => r.logit),
        spoof.map((r) => r.logit),
      ),
    };
    groups['bona fide without commonvoice'] = cmm(
      bona.filter((r) => r.corpus !== 'commonvoice').map((r) => r.logit),
      spoof.map((r) => r.logit),
    );
    for (const c of ['yourtts-pt', 'yourtts-adapt'])
      groups[`corpus:${c} (same speakers)`] = cmm(
        bona.filter((r) => r.corpus === c).map((r) => r.logit),
        spoof.filter((r) => r.corpus === c).map((r) => r.logit),
      );
    for (const f of [...new Set(spoof.map((r) => familyOf(r.attack)))].sort())
      groups[`family:${f}`] = cmm(
        bona.map((r) => r.logit),
        spoof.filter((r) => familyOf(r.attack) === f).map((r) => r.logit),
      );
    for (const a of [...new Set(spoof.map((r) => r.attack))].sort())
      groups[`attack:${a || '?'}`] = cmm(
        bona.map((r) => r.logit),
        spoof.filter((r) => r.attack === a).map((r) => r.logit),
      );
    // real speech flagged as deepfake at the default threshold, per corpus (>= 10 bona fide clips)
    const thrLogit = logit(spoofThreshold);
    // (the demo-page references of corpora with fewer clips, mostly clean read speech, pooled as one more group)
    const byCorpus = [...new Set(bona.map((r) => r.corpus))]
      .sort()
      .map((c) => bona.filter((r) => r.corpus === c));
    const small = byCorpus.filter((xs) => xs.length < 10).flat();
    const flaggedGroups: [string, typeof bona][] = [
      ...byCorpus
        .filter((xs) => xs.length >= 10)
        .map((xs) => [xs[0]!.corpus, xs] as [string, typeof bona]),
      ...(small.length >= 10
        ? [
            ['other corpora with < 10 real clips each (demo-page references, pooled)', small] as [
              string,
              typeof bona,
            ],
          ]
        : []),
    ];
    const bonafideFlagged = Object.fromEntries(
      flaggedGroups.map(([name, xs]) => [
        name,
        { bonafide: xs.length, flagged: xs.filter((r) => r.logit < thrLogit).length / xs.length },
      ]),
    );
    const groupClips = new Map(flaggedGroups);
    result.cm = {
      trials: rows.length,
      skippedTrials: cm.length - rows.length,
      defaultThreshold: spoofThreshold,
      groups,
      bonafideFlagged,
    };
    // the highest P(bona fide) threshold that flags at most `maxFlagged` of the real clips of EVERY
    // corpus with >= 10 bona fide dev clips (and of the pooled smaller ones)
    const thresholdFlagging = (maxFlagged: number) => {
      let thr = Infinity;
      for (const c of Object.keys(bonafideFlagged)) {
        const xs = groupClips
          .get(c)!
          .map((r) => r.logit)
          .sort((x, y) => x - y);
        const allowed = Math.floor(maxFlagged * xs.length + 1e-9); // flagged: logit < threshold
        thr = Math.min(thr, xs[allowed]!);
      }
      return Math.floor((1 / (1 + Math.exp(-thr))) * 1e6) / 1e6; // rounded down: never flags more
    };
    const enrolmentThreshold = engine.spoofModel.enrolmentThreshold;
    if (enrolmentThreshold !== undefined) {
      (result.cm as Record<string, unknown>).enrolmentThreshold = enrolmentThreshold;
      (result.cm as Record<string, unknown>).bonafideFlaggedAtEnrolment = Object.fromEntries(
        flaggedGroups.map(([name, xs]) => [
          name,
          {
            bonafide: xs.length,
            flagged: xs.filter((r) => r.logit < logit(enrolmentThreshold)).length / xs.length,
          },
        ]),
      );
      (result.cm as Record<string, unknown>).spoofAcceptedAtEnrolment =
        spoof.filter((r) => r.logit >= logit(enrolmentThreshold)).length /
        Math.max(1, spoof.length);
    }
    for (const [flag, field, fallback, use] of [
      ['write-spoof-threshold', 'defaultThreshold', 0.05, 'deepfake_detected on verification'],
      [
        'write-enrolment-spoof-threshold',
        'enrolmentThreshold',
        0.005,
        'an enrolment refused as deepfake_detected',
      ],
    ] as const) {
      if (!args[flag]) continue;
      const maxFlagged = num(
        args[flag === 'write-spoof-threshold' ? 'max-flagged' : 'max-flagged-enrolment'],
        fallback,
      );
      const p = thresholdFlagging(maxFlagged);
      const manifestPath = defaultManifestPath(modelsDir);
      const m = JSON.parse(readFileSync(manifestPath, 'utf8'));
      const entry = m.models.find((x: { name: string }) => x.name === engine.spoofModelId);
      entry[field] = p;
      entry[field === 'defaultThreshold' ? 'thresholdNote' : 'enrolmentThresholdNote'] =
        `P(bona fide) below it = ${use}; the highest threshold that flags at most ${maxFlagged * 100}% of the real dev clips of every corpus with >= 10 of them and of the smaller corpora pooled (npm run eval -- --${flag})`;
      writeFileSync(manifestPath, JSON.stringify(m, null, 2) + '\n');
      console.error(`wrote spoof ${field} ${p} for ${engine.spoofModelId} into ${manifestPath}`);
    }
  }
  result.timing = {
    wallSeconds: (performance.now() - t0) / 1000,
    embeddedClips: workerMs.length,
    meanWorkerMsPerClip: workerMs.length
      ? workerMs.reduce((a, b) => a + b, 0) / workerMs.length
      : null,
  };

  const out =
    typeof args.out === 'string'
      ? userPath(args.out)
      : join(REPO_ROOT, 'bench', 'results', `engine-eval-${engine.speakerModel.name}.json`);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(result, null, 2) + '\n');

  console.log('\n' + renderEval(result as unknown as EvalResult));
  console.log(
    `\nclips failed: ${Object.keys(failed).length}; wall ${((performance.now() - t0) / 1000).toFixed(1)} s; written ${out} (${basename(cacheFile)} cache)`,
  );
}

main().catch((e) => {
  console.error(e instanceof EngineError ? `${e.code}: ${e.message}` : e);
  process.exit(1);
});
