/**
 * npm run bench [-- --runs 30 --rss-runs 1000 --models-dir dir --out file.json]
 *
 * Per-stage times in-process (median of --runs), end-to-end file bytes -> decision through the pool
 * (1 worker, sequential), throughput with 1 and 2 workers, peak RSS and RSS over --rss-runs runs.
 * Clips are built from the committed espeak-ng fixtures (concatenated / looped), 16 kHz 16-bit WAV,
 * plus a 5 s 44.1 kHz stereo MP3 (decode + resample path).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEngine, type EngineOptions, type VoiceEngine } from '../engine.js';
import { embedFeatures } from '../embedding.js';
import { fbankCmn } from '../fbank.js';
import { decodeAudio } from '../intake.js';
import { defaultModelsDir, loadManifest, selectModel } from '../manifest.js';
import { openSession, resolveIo } from '../models.js';
import { scoreSpoof } from '../spoof.js';
import { concatSegments, detectSpeech, sileroModelPath } from '../vad.js';
import { decodeWav, encodeWav } from '../wav.js';
import { median, num, parseArgs, percentile, userPath } from './args.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const PKG = resolve(HERE, '..');
const REPO_ROOT = resolve(PKG, '..', '..');
const AUDIO = join(PKG, 'test', 'fixtures', 'audio');

function speechClip(seconds: number): Float32Array {
  const parts = ['alice_1.wav', 'bob_1.wav', 'alice_2.wav'].map((f) => decodeWav(new Uint8Array(readFileSync(join(AUDIO, f)))).samples);
  const out = new Float32Array(Math.round(seconds * 16000));
  let p = 0;
  for (let i = 0; p < out.length; i++) {
    const s = parts[i % parts.length]!;
    const take = Math.min(s.length, out.length - p);
    out.set(s.subarray(0, take), p);
    p += take;
  }
  return out;
}

function mp3Clip(wav: Uint8Array): Uint8Array {
  const dir = mkdtempSync(join(tmpdir(), 'voxkey-bench-'));
  try {
    writeFileSync(join(dir, 'in.wav'), wav);
    execFileSync('ffmpeg', ['-loglevel', 'error', '-y', '-i', join(dir, 'in.wav'), '-ar', '44100', '-ac', '2', '-c:a', 'libmp3lame', '-b:a', '64k', join(dir, 'out.mp3')]);
    return new Uint8Array(readFileSync(join(dir, 'out.mp3')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function timeIt(runs: number, fn: () => Promise<unknown> | unknown): Promise<number> {
  await fn(); // warm-up
  const ts: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    ts.push(performance.now() - t);
  }
  return median(ts);
}

const mb = (b: number) => Math.round((b / 1048576) * 10) / 10;

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const runs = num(args.runs, 30);
  const rssRuns = num(args['rss-runs'], 1000);
  const modelsDir = typeof args['models-dir'] === 'string' ? userPath(args['models-dir']) : defaultModelsDir();
  const engineOpts: EngineOptions = { modelsDir, maxQueue: 4096, taskTimeoutMs: 120_000 };
  if (typeof args['speaker-model'] === 'string') engineOpts.speakerModel = args['speaker-model'];
  if (typeof args['spoof-model'] === 'string') engineOpts.spoofModel = args['spoof-model'];

  const manifest = await loadManifest(join(modelsDir, 'manifest.json'));
  const speakerEntry = selectModel(manifest, 'speaker', modelsDir, engineOpts.speakerModel);
  const spoofEntry = selectModel(manifest, 'spoof', modelsDir, engineOpts.spoofModel);
  const clips = Object.fromEntries([5, 10, 30].map((s) => [`${s}s-wav16k`, encodeWav(speechClip(s), 16000)]));
  clips['5s-mp3-44k-stereo'] = mp3Clip(clips['5s-wav16k']!);
  const b64 = Object.fromEntries(Object.entries(clips).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));

  const loadAtStart = loadavg().map((x) => Math.round(x * 100) / 100);
  console.error(`bench: speaker ${speakerEntry.name}, spoof ${spoofEntry.name}, ${runs} runs per point, ${cpus().length} cores`);
  // Per stage, in this thread, 1 intra-op thread (what one pool worker does).
  const vad = await openSession(sileroModelPath(), 1);
  const speaker = await openSession(join(modelsDir, speakerEntry.file), 1);
  const spoof = await openSession(join(modelsDir, spoofEntry.file), 1);
  const speakerIo = resolveIo(speaker, { inputName: speakerEntry.input.name, outputName: speakerEntry.output.name });
  const spoofIo = resolveIo(spoof, { inputName: spoofEntry.input.name, outputName: spoofEntry.output.name });
  const stages: Record<string, Record<string, number>> = {};
  for (const [name, bytes] of Object.entries(clips)) {
    const decoded = await decodeAudio(bytes);
    const det = await detectSpeech(vad, decoded.samples);
    const speech = concatSegments(decoded.samples, det.segments);
    const s: Record<string, number> = {};
    s.base64DecodeMs = await timeIt(runs, () => Buffer.from(b64[name]!, 'base64'));
    s.decodeAndResampleMs = await timeIt(runs, () => decodeAudio(bytes));
    s.vadMs = await timeIt(runs, () => detectSpeech(vad, decoded.samples));
    s.fbankMs = await timeIt(runs, () => fbankCmn(speech));
    const feats = fbankCmn(speech);
    s.embedModelMs = await timeIt(runs, () => embedFeatures(speaker, speakerIo, feats.data, feats.frames));
    s.spoofMs = await timeIt(runs, () => scoreSpoof(spoof, spoofIo, decoded.samples));
    s.netSpeechSeconds = det.netSpeechSeconds;
    stages[name] = s;
    console.error(`  stages ${name}: ${JSON.stringify(s, (_, v) => (typeof v === 'number' ? Math.round(v * 10) / 10 : v))}`);
  }
  await Promise.all([vad.release(), speaker.release(), spoof.release()]);

  // End to end through the pool: file bytes -> verify decision, one request at a time.
  const e2e: Record<string, { medianMs: number; p90Ms: number; rtf: number }> = {};
  const one = await createEngine({ ...engineOpts, threads: 1 });
  const { voiceprint } = await one.enrol(clips['10s-wav16k']!);
  for (const name of Object.keys(clips)) {
    const ts: number[] = [];
    await one.verify(clips[name]!, voiceprint);
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      await one.verify(clips[name]!, voiceprint);
      ts.push(performance.now() - t);
    }
    const seconds = Number(name.split('s-')[0]);
    e2e[name] = { medianMs: median(ts), p90Ms: percentile(ts, 0.9), rtf: median(ts) / 1000 / seconds };
    console.error(`  end-to-end ${name}: median ${median(ts).toFixed(1)} ms`);
  }
  const enrolMs = await timeIt(Math.min(runs, 10), () => one.enrol(clips['10s-wav16k']!));
  await one.close();

  // Throughput: a burst of 5 s verifications with 1 and 2 workers.
  const throughput: Record<string, number> = {};
  for (const threads of [1, 2]) {
    const engine = await createEngine({ ...engineOpts, threads });
    const n = Math.max(20, runs * 2);
    const t = performance.now();
    await Promise.all(Array.from({ length: n }, () => engine.verify(clips['5s-wav16k']!, voiceprint)));
    throughput[`${threads}-worker${threads > 1 ? 's' : ''} clips/s`] = n / ((performance.now() - t) / 1000);
    await engine.close();
  }
  console.error(`  throughput ${JSON.stringify(throughput)}`);

  // Memory: RSS over many runs through a 2-worker pool (RSS covers the workers' threads too).
  const engine: VoiceEngine = await createEngine({ ...engineOpts, threads: 2 });
  const rss: { runs: number; rssMb: number }[] = [];
  const gc = (globalThis as { gc?: () => void }).gc;
  const batch = 20;
  for (let done = 0; done < rssRuns; done += batch) {
    await Promise.all(Array.from({ length: Math.min(batch, rssRuns - done) }, () => engine.verify(clips['5s-wav16k']!, voiceprint)));
    if ((done + batch) % 100 === 0 || done + batch >= rssRuns) {
      gc?.();
      rss.push({ runs: Math.min(done + batch, rssRuns), rssMb: mb(process.memoryUsage().rss) });
    }
  }
  await engine.close();
  const peakRssMb = mb(process.resourceUsage().maxRSS * 1024);
  const first = rss.find((r) => r.runs >= 100) ?? rss[0]!;
  const last = rss.at(-1)!;

  const result = {
    command: process.argv.length > 2 ? `npm run bench -- ${process.argv.slice(2).join(' ')}` : 'npm run bench',
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model, availableParallelism: availableParallelism(), node: process.version, loadAverageAtStart: loadAtStart, loadAverageAtEnd: loadavg().map((x) => Math.round(x * 100) / 100) },
    speakerModel: { name: speakerEntry.name, sha256: speakerEntry.sha256 },
    spoofModel: { name: spoofEntry.name, sha256: spoofEntry.sha256 },
    runsPerPoint: runs,
    stagesMedianMs: stages,
    endToEndVerify: e2e,
    enrol10sMedianMs: enrolMs,
    throughput5s: throughput,
    memory: { peakRssMb, rssSamples: rss, rssGrowthMbFrom100ToEnd: Math.round((last.rssMb - first.rssMb) * 10) / 10 },
  };
  const out = typeof args.out === 'string' ? userPath(args.out) : join(REPO_ROOT, 'bench', 'results', `engine-bench-${speakerEntry.name}.json`);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(result, null, 2) + '\n');

  const f = (x: number) => x.toFixed(1);
  console.log(`\nEngine bench: ${speakerEntry.name} + ${spoofEntry.name}, ${cpus().length} cores (${cpus()[0]?.model}), median of ${runs}`);
  console.log('| clip | base64 | decode+resample | VAD | fbank | speaker model | spoof model | end-to-end verify (median / p90) | RTF |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const name of Object.keys(clips)) {
    const s = stages[name]!;
    const e = e2e[name]!;
    console.log(`| ${name} | ${f(s.base64DecodeMs!)} | ${f(s.decodeAndResampleMs!)} | ${f(s.vadMs!)} | ${f(s.fbankMs!)} | ${f(s.embedModelMs!)} | ${f(s.spoofMs!)} | ${f(e.medianMs)} / ${f(e.p90Ms)} ms | ${e.rtf.toFixed(4)} |`);
  }
  console.log(`enrol (10 s, with consistency halves): ${f(enrolMs)} ms median`);
  console.log(`throughput (5 s clips): ${Object.entries(throughput).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ')}`);
  console.log(`load average (1/5/15 min) at start ${loadAtStart.join(' / ')}, at end ${result.machine.loadAverageAtEnd.join(' / ')} (other jobs share these cores)`);
  console.log(`peak RSS ${peakRssMb} MB; RSS after ${first.runs} runs ${first.rssMb} MB, after ${last.runs} runs ${last.rssMb} MB`);
  console.log(`written ${out}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
