/**
 * `npm run bench:api` — request-to-webhook latency of verifications against a real `voxkey serve`.
 *
 *   tsx bench/api.ts [--postgres] [--format wav|mp3] [--samples1 40] [--samples8 80] [--window 20] [--speakers 4] [--audio-checks 40] [--paired 20] [--server-bin other/bin/voxkey.js]
 *
 * Starts a server process (SQLite by default; --postgres: a fresh database on 127.0.0.1:5432),
 * creates an organisation with the CLI, points it at a local webhook receiver, enrols a few speakers
 * from ~5 s Common Voice clips (sent as 16-bit WAV by default, the issue's workload; --format mp3 sends
 * them as stored), then measures from the POST of a verification to the arrival of
 * its webhook: one at a time, 8 at a time, and the sustained verifications per second over a fixed
 * window (closed loop, 16 in flight), and the synchronous audio pre-check of ~5 s clips (POST to 200,
 * one at a time, idle server). Then, in the same run with the server stopped, the engine alone
 * (`createEngine` in this process, the server's default thread count, the same enrolment clips and
 * probes): base64 (decoded here) -> decision one at a time, and sustained with 16 in flight over the same window,
 * so the API path's cost reads as a ratio of two figures taken minutes apart on the same machine.
 * And one at a time, paired (--paired 20, 0 for none): each API verification beside the same probe
 * through an engine in this process, each speaker and clip in both orders, 100 ms apart, so
 * request-to-webhook less the engine's time reads pair by pair (every pair is in the result).
 * Writes bench/results/api-<date>[-postgres].json.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { createEngine, decodeBase64Audio, isEngineError } from '@voxkey/engine';
import {
  type ClipFormat,
  client,
  fiveSecondClips,
  inFormat,
  measureAudioChecks,
  recordingPoster,
  startReceiver,
} from './lib/api.js';
import {
  argValue,
  chooseModels,
  createBenchOrganisation,
  createEnvironment,
  databaseServerCpuSeconds,
  type Dialect,
  hasFlag,
  machine,
  percentile,
  rssMiB,
  startServer,
  summarise,
  threadCpuSeconds,
  today,
  writeResult,
  runBench,
} from './lib/server.js';

const dialect: Dialect = hasFlag('--postgres') ? 'postgres' : 'sqlite';
const SAMPLES_1 = Number(argValue('--samples1', '40'));
const SAMPLES_8 = Number(argValue('--samples8', '80'));
/** Verifications one at a time, each beside the same probe through an engine in this process (0: none). */
const PAIRED = Number(argValue('--paired', '20'));
const PAIR_PAUSE_MS = 100;
const WINDOW_S = Number(argValue('--window', '20'));
const SPEAKERS = Number(argValue('--speakers', '4'));
const SUSTAINED_IN_FLIGHT = Number(argValue('--in-flight', '16'));
const AUDIO_CHECKS = Number(argValue('--audio-checks', '40'));
const FORMAT = argValue('--format', 'wav') as ClipFormat;
/** Another build's bin/voxkey.js (e.g. before a change): the engine-alone reference is this run's either way. */
const SERVER_BIN = argValue('--server-bin') ? path.resolve(argValue('--server-bin')!) : undefined;

