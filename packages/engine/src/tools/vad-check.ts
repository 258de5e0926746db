/**
 * npm run check:vad [-- --dataset <dir> --every N --reference scan|op15 --out file.json]
 *
 * The VAD must keep its speech decisions when it gets faster: this runs the engine's VAD and a reference
 * over the dev clips of the data set, in alternation and timed, and compares per 32 ms frame whether it is
 * inside a speech segment (at least 98% of the frames must agree), net speech per clip (at most 0.1 s apart)
 * and the largest difference in speech probability. The reference is `scan`, the model the engine ran before
 * `batched`, or `op15`, the Silero export and per-chunk loop the engine used before that (copied below).
 * Exit status 1 when the agreement or a clip is over its limit.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';
import { decodeAudio } from '../audio/intake.js';
import { openSession } from '../models/sessions.js';
import {
  detectSpeech,
  sileroModelPath,
  speechProbabilities,
  speechSegments,
  VAD_CHUNK,
  type SpeechSegment,
} from '../features/vad.js';
import { num, parseArgs, userPath } from './args.js';

export const MIN_FRAME_AGREEMENT = 0.98;
export const NET_SPEECH_TOLERANCE_SECONDS = 0.1;

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
  audioSeconds: number;
  referenceSpeechSeconds: number;
  speechSeconds: number;
  netSpeechDifferenceSeconds: number;
  frames: number;
  /** frames (32 ms chunks) whose centre is inside a speech segment in one VAD and not in the other */
  framesDisagreeing: number;
  maxProbabilityDifference: number;
  engineMs: number;
  referenceMs: number;
}

export type VadReference = 'scan' | 'op15';

function speechFrames(segments: SpeechSegment[], frames: number): Uint8Array {
  const inside = new Uint8Array(frames);
  for (const s of segments)
    for (let c = Math.ceil((s.start - VAD_CHUNK / 2) / VAD_CHUNK); c < frames; c++) {
      if (c * VAD_CHUNK + VAD_CHUNK / 2 >= s.end) break;
      if (c >= 0) inside[c] = 1;
    }
  return inside;
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
  reference: VadReference = 'scan',
): Promise<VadClipComparison[]> {
  const [engineVad, referenceVad] = await Promise.all([
    openSession(sileroModelPath(), 1),
    openSession(sileroModelPath(reference), 1),
  ]);
  const referenceRun = (samples: Float32Array) =>
    reference === 'op15'
      ? referenceProbabilities(referenceVad, samples)
      : speechProbabilities(referenceVad, samples);
  const results: VadClipComparison[] = [];
  try {
    for (const clip of clips) {
      const bytes = new Uint8Array(readFileSync(join(datasetDir, clip)));
      const { samples } = await decodeAudio(bytes, {
        maxFileBytes: 100 * 1024 * 1024,
        maxDurationSeconds: 3600,
        minDurationSeconds: 0,
      });
      const t0 = performance.now();
      const now = await detectSpeech(engineVad, samples);
      const t1 = performance.now();
      const refProbs = await referenceRun(samples);
      const refSegments = speechSegments(refProbs, samples.length);
      const t2 = performance.now();
      const referenceSpeechSeconds = refSegments.reduce((n, s) => n + s.end - s.start, 0) / 16000;
      let maxProbabilityDifference = 0;
      for (let i = 0; i < refProbs.length; i++)
        maxProbabilityDifference = Math.max(
          maxProbabilityDifference,
          Math.abs(refProbs[i]! - now.probabilities[i]!),
        );
      const frames = refProbs.length;
      const a = speechFrames(now.segments, frames);
      const b = speechFrames(refSegments, frames);
      let framesDisagreeing = 0;
      for (let c = 0; c < frames; c++) if (a[c] !== b[c]) framesDisagreeing++;
      const r: VadClipComparison = {
        clip,
        audioSeconds: samples.length / 16000,
        referenceSpeechSeconds,
        speechSeconds: now.netSpeechSeconds,
        netSpeechDifferenceSeconds: Math.abs(now.netSpeechSeconds - referenceSpeechSeconds),
        frames,
        framesDisagreeing,
        maxProbabilityDifference,
        engineMs: t1 - t0,
        referenceMs: t2 - t1,
      };
      results.push(r);
      onClip?.(r);
    }
  } finally {
    await Promise.all([engineVad.release(), referenceVad.release()]);
  }
  return results;
}

