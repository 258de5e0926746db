/**
 * npm run bench [-- --runs 30 --rss-runs 1000 --models-dir dir --out file.json --profile [dir] --vs other/dist/index.js]
 *
 * --profile: runs the bench again under `node --cpu-prof` (one profile per thread, in dir or a temporary
 * folder) and adds a summary (time per stage, top functions by self time) to the result.
 * --vs: also times end-to-end verification against another build of the engine (its dist/index.js,
 * e.g. of the previous commit), interleaved request by request in this run: medians and ratios.
 * --vs-speaker-model / --vs-spoof-model / --vs-vad: the same against this build with other models (any of
 * them together: "today's defaults", e.g. `--vs-speaker-model voxkey-speaker-v4 --vs-spoof-model
 * voxkey-spoof-v4 --vs-vad scan`), plus each stage that changes timed in alternation with its counterpart.
 * The result records the machine's load (load averages sampled through the run, and the share of CPU
 * time the whole machine spent busy and at nice > 0, i.e. training jobs) so a noisy run shows.
 *
 * Per-stage times in-process (median of --runs), end-to-end file bytes -> decision through the pool
 * (1 worker, sequential), throughput with 1 and 2 workers, peak RSS and RSS over --rss-runs runs.
 * Clips are built from the committed espeak-ng fixtures (concatenated / looped), 16 kHz 16-bit WAV,
 * plus a 5 s 44.1 kHz stereo MP3 (decode + resample path).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { fileURLToPath } from 'node:url';
import { createEngine, type EngineOptions, type VoiceEngine } from '../runtime/engine.js';
import { embedFeatures } from '../models/embedding.js';
import { fbankCmn } from '../features/fbank.js';
import { decodeAudio } from '../audio/intake.js';
import {
  defaultModelsDir,
  loadManifest,
  selectModel,
  speakerInputScale,
  spoofEncoderStates,
  resolveSpoofEncoder,
  spoofFusion,
  spoofInput,
  type ModelEntry,
} from '../models/manifest.js';
import { openSession, resolveIo } from '../models/sessions.js';
import { scoreRecordingSpoof, type SpoofPartner } from '../models/spoof.js';
import { encodeSpeech } from '../models/speech-encoder.js';
import {
  concatSegments,
  detectSpeech,
  sileroModelPath,
  type SileroVariant,
} from '../features/vad.js';
import { decodeWav, encodeWav } from '../audio/wav.js';
import { median, num, parseArgs, percentile, timePaired, userPath } from './args.js';
import { summariseProfiles } from './profile.js';
import { benchPhraseCheck } from './bench-phrase.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const PKG = resolve(HERE, '..');
const REPO_ROOT = resolve(PKG, '..', '..');
const AUDIO = join(PKG, 'test', 'fixtures', 'audio');

function speechClip(seconds: number): Float32Array {
  const parts = ['alice_1.wav', 'bob_1.wav', 'alice_2.wav'].map(
    (f) => decodeWav(new Uint8Array(readFileSync(join(AUDIO, f)))).samples,
  );
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

/**
 * The 5 s speech clip as a typical app uploads it: 44.1 kHz stereo MP3 at 64 kbit/s. Committed, so
 * the bench needs no encoder: made from speechClip(5) by
 * `ffmpeg -i in.wav -ar 44100 -ac 2 -c:a libmp3lame -b:a 64k -map_metadata -1 -fflags +bitexact out.mp3`
 * (ffmpeg 5.1, LAME 3.100).
 */
const mp3Clip = (): Uint8Array =>
  new Uint8Array(readFileSync(join(AUDIO, 'bench_5s_44k_stereo.mp3')));

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
const r2 = (x: number) => Math.round(x * 100) / 100;