async function main() {
  const models = chooseModels();
  const startedAt = new Date().toISOString();
  const machineAtStart = machine();
  console.log(
    `bench:api on ${dialect}, ${FORMAT} recordings; models: ${models.which}; load average ${machineAtStart.loadavg.join(' ')}`,
  );

  const speakers = await inFormat(fiveSecondClips(SPEAKERS * 4, 3), FORMAT);
  // The engine alone before the server starts and again after it stops; the API figures are compared with the mean.
  const engineBefore = await engineAlone(models.dir, speakers);
  console.log(
    `engine alone (before): one at a time p50 ${engineBefore.concurrency1Ms.p50} ms; sustained ${engineBefore.sustained.verificationsPerSecond} verifications/s, CPU ${engineBefore.sustained.cpuPerVerificationMs} ms per verification`,
  );
  const environment = await createEnvironment(dialect, { VOXKEY_MODELS_DIR: models.dir });
  const receiver = await startReceiver();
  const server = await startServer(environment, {}, 'api', [], SERVER_BIN);
  try {
    const { orgId, bearer } = await createBenchOrganisation(
      environment,
      'Bench',
      receiver.url,
      SERVER_BIN,
    );
    const call = client(`${server.baseUrl}/v1`, bearer);
    const post = recordingPoster(`${server.baseUrl}/v1`, bearer);
    const rssStart = rssMiB(server.pid);

    // Enrol speakers until SPEAKERS are enrolled; a clip with too little speech (Common Voice has
    // long silences) fails enrolment, and that speaker is skipped.
    const enrolled: Array<{ externalId: string; enrolment: string; probes: string[] }> = [];
    let failedEnrolments = 0;
    for (const [i, s] of speakers.entries()) {
      if (enrolled.length >= SPEAKERS) break;
      const requestUuid = randomUUID();
      const externalId = `speaker-${i}-${s.speaker}`;
      const res = await call('POST', `/organisations/${orgId}/enrollments`, {
        voice_data: s.clips[0]!.base64,
        request_uuid: requestUuid,
        external_id: externalId,
      });
      if (res.status !== 202)
        throw new Error(`enrolment: ${res.status} ${JSON.stringify(res.body)}`);
      const hook = await receiver.waitFor(requestUuid);
      if (hook.body.status !== 'enrolled') {
        failedEnrolments++;
        continue;
      }
      enrolled.push({
        externalId,
        enrolment: s.clips[0]!.base64,
        probes: s.clips.slice(1).map((c) => c.base64),
      });
    }
    if (enrolled.length < SPEAKERS)
      throw new Error(`only ${enrolled.length} speakers could be enrolled`);
    console.log(`enrolled ${enrolled.length} speakers`);

    let counter = 0;
    const nextProbe = () => {
      const who = enrolled[counter % enrolled.length]!;
      const probe = who.probes[counter % who.probes.length]!;
      counter++;
      return { who, probe };
    };
    const results: Record<string, number> = {};
    /** One verification: POST -> 202 -> webhook. Returns [request-to-webhook, request-to-202] in ms. */
    async function verifyOnce(
      pick: { who: (typeof enrolled)[number]; probe: string } = nextProbe(),
    ): Promise<{
      total: number;
      accept: number;
      serverLatency: number;
      result: string;
    }> {
      const { who, probe } = pick;
      const requestUuid = randomUUID();
      const t0 = performance.now();
      const res = await post(`/organisations/${orgId}/verifications`, probe, {
        request_uuid: requestUuid,
        external_id: who.externalId,
      });
      const accept = performance.now() - t0;
      if (res.status !== 202)
        throw new Error(`verification: ${res.status} ${JSON.stringify(res.body)}`);
      const hook = await receiver.waitFor(requestUuid);
      results[hook.body.result] = (results[hook.body.result] ?? 0) + 1;
      return {
        total: hook.at - t0,
        accept,
        serverLatency: hook.body.latency_ms,
        result: hook.body.result,
      };
    }

    async function atConcurrency(concurrency: number, samples: number) {
      const totals: number[] = [];
      const accepts: number[] = [];
      const serverLatencies: number[] = [];
      let remaining = samples;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (remaining > 0) {
            remaining--;
            const r = await verifyOnce();
            totals.push(r.total);
            accepts.push(r.accept);
            serverLatencies.push(r.serverLatency);
          }
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      return {
        concurrency,
        requestToWebhookMs: summarise(totals),
        requestTo202Ms: summarise(accepts),
        webhookLatencyMsField: summarise(serverLatencies),
        throughputPerSecond: Math.round((samples / seconds) * 100) / 100,
      };
    }

    // The pre-check first, on an idle server: it is what a person waits for before recording again.
    const checkClips = speakers.flatMap((s) => s.clips.map((c) => c.base64));
    const checks = await measureAudioChecks(call, orgId, checkClips, AUDIO_CHECKS);
    const audioCheck = {
      clipSeconds: '4.5-5.5',
      requestTo200Ms: summarise(checks.durationsMs),
      usable: checks.usable,
      targetMs: 100,
    };
    console.log(
      `audio check (5 s clips): p50 ${audioCheck.requestTo200Ms.p50} ms, p95 ${audioCheck.requestTo200Ms.p95} ms (n=${audioCheck.requestTo200Ms.n}, usable ${checks.usable})`,
    );

    // Warm-up: the first inferences load the models into every worker thread.
    for (let i = 0; i < 4; i++) await verifyOnce();

    // The server's CPU by thread: the main thread (HTTP, database, sealing, webhooks) apart from the engine's threads.
    const cpuPerVerification = (
      before: ReturnType<typeof threadCpuSeconds>,
      verifications: number,
    ) => {
      const after = threadCpuSeconds(server.pid);
      if (!before || !after || verifications === 0) return null;
      const ms = (seconds: number) => Math.round(((seconds * 1000) / verifications) * 10) / 10;
      return {
        mainThreadMs: ms(after.main - before.main),
        otherThreadsMs: ms(after.others - before.others),
      };
    };
    const cpuBeforeC1 = threadCpuSeconds(server.pid);
    const c1 = await atConcurrency(1, SAMPLES_1);
    const c1Cpu = cpuPerVerification(cpuBeforeC1, SAMPLES_1);
    console.log(
      `concurrency 1: request-to-webhook p50 ${c1.requestToWebhookMs.p50} ms, p95 ${c1.requestToWebhookMs.p95} ms (n=${c1.requestToWebhookMs.n})`,
    );
    const c8 = await atConcurrency(8, SAMPLES_8);
    console.log(
      `concurrency 8: request-to-webhook p50 ${c8.requestToWebhookMs.p50} ms, p95 ${c8.requestToWebhookMs.p95} ms (n=${c8.requestToWebhookMs.n})`,
    );

    // Sustained: keep SUSTAINED_IN_FLIGHT verifications in flight for the window; count webhooks that arrive in it.
    const cpuBeforeWindow = threadCpuSeconds(server.pid);
    const benchCpuBeforeWindow = process.cpuUsage();
    const databaseCpuBeforeWindow = dialect === 'postgres' ? databaseServerCpuSeconds() : null;
    const windowStart = performance.now();
    const windowEnd = windowStart + WINDOW_S * 1000;
    let completedInWindow = 0;
    let accepted = 0;
    const sustainedTotals: number[] = [];
    await Promise.all(
      Array.from({ length: SUSTAINED_IN_FLIGHT }, async () => {
        while (performance.now() < windowEnd) {
          const r = await verifyOnce();
          accepted++;
          if (performance.now() <= windowEnd) {
            completedInWindow++;
            sustainedTotals.push(r.total);
          }
        }
      }),
    );
    const sustainedCpu = cpuPerVerification(cpuBeforeWindow, accepted);
    const benchClientMs = cpuMsPerVerification(process.cpuUsage(benchCpuBeforeWindow), accepted);
    const databaseServerMs =
      databaseCpuBeforeWindow === null || accepted === 0
        ? null
        : Math.round(
            (((databaseServerCpuSeconds() - databaseCpuBeforeWindow) * 1000) / accepted) * 10,
          ) / 10;
    const sustained = {
      windowSeconds: WINDOW_S,
      inFlight: SUSTAINED_IN_FLIGHT,
      completedInWindow,
      verificationsPerSecond: Math.round((completedInWindow / WINDOW_S) * 100) / 100,
      requestToWebhookMs: summarise(sustainedTotals),
      serverCpuPerVerification: sustainedCpu,
      /** This process's CPU (the client sending requests and the webhook receiver): it shares the cores. */
      benchProcessCpuPerVerificationMs: benchClientMs,
      /** PostgreSQL only: the CPU of every PostgreSQL server process on this machine, per verification. */
      databaseServerCpuPerVerificationMs: databaseServerMs,
    };
    console.log(
      `server CPU per verification (main thread / other threads): one at a time ${c1Cpu?.mainThreadMs} / ${c1Cpu?.otherThreadsMs} ms; sustained ${sustainedCpu?.mainThreadMs} / ${sustainedCpu?.otherThreadsMs} ms; this process (client and receiver) ${benchClientMs} ms${databaseServerMs === null ? '' : `; PostgreSQL ${databaseServerMs} ms`}`,
    );
    console.log(
      `sustained (${SUSTAINED_IN_FLIGHT} in flight, ${WINDOW_S} s): ${sustained.verificationsPerSecond} verifications/s, p50 ${sustained.requestToWebhookMs.p50} ms`,
    );

    // One at a time, each API verification beside the same probe through an engine in this process,
    // alternating which goes first: the difference is read pair by pair, not between two runs minutes apart.
    // A failure here (this process's engine) must not cost the measurements above.
    const paired =
      PAIRED > 0
        ? await pairedWithEngine(models.dir, enrolled, verifyOnce).catch((err: unknown) => {
            console.error('paired measurement failed:', err);
            return null;
          })
        : null;
    if (paired)
      console.log(
        `paired one at a time (n=${paired.n}): request-to-webhook p50 ${paired.requestToWebhookMs.p50} ms, engine p50 ${paired.engineMs.p50} ms, difference p50 ${paired.differenceMs.p50} ms (p25 ${paired.differenceMs.p25}, p75 ${paired.differenceMs.p75})`,
      );

    const report = {
      benchmark: 'api',
      startedAt,
      finishedAt: new Date().toISOString(),
      command: `npm run bench:api -- ${process.argv.slice(2).join(' ')}`,
      serverBin: SERVER_BIN ?? 'this build',
      dialect,
      models,
      machine: { ...machineAtStart, loadavgAtEnd: machine().loadavg },
      server: {
        env: {
          NODE_ENV: 'development',
          RATE_LIMIT_ENABLED: 'false',
          LOG_LEVEL: 'info (to a file)',
          ENGINE_THREADS: 'default (cores)',
          ENGINE_INTRA_OP_THREADS: '1',
        },
        rssMiB: { start: rssStart, end: rssMiB(server.pid) },
      },
      recordings: {
        corpus:
          FORMAT === 'wav'
            ? 'commonvoice, decoded and sent as 16 kHz mono 16-bit WAV'
            : 'commonvoice (MP3, 16 kHz mono, 24 kbit/s)',
        format: FORMAT,
        meanBase64Bytes: Math.round(
          speakers.flatMap((s) => s.clips).reduce((sum, c) => sum + c.base64.length, 0) /
            speakers.flatMap((s) => s.clips).length,
        ),
        durationSeconds: '4.5-5.5',
        speakers: enrolled.length,
        failedEnrolments,
      },
      concurrency1: { ...c1, serverCpuPerVerification: c1Cpu },
      concurrency8: c8,
      pairedConcurrency1: paired,
      sustained,
      audioCheck,
      verificationResults: results,
      webhooksReceived: receiver.count,
    };
    await server.stop();
    const engineAfter = await engineAlone(models.dir, speakers);
    const engineOnly = {
      before: engineBefore,
      after: engineAfter,
      concurrency1Ms: {
        p50:
          Math.round(
            ((engineBefore.concurrency1Ms.p50 + engineAfter.concurrency1Ms.p50) / 2) * 10,
          ) / 10,
      },
      sustained: {
        verificationsPerSecond:
          Math.round(
            ((engineBefore.sustained.verificationsPerSecond +
              engineAfter.sustained.verificationsPerSecond) /
              2) *
              100,
          ) / 100,
      },
    };
    console.log(
      `engine alone (mean of before and after): one at a time p50 ${engineOnly.concurrency1Ms.p50} ms; sustained ${engineOnly.sustained.verificationsPerSecond} verifications/s; ` +
        `API / engine: ${Math.round((sustained.verificationsPerSecond / engineOnly.sustained.verificationsPerSecond) * 100)} % throughput, ` +
        `request-to-webhook p50 - engine p50 = ${Math.round((c1.requestToWebhookMs.p50 - engineOnly.concurrency1Ms.p50) * 10) / 10} ms`,
    );
    writeResult(
      `api-${today()}${dialect === 'postgres' ? '-postgres' : ''}${argValue('--label') ? `-${argValue('--label')}` : ''}`,
      {
        ...report,
        machine: { ...machineAtStart, loadavgAtEnd: machine().loadavg },
        engineOnly,
        apiVsEngine: {
          sustainedThroughputRatio:
            Math.round(
              (sustained.verificationsPerSecond / engineOnly.sustained.verificationsPerSecond) *
                1000,
            ) / 1000,
          concurrency1P50DifferenceMs:
            Math.round((c1.requestToWebhookMs.p50 - engineOnly.concurrency1Ms.p50) * 10) / 10,
          /** The median of the paired differences (request to webhook less the same probe's engine time). */
          pairedConcurrency1DifferenceMs: paired?.differenceMs.p50 ?? null,
        },
      },
    );
  } finally {
    await server.stop();
    await receiver.close();
    await environment.cleanup();
  }
}

