/**
 * npm run eval -- --sv <sv-trials.csv> --cm <cm-trials.csv> [--out file.json] [--threads N]
 *   [--models-dir dir] [--speaker-model name] [--spoof-model name] [--limit N] [--no-cache]
 *   [--write-calibration]
 *
 * Embeds every unique clip once (through the engine pool, production front-end, no quality gating),
 * caches embeddings per model pair, and prints/writes SV metrics (EER, minDCF at P_target 0.01,
 * FAR/FRR at the model's default threshold, Cllr) and CM metrics (EER, FAR at 1% FRR).
 * FLAC (dataset only; the API takes WAV/MP3) is converted with the `sox` CLI.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createEngine, type VoiceEngine } from '../engine.js';
import { EngineError } from '../errors.js';
import { defaultManifestPath, defaultModelsDir, loadManifest } from '../manifest.js';
import { cllr, eer, farAtFrr, fitLogisticCalibration, logit, minDcf, ratesAtThreshold } from '../metrics.js';
import { DEFAULT_CALIBRATION, matchScore } from '../scoring.js';
import { num, parseArgs, userPath } from './args.js';
import { renderEval, type EvalResult } from './render.js';

const run = promisify(execFile);
const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

interface ClipResult {
  e: string; // base64 float32 embedding
  logit: number;
  speech: number;
}

function readCsv(path: string): Record<string, string>[] {
  const [header, ...lines] = readFileSync(path, 'utf8').trim().split(/\r?\n/);
  const cols = header!.split(',');
  return lines.map((l) => {
    const v = l.split(',');
    return Object.fromEntries(cols.map((c, i) => [c, v[i] ?? '']));
  });
}

async function loadClip(datasetDir: string, rel: string): Promise<Uint8Array> {
  const path = join(datasetDir, rel);
  if (path.endsWith('.flac')) {
    const { stdout } = await run('sox', [path, '-t', 'wav', '-b', '16', '-'], { encoding: 'buffer', maxBuffer: 64 << 20 });
    return new Uint8Array(stdout);
  }
  return new Uint8Array(await readFile(path));
}

function svMetrics(trials: { cos: number; target: boolean }[], cal: { a: number; b: number }, threshold: number) {
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
    eerCosineThreshold: e.threshold,
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
  return { bonafide: bona.length, spoof: spoof.length, eer: e.eer, farAt1PctFrr: f.far, thresholdLogitAt1PctFrr: f.threshold, farAtDefault: actual.far, frrAtDefault: actual.frr };
}


async function main() {
  const args = parseArgs(process.argv.slice(2), {
    name: 'npm run eval --',
    description: 'Score the engine on speaker-verification (--sv) and/or spoof (--cm) trial lists; writes bench/results/engine-eval-<model>.json.',
    options: {
      'sv <trials.csv>': 'speaker-verification trials',
      'cm <trials.csv>': 'spoof (countermeasure) trials',
      'out <file>': 'result file (default bench/results/engine-eval-<speaker model>.json)',
      'threads <n>': 'inference threads (default: all cores)',
      'models-dir <dir>': 'models directory (default ./models)',
      'speaker-model <name>': 'speaker model from the manifest (default: its default)',
      'spoof-model <name>': 'spoof model from the manifest (default: its default)',
      'limit <n>': 'score at most n trials of each list',
      'cache-dir <dir>': 'per-clip score cache (default: the OS temp directory)',
      'no-cache': 'ignore the per-clip score cache',
      'write-calibration': "fit the speaker model's score calibration and write it into the manifest",
    },
  });
  const svPath = typeof args.sv === 'string' ? userPath(args.sv) : undefined;
  const cmPath = typeof args.cm === 'string' ? userPath(args.cm) : undefined;
  if (!svPath && !cmPath) {
    console.error('usage: npm run eval -- --sv <trials.csv> --cm <trials.csv> [--out results.json] [--threads N] [--models-dir dir] [--limit N]');
    process.exit(2);
  }
  const modelsDir = typeof args['models-dir'] === 'string' ? userPath(args['models-dir']) : defaultModelsDir();
  const threads = num(args.threads, availableParallelism());
  const limit = num(args.limit, Infinity);
  const t0 = performance.now();
  const engine: VoiceEngine = await createEngine({
    modelsDir,
    speakerModel: typeof args['speaker-model'] === 'string' ? args['speaker-model'] : undefined,
    spoofModel: typeof args['spoof-model'] === 'string' ? args['spoof-model'] : undefined,
    threads,
    maxQueue: 1024,
    taskTimeoutMs: 120_000,
  });
  const datasetDir = dirname(dirname((svPath ?? cmPath)!));
  const manifestCsv = join(datasetDir, 'manifest.csv');
  const meta = new Map(existsSync(manifestCsv) ? readCsv(manifestCsv).map((r) => [r.path!, r]) : []);

  let sv = svPath ? readCsv(svPath) : [];
  let cm = cmPath ? readCsv(cmPath) : [];
  if (Number.isFinite(limit)) {
    // deterministic subsample for quick runs: every k-th trial
    const every = <T>(xs: T[]) => xs.filter((_, i) => i % Math.max(1, Math.ceil(xs.length / limit)) === 0);
    sv = every(sv);
    cm = every(cm);
  }
  const clips = [...new Set([...sv.flatMap((t) => [t.enrol!, t.test!]), ...cm.map((t) => t.path!)])];

  const key = `${engine.speakerModel.sha256.slice(0, 12)}-${engine.spoofModel.sha256.slice(0, 12)}`;
  const cacheDir = typeof args['cache-dir'] === 'string' ? userPath(args['cache-dir']) : join(tmpdir(), 'voxkey-eval-cache');
  const cacheFile = join(cacheDir, `${key}-${createHash('sha1').update(datasetDir).digest('hex').slice(0, 8)}.json`);
  const cache: Record<string, ClipResult> = args['no-cache'] || !existsSync(cacheFile) ? {} : JSON.parse(readFileSync(cacheFile, 'utf8'));
  const todo = clips.filter((c) => !cache[c]);
  const failed: Record<string, string> = {};
  console.error(`eval: ${clips.length} clips (${todo.length} to embed, ${clips.length - todo.length} cached), ${sv.length} SV trials, ${cm.length} CM trials, speaker ${engine.speakerModelId}, spoof ${engine.spoofModelId}, ${threads} threads`);
  let done = 0;
  let next = 0;
  const workerMs: number[] = [];
  const tEmbed = performance.now();
  await Promise.all(
    Array.from({ length: threads + 1 }, async () => {
      while (next < todo.length) {
        const clip = todo[next++]!;
        try {
          const r = await engine.embedBytes(await loadClip(datasetDir, clip));
          cache[clip] = { e: Buffer.from(r.embedding.buffer, r.embedding.byteOffset, r.embedding.byteLength).toString('base64'), logit: logit(r.bonafideProbability), speech: r.netSpeechSeconds };
          workerMs.push(r.timings.workerMs);
        } catch (e) {
          failed[clip] = e instanceof EngineError ? `${e.code}: ${e.message}` : String(e);
        }
        if (++done % 100 === 0) console.error(`  ${done}/${todo.length} clips, ${((performance.now() - tEmbed) / 1000).toFixed(0)} s`);
      }
    }),
  );
  await engine.close();
  mkdirSync(cacheDir, { recursive: true });
  await writeFile(cacheFile, JSON.stringify(cache));
  const emb = new Map<string, Float32Array>();
  const vec = (c: string) => {
    let v = emb.get(c);
    if (!v) {
      const b = Buffer.from(cache[c]!.e, 'base64');
      v = new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
      emb.set(c, v);
    }
    return v;
  };
  const cos = (a: Float32Array, b: Float32Array) => {
    let d = 0;
    for (let i = 0; i < a.length; i++) d += a[i]! * b[i]!;
    return d; // embeddings are unit length
  };

  const corpusOf = (p: string) => p.split('/')[1] ?? '?';
  const result: Record<string, unknown> = {
    command: `npm run eval -- ${process.argv.slice(2).join(' ')}`,
    date: new Date().toISOString(),
    speakerModel: { name: engine.speakerModelId, sha256: engine.speakerModel.sha256 },
    spoofModel: { name: engine.spoofModelId, sha256: engine.spoofModel.sha256 },
    dataset: datasetDir,
    clips: { total: clips.length, embedded: todo.length - Object.keys(failed).length, failed: Object.keys(failed).length, failures: failed },
  };
  const cal = engine.speakerModel.calibration ?? DEFAULT_CALIBRATION;
  const threshold = engine.defaultThreshold;

  if (sv.length) {
    const trials = sv
      .filter((t) => cache[t.enrol!] && cache[t.test!])
      .map((t) => ({ cos: cos(vec(t.enrol!), vec(t.test!)), target: t.target === '1', ce: corpusOf(t.enrol!), ct: corpusOf(t.test!), lang: t.lang ?? '', speech: Math.min(cache[t.enrol!]!.speech, cache[t.test!]!.speech) }));
    const groups: Record<string, typeof trials> = { pooled: trials };
    for (const c of [...new Set(trials.map((t) => t.ce))].sort()) groups[`corpus:${c}`] = trials.filter((t) => t.ce === c && t.ct === c);
    const cv = trials.filter((t) => t.ce === 'commonvoice' && t.ct === 'commonvoice');
    groups['commonvoice:same-language-nontargets'] = cv.filter((t) => t.target || !t.lang.includes('/'));
    groups['commonvoice:cross-language-nontargets'] = cv.filter((t) => t.target || t.lang.includes('/'));
    groups['other-corpora (incl. cross-corpus nontargets)'] = trials.filter((t) => t.ce !== 'commonvoice' && t.ct !== 'commonvoice');
    groups['both clips >= 3 s net speech'] = trials.filter((t) => t.speech >= 3);
    const tar = trials.filter((t) => t.target).map((t) => t.cos);
    const non = trials.filter((t) => !t.target).map((t) => t.cos);
    const fitted = fitLogisticCalibration(tar, non);
    result.sv = {
      trials: trials.length,
      skippedTrials: sv.length - trials.length,
      calibration: { ...cal, source: engine.speakerModel.calibration ? 'manifest' : 'engine default (none in manifest)' },
      fittedCalibrationOnTheseTrials: fitted,
      groups: Object.fromEntries(Object.entries(groups).map(([k, g]) => [k, svMetrics(g, cal, threshold)])),
      pooledWithFittedCalibration: svMetrics(trials, fitted, threshold),
      pooledOperatingPoints: [0.5, 0.85, 0.95].map((t) => {
        const score = (c: number) => matchScore(c, cal);
        return { matchScore: t, ...ratesAtThreshold(tar.map(score), non.map(score), t) };
      }),
    };
    if (args['write-calibration']) {
      const manifestPath = defaultManifestPath(modelsDir);
      const m = JSON.parse(readFileSync(manifestPath, 'utf8'));
      const entry = m.models.find((x: { name: string }) => x.name === engine.speakerModelId);
      entry.calibration = { type: 'logistic', a: Number(fitted.a.toFixed(4)), b: Number(fitted.b.toFixed(4)) };
      writeFileSync(manifestPath, JSON.stringify(m, null, 2) + '\n');
      console.error(`wrote calibration a=${fitted.a.toFixed(4)} b=${fitted.b.toFixed(4)} for ${engine.speakerModelId} into ${manifestPath}`);
    }
  }

  if (cm.length) {
    const rows = cm.filter((r) => cache[r.path!]).map((r) => ({ label: r.label!, logit: cache[r.path!]!.logit, corpus: corpusOf(r.path!), attack: meta.get(r.path!)?.attack ?? '' }));
    const spoofThreshold = engine.spoofModel.defaultThreshold ?? 0.5;
    const cmm = (b: number[], sp: number[]) => cmMetrics(b, sp, logit(spoofThreshold));
    const bona = rows.filter((r) => r.label === 'bonafide');
    const spoof = rows.filter((r) => r.label === 'spoof');
    const groups: Record<string, ReturnType<typeof cmMetrics>> = { pooled: cmm(bona.map((r) => r.logit), spoof.map((r) => r.logit)) };
    groups['bona fide without commonvoice'] = cmm(bona.filter((r) => r.corpus !== 'commonvoice').map((r) => r.logit), spoof.map((r) => r.logit));
    for (const c of ['yourtts-pt', 'yourtts-adapt']) groups[`corpus:${c} (same speakers)`] = cmm(bona.filter((r) => r.corpus === c).map((r) => r.logit), spoof.filter((r) => r.corpus === c).map((r) => r.logit));
    for (const a of [...new Set(spoof.map((r) => r.attack))].sort()) groups[`attack:${a || '?'}`] = cmm(bona.map((r) => r.logit), spoof.filter((r) => r.attack === a).map((r) => r.logit));
    result.cm = { trials: rows.length, skippedTrials: cm.length - rows.length, defaultThreshold: spoofThreshold, groups };
  }
  result.timing = {
    wallSeconds: (performance.now() - t0) / 1000,
    embeddedClips: workerMs.length,
    meanWorkerMsPerClip: workerMs.length ? workerMs.reduce((a, b) => a + b, 0) / workerMs.length : null,
  };

  const out = typeof args.out === 'string' ? userPath(args.out) : join(REPO_ROOT, 'bench', 'results', `engine-eval-${engine.speakerModelId}.json`);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(result, null, 2) + '\n');

  console.log('\n' + renderEval(result as unknown as EvalResult));
  console.log(`\nclips failed: ${Object.keys(failed).length}; wall ${((performance.now() - t0) / 1000).toFixed(1)} s; written ${out} (${basename(cacheFile)} cache)`);
}

main().catch((e) => {
  console.error(e instanceof EngineError ? `${e.code}: ${e.message}` : e);
  process.exit(1);
});
