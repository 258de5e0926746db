/**
 * npm run check:vad [-- --dataset <dir> --every N --out file.json]
 *
 * The VAD must keep its output when the front-end gets faster: this runs the engine's VAD and the
 * reference (the Silero export and per-chunk loop the engine used before, copied below) over the
 * dev clips of the data set and compares net speech per clip (limit: 2%) and the largest difference
 * in speech probability. Exit status 1 when a clip is over the limit.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';
import { decodeAudio } from '../audio/intake.js';
import { openSession } from '../models/sessions.js';
import { detectSpeech, sileroModelPath, speechSegments, VAD_CHUNK } from '../features/vad.js';
import { num, parseArgs, userPath } from './args.js';

export const NET_SPEECH_TOLERANCE = 0.02;

/** The engine's VAD loop before the front-end work, verbatim (state copied out of every call). */
async function referenceProbabilities(
  session: ort.InferenceSession,
  samples: Float32Array,
): Promise<Float32Array> {
  const context = 64;
  const chunks = Math.ceil(samples.length / VAD_CHUNK);
  const probs = new Float32Array(chunks);
  const input = new Float32Array(context + VAD_CHUNK);
  let state = new Float32Array(2 * 128);
  const sr = new ort.Tensor('int64', BigInt64Array.from([16000n]), []);
  const [probName, stateName] = [session.outputNames[0]!, session.outputNames[1]!];
  for (let c = 0; c < chunks; c++) {
    const off = c * VAD_CHUNK;
    input.copyWithin(0, VAD_CHUNK, VAD_CHUNK + context);
    if (c === 0) input.fill(0, 0, context);
    const chunk = samples.subarray(off, off + VAD_CHUNK);
    input.set(chunk, context);
    if (chunk.length < VAD_CHUNK) input.fill(0, context + chunk.length);
    const out = await session.run({
      input: new ort.Tensor('float32', input, [1, input.length]),
      state: new ort.Tensor('float32', state, [2, 1, 128]),
      sr,
    });
    probs[c] = (out[probName]!.data as Float32Array)[0]!;
    state = Float32Array.from(out[stateName]!.data as Float32Array);
  }
  return probs;
}

export interface VadClipComparison {
  clip: string;
  referenceSpeechSeconds: number;
  speechSeconds: number;
  relativeDifference: number;
  maxProbabilityDifference: number;
}

/** The clips of the dev trials (`trials/sv-dev.csv`, `trials/cm-dev.csv`: what `npm run eval` embeds), every `every`-th. */
export function devClips(datasetDir: string, every = 1): string[] {
  const column = (file: string, names: string[]) => {
    const [header, ...rows] = readFileSync(join(datasetDir, 'trials', file), 'utf8')
      .trim()
      .split(/\r?\n/);
    const idx = names.map((n) => header!.split(',').indexOf(n));
    return rows.flatMap((r) => idx.map((i) => r.split(',')[i]!));
  };
  const clips = [
    ...new Set([...column('sv-dev.csv', ['enrol', 'test']), ...column('cm-dev.csv', ['path'])]),
  ].sort();
  return clips.filter((_, i) => i % every === 0);
}

export async function compareVad(
  datasetDir: string,
  clips: string[],
  onClip?: (c: VadClipComparison) => void,
): Promise<VadClipComparison[]> {
  const [engineVad, referenceVad] = await Promise.all([
    openSession(sileroModelPath(), 1),
    openSession(sileroModelPath('op15'), 1),
  ]);
  const results: VadClipComparison[] = [];
  try {
    for (const clip of clips) {
      const bytes = new Uint8Array(readFileSync(join(datasetDir, clip)));
      const { samples } = await decodeAudio(bytes, {
        maxFileBytes: 100 * 1024 * 1024,
        maxDurationSeconds: 3600,
        minDurationSeconds: 0,
      });
      const now = await detectSpeech(engineVad, samples);
      const refProbs = await referenceProbabilities(referenceVad, samples);
      const referenceSpeechSeconds =
        speechSegments(refProbs, samples.length).reduce((n, s) => n + s.end - s.start, 0) / 16000;
      let maxProbabilityDifference = 0;
      for (let i = 0; i < refProbs.length; i++)
        maxProbabilityDifference = Math.max(
          maxProbabilityDifference,
          Math.abs(refProbs[i]! - now.probabilities[i]!),
        );
      const diff = Math.abs(now.netSpeechSeconds - referenceSpeechSeconds);
      const r: VadClipComparison = {
        clip,
        referenceSpeechSeconds,
        speechSeconds: now.netSpeechSeconds,
        relativeDifference:
          referenceSpeechSeconds > 0 ? diff / referenceSpeechSeconds : diff > 0 ? Infinity : 0,
        maxProbabilityDifference,
      };
      results.push(r);
      onClip?.(r);
    }
  } finally {
    await Promise.all([engineVad.release(), referenceVad.release()]);
  }
  return results;
}

async function main() {
  const args = parseArgs(process.argv.slice(2), {
    name: 'npm run check:vad --',
    description:
      "Compares the engine's VAD with the reference export and loop on every dev clip (net speech per clip).",
    options: {
      'dataset <dir>': 'dataset root (default $VOXKEY_DATASET_DIR or ../shared/datasets)',
      'every <n>': 'take every n-th dev clip (default 1)',
      'out <file>': 'write the per-clip results as JSON',
    },
  });
  const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
  const datasetDir =
    typeof args.dataset === 'string'
      ? userPath(args.dataset)
      : (process.env.VOXKEY_DATASET_DIR ?? resolve(repoRoot, '..', 'shared', 'datasets'));
  const clips = devClips(datasetDir, num(args.every, 1));
  console.error(`check:vad: ${clips.length} dev clips from ${datasetDir}`);
  let done = 0;
  const results = await compareVad(datasetDir, clips, () => {
    if (++done % 200 === 0) console.error(`  ${done}/${clips.length}`);
  });
  const over = results.filter((r) => r.relativeDifference > NET_SPEECH_TOLERANCE);
  const summary = {
    date: new Date().toISOString(),
    clips: results.length,
    toleranceRelative: NET_SPEECH_TOLERANCE,
    clipsOverTolerance: over.length,
    maxRelativeDifference: Math.max(0, ...results.map((r) => r.relativeDifference)),
    maxProbabilityDifference: Math.max(0, ...results.map((r) => r.maxProbabilityDifference)),
    referenceSpeechSecondsTotal: results.reduce((n, r) => n + r.referenceSpeechSeconds, 0),
    speechSecondsTotal: results.reduce((n, r) => n + r.speechSeconds, 0),
    overTolerance: over,
  };
  console.log(JSON.stringify({ ...summary, overTolerance: over.slice(0, 20) }, null, 2));
  if (typeof args.out === 'string') {
    const out = userPath(args.out);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify(summary, null, 2) + '\n');
  }
  process.exitCode = over.length > 0 ? 1 : 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