/** Machine-wide CPU time split from os.cpus() (all processes, not only this one). */
function cpuTimes() {
  let busy = 0;
  let nice = 0;
  let total = 0;
  for (const c of cpus()) {
    const t = c.times;
    busy += t.user + t.nice + t.sys + t.irq;
    nice += t.nice;
    total += t.user + t.nice + t.sys + t.irq + t.idle;
  }
  return { busy, nice, total };
}

/** Load averages sampled through the run and the machine's busy share, for reading a noisy run. */
function loadRecorder() {
  const samples: { atS: number; load1: number }[] = [];
  const t0 = performance.now();
  const c0 = cpuTimes();
  const own0 = process.cpuUsage();
  const take = () =>
    samples.push({ atS: Math.round((performance.now() - t0) / 1000), load1: r2(loadavg()[0]!) });
  take();
  const timer = setInterval(take, 5000);
  timer.unref();
  return () => {
    clearInterval(timer);
    take();
    const c1 = cpuTimes();
    const own = process.cpuUsage(own0);
    const total = Math.max(1, c1.total - c0.total);
    const wallS = (performance.now() - t0) / 1000;
    return {
      cpus: cpus().length,
      loadAverageSamples: samples,
      loadAverage1mMax: Math.max(...samples.map((x) => x.load1)),
      machineBusyShare: r2((c1.busy - c0.busy) / total),
      machineNiceShare: r2((c1.nice - c0.nice) / total),
      benchProcessCpuSeconds: r2((own.user + own.system) / 1e6),
      wallSeconds: r2(wallS),
    };
  };
}