/** The engine alone, in this process: the same clips, the server's default thread count, no HTTP, queue or database. */
async function engineAlone(modelsDir: string, speakers: ReturnType<typeof fiveSecondClips>) {
  const engine = await createEngine({ modelsDir });
  try {
    const voiceprints: Array<{
      voiceprint: Awaited<ReturnType<typeof engine.enrol>>['voiceprint'];
      probes: string[];
    }> = [];
    for (const s of speakers) {
      if (voiceprints.length >= SPEAKERS) break;
      const enrolment = await engine.enrol(decodeBase64Audio(s.clips[0]!.base64)).catch(() => null); // too little speech: next speaker, as through the API
      if (enrolment)
        voiceprints.push({
          voiceprint: enrolment.voiceprint,
          probes: s.clips.slice(1).map((c) => c.base64),
        });
    }
    let counter = 0;
    const verifyOnce = async () => {
      const who = voiceprints[counter % voiceprints.length]!;
      const probe = who.probes[counter % who.probes.length]!;
      counter++;
      const t0 = performance.now();
      await engine.verify(decodeBase64Audio(probe), who.voiceprint); // base64 to decision, as the server's worker does
      return performance.now() - t0;
    };
    for (let i = 0; i < 4; i++) await verifyOnce();
    const one: number[] = [];
    for (let i = 0; i < SAMPLES_1; i++) one.push(await verifyOnce());
    const cpuBefore = process.cpuUsage();
    const windowEnd = performance.now() + WINDOW_S * 1000;
    let completed = 0;
    let started = 0;
    await Promise.all(
      Array.from({ length: SUSTAINED_IN_FLIGHT }, async () => {
        while (performance.now() < windowEnd) {
          started++;
          await verifyOnce();
          if (performance.now() <= windowEnd) completed++;
        }
      }),
    );
    return {
      threads: engine.stats().threads,
      concurrency1Ms: summarise(one),
      sustained: {
        windowSeconds: WINDOW_S,
        inFlight: SUSTAINED_IN_FLIGHT,
        completedInWindow: completed,
        verificationsPerSecond: Math.round((completed / WINDOW_S) * 100) / 100,
        /** This process's CPU, all threads: the engine's workers and the base64 decoding here. */
        cpuPerVerificationMs: cpuMsPerVerification(process.cpuUsage(cpuBefore), started),
      },
    };
  } finally {
    await engine.close();
  }
}