export function summariseVadComparison(results: VadClipComparison[]) {
  const sum = (f: (r: VadClipComparison) => number) => results.reduce((n, r) => n + f(r), 0);
  const frames = sum((r) => r.frames);
  const audioSeconds = sum((r) => r.audioSeconds);
  const over = results.filter((r) => r.netSpeechDifferenceSeconds > NET_SPEECH_TOLERANCE_SECONDS);
  const frameAgreement = frames > 0 ? 1 - sum((r) => r.framesDisagreeing) / frames : 1;
  return {
    clips: results.length,
    frames,
    frameAgreement,
    minFrameAgreement: MIN_FRAME_AGREEMENT,
    clipsWithFramesDisagreeing: results.filter((r) => r.framesDisagreeing > 0).length,
    netSpeechToleranceSeconds: NET_SPEECH_TOLERANCE_SECONDS,
    clipsOverTolerance: over.length,
    maxNetSpeechDifferenceSeconds: Math.max(0, ...results.map((r) => r.netSpeechDifferenceSeconds)),
    maxProbabilityDifference: Math.max(0, ...results.map((r) => r.maxProbabilityDifference)),
    referenceSpeechSecondsTotal: sum((r) => r.referenceSpeechSeconds),
    speechSecondsTotal: sum((r) => r.speechSeconds),
    audioSecondsTotal: audioSeconds,
    engineMsPerAudioSecond: sum((r) => r.engineMs) / audioSeconds,
    referenceMsPerAudioSecond: sum((r) => r.referenceMs) / audioSeconds,
    passed: over.length === 0 && frameAgreement >= MIN_FRAME_AGREEMENT,
    overTolerance: over,
  };
}

async function main() {
  const args = parseArgs(process.argv.slice(2), {
    name: 'npm run check:vad --',
    description:
      "Compares the engine's VAD with a reference VAD on every dev clip (frames in speech, net speech per clip, time).",
    options: {
      'dataset <dir>': 'dataset root (default $VOXKEY_DATASET_DIR or ../shared/datasets)',
      'every <n>': 'take every n-th dev clip (default 1)',
      'reference <name>':
        'scan (the VAD model before the batched one; default) or op15 (the export and loop before that)',
      'out <file>': 'write the summary and the clips whose decisions differ as JSON',
    },
  });
  const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
  const datasetDir =
    typeof args.dataset === 'string'
      ? userPath(args.dataset)
      : (process.env.VOXKEY_DATASET_DIR ?? resolve(repoRoot, '..', 'shared', 'datasets'));
  const reference: VadReference = args.reference === 'op15' ? 'op15' : 'scan';
  const clips = devClips(datasetDir, num(args.every, 1));
  console.error(`check:vad: ${clips.length} dev clips from ${datasetDir}, reference ${reference}`);
  let done = 0;
  const results = await compareVad(
    datasetDir,
    clips,
    () => {
      if (++done % 200 === 0) console.error(`  ${done}/${clips.length}`);
    },
    reference,
  );
  const summary = {
    command:
      process.argv.length > 2
        ? `npm run check:vad -- ${process.argv.slice(2).join(' ')}`
        : 'npm run check:vad',
    date: new Date().toISOString(),
    engineVad: 'batched',
    reference,
    ...summariseVadComparison(results),
  };
  console.log(
    JSON.stringify({ ...summary, overTolerance: summary.overTolerance.slice(0, 20) }, null, 2),
  );
  if (typeof args.out === 'string') {
    const out = userPath(args.out);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(
      out,
      JSON.stringify(
        {
          ...summary,
          clipsDiffering: results.filter(
            (r) => r.framesDisagreeing > 0 || r.netSpeechDifferenceSeconds > 0,
          ),
        },
        null,
        2,
      ) + '\n',
    );
  }
  process.exitCode = summary.passed ? 0 : 1;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