/** Re-runs this bench under --cpu-prof and folds the profile summary into its result file. */
function runProfiled(args: Record<string, string | true>, out: string): void {
  const dir =
    typeof args.profile === 'string'
      ? userPath(args.profile)
      : mkdtempSync(join(tmpdir(), 'voxkey-bench-profile-'));
  mkdirSync(dir, { recursive: true });
  const drop = new Set(['--profile', '--out']);
  const argv = process.argv
    .slice(2)
    .filter((a, i, all) => !drop.has(a) && !(drop.has(all[i - 1]!) && !a.startsWith('--')));
  console.error(`bench: profiling into ${dir}`);
  const child = spawnSync(
    process.execPath,
    [
      ...process.execArgv,
      '--cpu-prof',
      '--cpu-prof-dir',
      dir,
      process.argv[1]!,
      ...argv,
      '--out',
      out,
    ],
    { stdio: 'inherit' },
  );
  if (child.status !== 0) process.exit(child.status ?? 1);
  const profiles = summariseProfiles(dir);
  const result = JSON.parse(readFileSync(out, 'utf8'));
  result.command = `${result.command} --profile`;
  result.profile = {
    dir,
    note: 'V8 CPU profiles of the whole bench run (all phases), one per thread; stage = inclusive time in that engine function, native onnxruntime time included',
    threads: profiles,
  };
  writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
  for (const p of profiles) {
    if (p.sampledMs - p.idleMs < 100) continue;
    console.log(
      `\nprofile ${p.thread} (${p.file}): ${p.sampledMs - p.idleMs} ms busy of ${p.wallMs} ms`,
    );
    console.log(
      `  stages (inclusive ms): ${Object.entries(p.stagesMs)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
    );
    for (const t of p.topSelf.slice(0, 10))
      console.log(`  ${(t.share * 100).toFixed(1).padStart(5)}%  ${t.ms} ms  ${t.fn}`);
  }
}

/**
 * Peak RSS of a fresh process holding one 2-worker engine with these choices (every model it loads, in both
 * workers) after `verifications` 5 s verifications: comparable between configurations, unlike this process's.
 */
function peakRssOf(choices: Partial<EngineOptions>, verifications: number): number {
  const child = spawnSync(
    process.execPath,
    [process.argv[1]!, '--rss-child', JSON.stringify({ choices, verifications })],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  );
  if (child.status !== 0) throw new Error(`bench: the RSS child failed (${child.status})`);
  return JSON.parse(child.stdout.trim().split('\n').at(-1)!).peakRssMb;
}

async function rssChild(spec: string): Promise<void> {
  const { choices, verifications } = JSON.parse(spec) as {
    choices: Partial<EngineOptions>;
    verifications: number;
  };
  const engine = await createEngine({ ...choices, threads: 2 });
  const clip = encodeWav(speechClip(5), 16000);
  const { voiceprint } = await engine.enrol(encodeWav(speechClip(10), 16000));
  for (let done = 0; done < verifications; done += 2)
    await Promise.all([engine.verify(clip, voiceprint), engine.verify(clip, voiceprint)]);
  await engine.close();
  // getrusage's maxRSS counts the forked copy of the parent before exec; VmHWM is this process image's own peak.
  const status = existsSync('/proc/self/status') ? readFileSync('/proc/self/status', 'utf8') : '';
  const hwm = /VmHWM:\s+(\d+) kB/.exec(status)?.[1];
  const peakKb = hwm ? Number(hwm) : process.resourceUsage().maxRSS;
  console.log(JSON.stringify({ peakRssMb: mb(peakKb * 1024) }));
}

/** End-to-end verify against another build of the engine, alternating A/B per request. */
/** The other side of a side-by-side run: another build of the engine, or this build with another speaker model. */
interface Other {
  label: string;
  create: () => Promise<VoiceEngine>;
}

async function compareWith(
  other: Other,
  engineOpts: EngineOptions,
  clips: Record<string, Uint8Array>,
  runs: number,
) {
  const a = await createEngine({ ...engineOpts, threads: 1 });
  const b = await other.create();
  const comparison: Record<
    string,
    { thisMedianMs: number; otherMedianMs: number; medianRatio: number; pairs: number }
  > = {};
  try {
    const { voiceprint } = await a.enrol(clips['10s-wav16k']!);
    const vb = (await b.enrol(clips['10s-wav16k']!)).voiceprint;
    for (const [name, bytes] of Object.entries(clips)) {
      const paired = await timePaired(
        runs,
        () => a.verify(bytes, voiceprint),
        () => b.verify(bytes, vb),
      );
      comparison[name] = {
        thisMedianMs: r2(paired.aMs),
        otherMedianMs: r2(paired.bMs),
        medianRatio: r2(paired.ratio),
        pairs: runs,
      };
      console.error(
        `  vs ${name}: this ${paired.aMs.toFixed(1)} ms, other ${paired.bMs.toFixed(1)} ms, ratio ${paired.ratio.toFixed(2)}`,
      );
    }
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
  return { other: other.label, endToEndVerify: comparison };
}

async function main() {
  const childAt = process.argv.indexOf('--rss-child');
  if (childAt > 0) return rssChild(process.argv[childAt + 1]!);
  const args = parseArgs(process.argv.slice(2), {
    name: 'npm run bench --',
    description:
      'Engine latency and memory benchmark; writes bench/results/engine-bench-<model>.json.',
    options: {
      'runs <n>': 'timed runs per clip (default 30)',
      'rss-runs <n>': 'runs of the memory-growth check (default 1000)',
      'models-dir <dir>': 'models directory (default ./models)',
      'speaker-model <name>': 'speaker model from the manifest (default: its default)',
      'spoof-model <name>': 'spoof model from the manifest (default: its default)',
      'out <file>': 'result file (default bench/results/engine-bench-<speaker model>.json)',
      'profile [dir]':
        're-run under node --cpu-prof (profiles in dir, default a temporary folder) and add a per-thread summary',
      'vs <index.js>':
        'alternate request by request against another engine build and report medians and ratios',
      'vs-speaker-model <name>':
        'the same, against this build with another speaker model as the default (e.g. the previous one); also times that model alone and its 2-worker throughput',
      'vs-spoof-model <name>':
        'time this spoof model beside the default one, in alternation, per clip (and end to end with the other --vs-* choices, unless --vs is given)',
      'vs-vad <variant>':
        'time this Silero VAD build (scan: the one before batched) beside the engine one, in alternation, per clip (and end to end with the other --vs-* choices)',
    },
  });
  const runs = num(args.runs, 30);
  const stopLoad = loadRecorder();
  const rssRuns = num(args['rss-runs'], 1000);
  const modelsDir =
    typeof args['models-dir'] === 'string' ? userPath(args['models-dir']) : defaultModelsDir();
  const engineOpts: EngineOptions = { modelsDir, maxQueue: 4096, taskTimeoutMs: 120_000 };
  if (typeof args['speaker-model'] === 'string') engineOpts.speakerModel = args['speaker-model'];
  if (typeof args['spoof-model'] === 'string') engineOpts.spoofModel = args['spoof-model'];

  const manifest = await loadManifest(join(modelsDir, 'manifest.json'));
  const speakerEntry = selectModel(manifest, 'speaker', modelsDir, engineOpts.speakerModel);
  const spoofEntry = selectModel(manifest, 'spoof', modelsDir, engineOpts.spoofModel);
  const out =
    typeof args.out === 'string'
      ? userPath(args.out)
      : join(REPO_ROOT, 'bench', 'results', `engine-bench-${speakerEntry.name}.json`);
  if (args.profile !== undefined && !process.execArgv.some((a) => a.startsWith('--cpu-prof'))) {
    runProfiled(args, out);
    return;
  }
  const clips = Object.fromEntries(
    [5, 10, 30].map((s) => [`${s}s-wav16k`, encodeWav(speechClip(s), 16000)]),
  );
  clips['5s-mp3-44k-stereo'] = mp3Clip();
  const b64 = Object.fromEntries(
    Object.entries(clips).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  );

  const loadAtStart = loadavg().map((x) => Math.round(x * 100) / 100);
  console.error(
    `bench: speaker ${speakerEntry.name}, spoof ${spoofEntry.name}, ${runs} runs per point, ${cpus().length} cores`,
  );
  // Per stage, in this thread, 1 intra-op thread (what one pool worker does).
  const vad = await openSession(sileroModelPath(), 1);
  const vsVadVariant =
    typeof args['vs-vad'] === 'string' ? (args['vs-vad'] as SileroVariant) : undefined;
  const vsVad = vsVadVariant ? await openSession(sileroModelPath(vsVadVariant), 1) : undefined;
  const speaker = await openSession(join(modelsDir, speakerEntry.file), 1);
  const spoof = await openSession(join(modelsDir, spoofEntry.file), 1);
  const speakerIo = resolveIo(speaker, {
    inputName: speakerEntry.input.name,
    outputName: speakerEntry.output.name,
  });
  const spoofIoOf = (session: typeof spoof, entry: ModelEntry) => ({
    ...resolveIo(session, { inputName: entry.input.name, outputName: entry.output.name }),
    input: spoofInput(entry),
    encoderStates: spoofEncoderStates(entry) ?? undefined,
  });
  const spoofIo = spoofIoOf(spoof, spoofEntry);
  const vsName =
    typeof args['vs-speaker-model'] === 'string' ? args['vs-speaker-model'] : undefined;
  const openModel = async (kind: 'speaker' | 'spoof', name: string) => {
    const entry = selectModel(manifest, kind, modelsDir, name);
    const session = await openSession(join(modelsDir, entry.file), 1);
    return {
      entry,
      session,
      io: resolveIo(session, { inputName: entry.input.name, outputName: entry.output.name }),
    };
  };
  const vsSpeaker = vsName ? await openModel('speaker', vsName) : undefined;
  const vsSpoofName =
    typeof args['vs-spoof-model'] === 'string' ? args['vs-spoof-model'] : undefined;
  const vsSpoof = vsSpoofName
    ? await openModel('spoof', vsSpoofName).then((m) => ({
        ...m,
        io: spoofIoOf(m.session, m.entry),
      }))
    : undefined;
  // The spoof check as the worker runs it without a phrase: the speech encoder first when the model reads
  // its hidden states (its graph up to the states the model reads, when the manifest has one).
  const openEncoder = async (entry: ModelEntry) => {
    const encoder = resolveSpoofEncoder(manifest, modelsDir, entry);
    return encoder && openSession(join(modelsDir, (encoder.prefix ?? encoder.entry).file), 1);
  };
  const [encoder, vsEncoder] = await Promise.all([
    openEncoder(spoofEntry),
    vsSpoof ? openEncoder(vsSpoof.entry) : null,
  ]);
  // A fused spoof model also runs its partner, which reads the audio itself (manifest.ts SpoofFusion).
  const openPartner = async (entry: ModelEntry): Promise<SpoofPartner | undefined> => {
    const fusion = spoofFusion(entry);
    if (!fusion) return undefined;
    const partner = await openModel('spoof', fusion.with.model);
    return {
      session: partner.session,
      io: spoofIoOf(partner.session, partner.entry),
      fusion,
    };
  };
  const [partner, vsPartner] = await Promise.all([
    openPartner(spoofEntry),
    vsSpoof ? openPartner(vsSpoof.entry) : undefined,
  ]);
  const spoofCheck =
    (
      session: typeof spoof,
      io: typeof spoofIo,
      encoderSession: typeof encoder,
      fusedWith: SpoofPartner | undefined,
    ) =>
    async (samples: Float32Array) =>
      scoreRecordingSpoof(
        session,
        io,
        samples,
        undefined,
        encoderSession ? await encodeSpeech(encoderSession, samples) : undefined,
        fusedWith,
      );
  const stages: Record<string, Record<string, number>> = {};
  for (const [name, bytes] of Object.entries(clips)) {
    const decoded = await decodeAudio(bytes);
    const det = await detectSpeech(vad, decoded.samples);
    const speech = concatSegments(decoded.samples, det.segments);
    const s: Record<string, number> = {};
    s.base64DecodeMs = await timeIt(runs, () => Buffer.from(b64[name]!, 'base64'));
    s.decodeAndResampleMs = await timeIt(runs, () => decodeAudio(bytes));
    const audioSeconds = decoded.samples.length / 16000;
    if (vsVad) {
      const paired = await timePaired(
        runs,
        () => detectSpeech(vad, decoded.samples),
        () => detectSpeech(vsVad, decoded.samples),
      );
      Object.assign(s, {
        vadMs: paired.aMs,
        vsVadMs: paired.bMs,
        vadMsPerAudioSecond: paired.aMs / audioSeconds,
        vsVadMsPerAudioSecond: paired.bMs / audioSeconds,
        vadVsRatio: paired.ratio,
      });
    } else {
      s.vadMs = await timeIt(runs, () => detectSpeech(vad, decoded.samples));
      s.vadMsPerAudioSecond = s.vadMs / audioSeconds;
    }
    s.fbankMs = await timeIt(runs, () => fbankCmn(speech));
    const feats = fbankCmn(speech, speakerInputScale(speakerEntry));
    if (vsSpeaker) {
      const vsFeats = fbankCmn(speech, speakerInputScale(vsSpeaker.entry));
      const paired = await timePaired(
        runs,
        () => embedFeatures(speaker, speakerIo, feats.data, feats.frames),
        () => embedFeatures(vsSpeaker.session, vsSpeaker.io, vsFeats.data, vsFeats.frames),
      );
      Object.assign(s, {
        embedModelMs: paired.aMs,
        vsEmbedModelMs: paired.bMs,
        embedVsRatio: paired.ratio,
      });
    } else {
      s.embedModelMs = await timeIt(runs, () =>
        embedFeatures(speaker, speakerIo, feats.data, feats.frames),
      );
    }
    if (vsSpoof) {
      const paired = await timePaired(
        runs,
        () => spoofCheck(spoof, spoofIo, encoder, partner)(decoded.samples),
        () => spoofCheck(vsSpoof.session, vsSpoof.io, vsEncoder, vsPartner)(decoded.samples),
      );
      Object.assign(s, { spoofMs: paired.aMs, vsSpoofMs: paired.bMs, spoofVsRatio: paired.ratio });
    } else {
      s.spoofMs = await timeIt(runs, () =>
        spoofCheck(spoof, spoofIo, encoder, partner)(decoded.samples),
      );
    }
    s.netSpeechSeconds = det.netSpeechSeconds;
    stages[name] = s;
    console.error(
      `  stages ${name}: ${JSON.stringify(s, (_, v) => (typeof v === 'number' ? Math.round(v * 10) / 10 : v))}`,
    );
  }
  await Promise.all([
    vad.release(),
    speaker.release(),
    spoof.release(),
    vsSpeaker?.session.release(),
    vsSpoof?.session.release(),
    vsVad?.release(),
    encoder?.release(),
    vsEncoder?.release(),
    partner?.session.release(),
    vsPartner?.session.release(),
  ]);

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
    e2e[name] = {
      medianMs: median(ts),
      p90Ms: percentile(ts, 0.9),
      rtf: median(ts) / 1000 / seconds,
    };
    console.error(`  end-to-end ${name}: median ${median(ts).toFixed(1)} ms`);
  }
  const enrolMs = await timeIt(Math.min(runs, 10), () => one.enrol(clips['10s-wav16k']!));
  const phraseCheck = await benchPhraseCheck(one, voiceprint, runs);
  await one.close();
  const otherBuild = typeof args.vs === 'string' ? userPath(args.vs) : undefined;
  const vsChoices = {
    ...(vsName ? { speakerModel: vsName } : {}),
    ...(vsSpoofName ? { spoofModel: vsSpoofName } : {}),
    ...(vsVadVariant ? { vad: vsVadVariant } : {}),
  };
  const other: Other | undefined = otherBuild
    ? {
        label: otherBuild,
        create: async () =>
          (
            (await import(pathToFileURL(resolve(otherBuild)).href)) as typeof import('../index.js')
          ).createEngine({ ...engineOpts, threads: 1 }),
      }
    : Object.keys(vsChoices).length > 0
      ? {
          label: Object.entries(vsChoices)
            .map(([k, v]) => `${k} ${v}`)
            .join(', '),
          create: () => createEngine({ ...engineOpts, ...vsChoices, threads: 1 }),
        }
      : undefined;
  const comparison = other ? await compareWith(other, engineOpts, clips, runs) : undefined;

  // Throughput: a burst of 5 s verifications with 1 and 2 workers.
  const throughput: Record<string, number> = {};
  const vsLabel = other && !otherBuild ? other.label : undefined;
  for (const [threads, choices] of [
    [1, undefined],
    [2, undefined],
    ...(vsLabel ? [[2, vsChoices] as const] : []),
  ] as const) {
    const engine = await createEngine({ ...engineOpts, threads, ...choices });
    const enrolled = choices ? (await engine.enrol(clips['10s-wav16k']!)).voiceprint : voiceprint;
    const n = Math.max(20, runs * 2);
    const t = performance.now();
    await Promise.all(
      Array.from({ length: n }, () => engine.verify(clips['5s-wav16k']!, enrolled)),
    );
    throughput[
      `${threads}-worker${threads > 1 ? 's' : ''} clips/s${choices ? ` (${vsLabel})` : ''}`
    ] = n / ((performance.now() - t) / 1000);
    await engine.close();
  }
  console.error(`  throughput ${JSON.stringify(throughput)}`);

  // Memory: RSS over many runs through a 2-worker pool (RSS covers the workers' threads too).
  const engine: VoiceEngine = await createEngine({ ...engineOpts, threads: 2 });
  const rss: { runs: number; rssMb: number }[] = [];
  const gc = (globalThis as { gc?: () => void }).gc;
  const batch = 20;
  for (let done = 0; done < rssRuns; done += batch) {
    await Promise.all(
      Array.from({ length: Math.min(batch, rssRuns - done) }, () =>
        engine.verify(clips['5s-wav16k']!, voiceprint),
      ),
    );
    if ((done + batch) % 100 === 0 || done + batch >= rssRuns) {
      gc?.();
      rss.push({ runs: Math.min(done + batch, rssRuns), rssMb: mb(process.memoryUsage().rss) });
    }
  }
  await engine.close();
  const peakRssMb = mb(process.resourceUsage().maxRSS * 1024);
  const modelChoices = {
    modelsDir,
    ...(engineOpts.speakerModel ? { speakerModel: engineOpts.speakerModel } : {}),
    ...(engineOpts.spoofModel ? { spoofModel: engineOpts.spoofModel } : {}),
  };
  const enginePeakRssMb = peakRssOf(modelChoices, 40);
  const vsEnginePeakRssMb = vsLabel ? peakRssOf({ ...modelChoices, ...vsChoices }, 40) : undefined;
  const first = rss.find((r) => r.runs >= 100) ?? rss[0]!;
  const last = rss.at(-1)!;

  const result = {
    command:
      process.argv.length > 2
        ? `npm run bench -- ${process.argv.slice(2).join(' ')}`
        : 'npm run bench',
    date: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model,
      availableParallelism: availableParallelism(),
      node: process.version,
      loadAverageAtStart: loadAtStart,
      loadAverageAtEnd: loadavg().map((x) => Math.round(x * 100) / 100),
    },
    speakerModel: { name: speakerEntry.name, sha256: speakerEntry.sha256 },
    spoofModel: { name: spoofEntry.name, sha256: spoofEntry.sha256 },
    ...(vsSpoof
      ? { vsSpoofModel: { name: vsSpoof.entry.name, sha256: vsSpoof.entry.sha256 } }
      : {}),
    ...(vsSpeaker
      ? { vsSpeakerModel: { name: vsSpeaker.entry.name, sha256: vsSpeaker.entry.sha256 } }
      : {}),
    vad: 'batched',
    ...(vsVadVariant ? { vsVad: vsVadVariant } : {}),
    runsPerPoint: runs,
    stagesMedianMs: stages,
    endToEndVerify: e2e,
    enrol10sMedianMs: enrolMs,
    ...(phraseCheck
      ? {
          phraseCheck5s: phraseCheck.sentence,
          ...(phraseCheck.digits ? { phraseCheckDigits: phraseCheck.digits } : {}),
        }
      : {}),
    throughput5s: throughput,
    memory: {
      peakRssMb,
      enginePeakRssMb,
      ...(vsEnginePeakRssMb !== undefined ? { vsEnginePeakRssMb, vsEngine: vsLabel } : {}),
      enginePeakRssNote:
        'a fresh process with one 2-worker engine (all its models in both workers) after 40 verifications; peakRssMb is this whole bench process',
      rssSamples: rss,
      rssGrowthMbFrom100ToEnd: Math.round((last.rssMb - first.rssMb) * 10) / 10,
    },
    ...(comparison ? { comparison } : {}),
  };
  mkdirSync(dirname(out), { recursive: true });
  Object.assign(result.machine, { load: stopLoad() });
  writeFileSync(out, JSON.stringify(result, null, 2) + '\n');

  const f = (x: number) => x.toFixed(1);
  console.log(
    `\nEngine bench: ${speakerEntry.name} + ${spoofEntry.name}, ${cpus().length} cores (${cpus()[0]?.model}), median of ${runs}`,
  );
  console.log(
    '| clip | base64 | decode+resample | VAD | fbank | speaker model | spoof model | end-to-end verify (median / p90) | RTF |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const name of Object.keys(clips)) {
    const s = stages[name]!;
    const e = e2e[name]!;
    console.log(
      `| ${name} | ${f(s.base64DecodeMs!)} | ${f(s.decodeAndResampleMs!)} | ${f(s.vadMs!)} | ${f(s.fbankMs!)} | ${f(s.embedModelMs!)} | ${f(s.spoofMs!)} | ${f(e.medianMs)} / ${f(e.p90Ms)} ms | ${e.rtf.toFixed(4)} |`,
    );
  }
  if (vsSpoof) {
    console.log(
      `\nspoof check, ${spoofEntry.name} vs ${vsSpoof.entry.name} (alternating, one thread): ` +
        Object.entries(stages)
          .map(
            ([n, s]) =>
              `${n} ${f(s.spoofMs!)} vs ${f(s.vsSpoofMs!)} ms (ratio ${s.spoofVsRatio!.toFixed(2)})`,
          )
          .join('; '),
    );
  }
  if (vsSpeaker) {
    console.log(
      `\nspeaker model alone, ${speakerEntry.name} vs ${vsSpeaker.entry.name} (alternating, one thread): ` +
        Object.entries(stages)
          .map(
            ([n, s]) =>
              `${n} ${f(s.embedModelMs!)} vs ${f(s.vsEmbedModelMs!)} ms (ratio ${s.embedVsRatio!.toFixed(2)})`,
          )
          .join('; '),
    );
  }
  if (vsVad) {
    console.log(
      `\nVAD per second of audio, batched vs ${vsVadVariant} (alternating, one thread): ` +
        Object.entries(stages)
          .map(
            ([n, s]) =>
              `${n} ${s.vadMsPerAudioSecond!.toFixed(2)} vs ${s.vsVadMsPerAudioSecond!.toFixed(2)} ms/s (ratio ${s.vadVsRatio!.toFixed(2)})`,
          )
          .join('; '),
    );
  }
  if (comparison) {
    console.log(
      `\nend-to-end verify, this build's defaults vs ${comparison.other} (alternating, one worker): ` +
        Object.entries(comparison.endToEndVerify)
          .map(
            ([n, c]) =>
              `${n} ${f(c.thisMedianMs)} vs ${f(c.otherMedianMs)} ms (ratio ${c.medianRatio.toFixed(2)})`,
          )
          .join('; '),
    );
  }
  console.log(`enrol (10 s, with consistency halves): ${f(enrolMs)} ms median`);
  if (phraseCheck)
    for (const [label, cost] of [
      ['5 s real English sentence, free decoding', phraseCheck.sentence],
      ['5.6 s real digit string, digit challenge', phraseCheck.digits],
    ] as const)
      if (cost)
        console.log(
          `phrase check (${label}, alternating): verify with phrase ${f(cost.withPhraseMs)} ms, without ${f(cost.withoutPhraseMs)} ms, added ${f(cost.addedMs)} ms median (last run: encoder ${f(cost.encoderMs)} ms, decoding ${f(cost.decodeMs)} ms, matched ${cost.matched})`,
        );
  console.log(
    `throughput (5 s clips): ${Object.entries(throughput)
      .map(([k, v]) => `${k} ${v.toFixed(1)}`)
      .join(', ')}`,
  );
  console.log(
    `load average (1/5/15 min) at start ${loadAtStart.join(' / ')}, at end ${result.machine.loadAverageAtEnd.join(' / ')} (other jobs share these cores)`,
  );
  console.log(
    `peak RSS of one 2-worker engine process (every model it loads): ${enginePeakRssMb} MB${vsEnginePeakRssMb !== undefined ? ` vs ${vsEnginePeakRssMb} MB (${vsLabel})` : ''}`,
  );
  console.log(
    `peak RSS (this bench process) ${peakRssMb} MB; RSS after ${first.runs} runs ${first.rssMb} MB, after ${last.runs} runs ${last.rssMb} MB`,
  );
  console.log(`written ${out}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