/**
 * `PAIRED` verifications one at a time through the API (request to webhook), each beside the same
 * probe decided by an engine in this process (base64 to decision, as the server's worker does), the
 * order alternating. The server's engine pool and this one are idle while the other runs.
 */
async function pairedWithEngine(
  modelsDir: string,
  enrolled: Array<{ externalId: string; enrolment: string; probes: string[] }>,
  viaApi: (pick: { who: (typeof enrolled)[number]; probe: string }) => Promise<{ total: number }>,
) {
  const engine = await createEngine({ modelsDir });
  try {
    const voiceprints = new Map<string, Awaited<ReturnType<typeof engine.enrol>>['voiceprint']>();
    for (const who of enrolled)
      voiceprints.set(
        who.externalId,
        (await engine.enrol(decodeBase64Audio(who.enrolment))).voiceprint,
      );
    const viaEngine = async (who: (typeof enrolled)[number], probe: string) => {
      const t0 = performance.now();
      // A probe with too little speech ends early (the server reports it inconclusive): kept apart.
      const decided = await engine
        .verify(decodeBase64Audio(probe), voiceprints.get(who.externalId)!)
        .then(() => true)
        .catch((err: unknown) => {
          if (!isEngineError(err) || err.category !== 'speech_quality') throw err;
          return false;
        });
      return { ms: performance.now() - t0, decided };
    };
    const pause = () => new Promise((resolve) => setTimeout(resolve, PAIR_PAUSE_MS));
    const pairs: Array<{ apiFirst: boolean; apiMs: number; engineMs: number }> = [];
    let undecided = 0;
    for (let i = -2; i < PAIRED; i++) {
      // Each speaker and clip is measured in both orders: the order flips every round of speakers,
      // the clip every second round.
      const round = Math.floor((i + 2) / enrolled.length);
      const who = enrolled[(i + 2) % enrolled.length]!;
      const probe = who.probes[Math.floor(round / 2) % who.probes.length]!;
      const apiFirst = round % 2 === 0;
      let apiMs: number;
      let alone: { ms: number; decided: boolean };
      if (apiFirst) {
        apiMs = (await viaApi({ who, probe })).total;
        await pause(); // the server records the delivery after the webhook arrives
        alone = await viaEngine(who, probe);
      } else {
        alone = await viaEngine(who, probe);
        await pause();
        apiMs = (await viaApi({ who, probe })).total;
      }
      await pause();
      if (i < 0) continue; // warm-up of this process's engine
      if (!alone.decided) {
        undecided++;
        continue;
      }
      const engineMs = alone.ms;
      pairs.push({
        apiFirst,
        apiMs: Math.round(apiMs * 10) / 10,
        engineMs: Math.round(engineMs * 10) / 10,
      });
    }
    const differences = pairs.map((pair) => pair.apiMs - pair.engineMs);
    const sortedDifferences = [...differences].sort((x, y) => x - y);
    const at = (p: number) => Math.round(percentile(sortedDifferences, p) * 10) / 10;
    return {
      n: pairs.length,
      requestToWebhookMs: summarise(pairs.map((pair) => pair.apiMs)),
      engineMs: summarise(pairs.map((pair) => pair.engineMs)),
      differenceMs: { p25: at(25), p50: at(50), p75: at(75) },
      /** Pairs left out: the probe had too little speech to decide (both sides stop early). */
      undecided,
      pairs,
    };
  } finally {
    await engine.close();
  }
}

function cpuMsPerVerification(usage: NodeJS.CpuUsage, verifications: number): number | null {
  if (verifications === 0) return null;
  return Math.round(((usage.user + usage.system) / 1000 / verifications) * 10) / 10;
}

runBench(main);
