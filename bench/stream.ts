/**
 * `npm run bench:stream` — real-time verification over WebSocket beside the posted path, in one run
 * against one `voxkey serve`.
 *
 *   tsx bench/stream.ts [--postgres] [--samples1 8] [--samples8 16] [--speakers 2] [--clips-per-stream 1] [--label x]
 *
 * Enrols a few speakers from ~5 s Common Voice clips, then for each probe (`--clips-per-stream`
 * clips of one speaker, joined, so that a longer stream gives the early-decision probes audio to work on):
 * - streamed: PCM (the clip decoded here) in 100 ms frames paced in real time, then `end`;
 *   measures the time from the last audio frame to the `result` message (a stream the server
 *   decided early, before its last frame, counts as 0 and is counted apart), and from the first
 *   frame to the first `progress` message; and the server's CPU time (all its threads, the jobs of
 *   the decisions included) over the seconds of audio streamed, while only streams run;
 * - posted: POST .../verifications with the same clip, to the arrival of its webhook (the whole
 *   recording is its "last frame").
 * Each at 1 and 8 concurrent requests. Writes bench/results/stream-<date>[-postgres].json.
 */
import { randomUUID } from 'node:crypto';
import { decodeAudio } from '@voxkey/engine/dsp';
import { WebSocket } from 'ws';
import { client, fiveSecondClips, startReceiver } from './lib/api.js';
import {
  argValue,
  chooseModels,
  createBenchOrganisation,
  cpuSeconds,
  createEnvironment,
  type Dialect,
  hasFlag,
  machine,
  rssMiB,
  runBench,
  startServer,
  summarise,
  today,
  writeResult,
} from './lib/server.js';

const dialect: Dialect = hasFlag('--postgres') ? 'postgres' : 'sqlite';
const SAMPLES_1 = Number(argValue('--samples1', '8'));
const SAMPLES_8 = Number(argValue('--samples8', '16'));
const SPEAKERS = Number(argValue('--speakers', '2'));
const CLIPS_PER_STREAM = Number(argValue('--clips-per-stream', '1'));
const LABEL = argValue('--label', '');
const FRAME_S = 0.1;

interface Probe {
  externalId: string;
  base64: string;
  pcm: Buffer;
}

async function main() {
  const models = chooseModels();
  const startedAt = new Date().toISOString();
  const machineAtStart = machine();
  console.log(
    `bench:stream on ${dialect}; models: ${models.which}; load average ${machineAtStart.loadavg.join(' ')}`,
  );
  const speakers = fiveSecondClips(SPEAKERS * 4, 2 + CLIPS_PER_STREAM);
  const environment = await createEnvironment(dialect, {
    VOXKEY_MODELS_DIR: models.dir,
    STREAM_MAX_PER_ORG: '50',
  });
  const receiver = await startReceiver();
  const server = await startServer(environment, {}, 'stream');
  try {
    const { orgId, bearer } = await createBenchOrganisation(environment, 'Bench', receiver.url);
    const call = client(`${server.baseUrl}/v1`, bearer);
    const streamUrl = `${server.baseUrl.replace('http:', 'ws:')}/v1/organisations/${orgId}/verifications/stream`;

    const probes: Probe[] = [];
    const clipsPerSpeaker = 2 + CLIPS_PER_STREAM;
    for (const [i, s] of speakers.entries()) {
      if (probes.length >= SPEAKERS * 2) break;
      const requestUuid = randomUUID();
      const externalId = `speaker-${i}-${s.speaker}`;
      const res = await call('POST', `/organisations/${orgId}/enrollments`, {
        voice_data: s.clips[0]!.base64,
        request_uuid: requestUuid,
        external_id: externalId,
      });
      if (res.status !== 202)
        throw new Error(`enrolment: ${res.status} ${JSON.stringify(res.body)}`);
      if ((await receiver.waitFor(requestUuid)).body.status !== 'enrolled') continue;
      for (let first = 1; first + CLIPS_PER_STREAM <= clipsPerSpeaker; first += CLIPS_PER_STREAM) {
        const clips = s.clips.slice(first, first + CLIPS_PER_STREAM);
        const parts: Buffer[] = [];
        for (const clip of clips) {
          const decoded = await decodeAudio(Buffer.from(clip.base64, 'base64'));
          const pcm = Buffer.alloc(decoded.samples.length * 2);
          decoded.samples.forEach((v, j) =>
            pcm.writeInt16LE(Math.round(Math.max(-1, Math.min(1, v)) * 32767), j * 2),
          );
          parts.push(pcm);
        }
        // Posted: the first clip (a posted recording is one file); streamed: all of them joined.
        probes.push({ externalId, base64: clips[0]!.base64, pcm: Buffer.concat(parts) });
      }
    }
    if (probes.length === 0) throw new Error('no speaker could be enrolled');
    console.log(
      `${probes.length} probes of ${new Set(probes.map((p) => p.externalId)).size} enrolled speakers`,
    );
    let counter = 0;
    const next = () => probes[counter++ % probes.length]!;

    async function postOnce() {
      const probe = next();
      const requestUuid = randomUUID();
      const t0 = performance.now();
      const res = await call('POST', `/organisations/${orgId}/verifications`, {
        voice_data: probe.base64,
        request_uuid: requestUuid,
        external_id: probe.externalId,
      });
      if (res.status !== 202)
        throw new Error(`verification: ${res.status} ${JSON.stringify(res.body)}`);
      const hook = await receiver.waitFor(requestUuid);
      return { lastFrameToResultMs: hook.at - t0, result: hook.body.result as string };
    }

    function streamOnce(): Promise<{
      lastFrameToResultMs: number;
      firstFrameToProgressMs: number;
      early: boolean;
      result: string;
      secondsSent: number;
    }> {
      const probe = next();
      return new Promise((resolve, reject) => {
        const ws = new WebSocket(streamUrl, ['voxkey.v1', `bearer.${bearer}`]);
        let firstFrameAt = 0;
        let firstProgressAt = 0;
        let lastFrameAt = 0;
        let bytesSent = 0;
        ws.on('error', reject);
        ws.on('message', (data) => {
          const message = JSON.parse(data.toString());
          if (message.type === 'progress' && !firstProgressAt) firstProgressAt = performance.now();
          if (message.type === 'error') reject(new Error(JSON.stringify(message)));
          if (message.type === 'result') {
            const at = performance.now();
            const early = lastFrameAt === 0;
            resolve({
              lastFrameToResultMs: early ? 0 : at - lastFrameAt,
              firstFrameToProgressMs: firstProgressAt - firstFrameAt,
              early,
              result: message.result,
              secondsSent: bytesSent / 2 / 16000,
            });
          }
        });
        ws.on('open', async () => {
          ws.send(
            JSON.stringify({
              type: 'start',
              external_id: probe.externalId,
              request_uuid: randomUUID(),
              format: 'pcm_s16le',
              sample_rate: 16000,
            }),
          );
          const frameBytes = Math.round(FRAME_S * 16000) * 2;
          const t0 = performance.now();
          for (let offset = 0, i = 0; offset < probe.pcm.length; offset += frameBytes, i++) {
            if (ws.readyState !== WebSocket.OPEN) return;
            // Real time: frame i leaves at i x 100 ms after the first.
            const wait = t0 + i * FRAME_S * 1000 - performance.now();
            if (wait > 0) await new Promise((r) => setTimeout(r, wait));
            if (ws.readyState !== WebSocket.OPEN) return;
            const frame = probe.pcm.subarray(offset, offset + frameBytes);
            ws.send(frame);
            bytesSent += frame.length;
            if (!firstFrameAt) firstFrameAt = performance.now();
          }
          lastFrameAt = performance.now();
          ws.send(JSON.stringify({ type: 'end' }));
        });
      });
    }

    async function atConcurrency<T>(
      concurrency: number,
      samples: number,
      once: () => Promise<T>,
    ): Promise<T[]> {
      const out: T[] = [];
      let remaining = samples;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (remaining > 0) {
            remaining--;
            out.push(await once());
          }
        }),
      );
      return out;
    }

    // Warm-up: models into the worker threads.
    for (let i = 0; i < 2; i++) await postOnce();
    const rssStart = rssMiB(server.pid);
    const report: Record<string, unknown> = {};
    for (const concurrency of [1, 8]) {
      const samples = concurrency === 1 ? SAMPLES_1 : SAMPLES_8;
      const posted = await atConcurrency(concurrency, samples, postOnce);
      const cpuBefore = cpuSeconds(server.pid)!;
      const streamed = await atConcurrency(concurrency, samples, streamOnce);
      const streamCpuSeconds = cpuSeconds(server.pid)! - cpuBefore;
      const secondsStreamed = streamed.reduce((sum, s) => sum + s.secondsSent, 0);
      const decidedAtEnd = streamed.filter((s) => !s.early);
      report[`concurrency${concurrency}`] = {
        posted: {
          requestToWebhookMs: summarise(posted.map((p) => p.lastFrameToResultMs)),
          results: tally(posted.map((p) => p.result)),
        },
        streamed: {
          lastFrameToResultMs: summarise(decidedAtEnd.map((s) => s.lastFrameToResultMs)),
          decidedBeforeLastFrame: streamed.length - decidedAtEnd.length,
          firstFrameToFirstProgressMs: summarise(streamed.map((s) => s.firstFrameToProgressMs)),
          results: tally(streamed.map((s) => s.result)),
          secondsStreamed: Math.round(secondsStreamed * 10) / 10,
          serverCpuSeconds: Math.round(streamCpuSeconds * 100) / 100,
          serverCpuMsPerStreamedSecond: Math.round((streamCpuSeconds / secondsStreamed) * 1000),
        },
      };
      const r = report[`concurrency${concurrency}`] as any;
      console.log(
        `concurrency ${concurrency}: posted request-to-webhook p50 ${r.posted.requestToWebhookMs.p50} ms p95 ${r.posted.requestToWebhookMs.p95}; ` +
          `streamed last-frame-to-result p50 ${r.streamed.lastFrameToResultMs.p50} ms p95 ${r.streamed.lastFrameToResultMs.p95} (early ${r.streamed.decidedBeforeLastFrame}); ` +
          `first frame to progress p50 ${r.streamed.firstFrameToFirstProgressMs.p50} ms; ` +
          `server CPU ${r.streamed.serverCpuMsPerStreamedSecond} ms per streamed second (${r.streamed.secondsStreamed} s streamed)`,
      );
    }
    writeResult(
      `stream-${today()}${dialect === 'postgres' ? '-postgres' : ''}${LABEL && `-${LABEL}`}`,
      {
        benchmark: 'stream',
        dialect,
        startedAt,
        models: models.which,
        probes: probes.length,
        clipsPerStream: CLIPS_PER_STREAM,
        frameSeconds: FRAME_S,
        pacing: 'real time',
        ...report,
        serverRssMiB: { afterWarmup: rssStart, end: rssMiB(server.pid) },
        machine: { atStart: machineAtStart, atEnd: machine() },
      },
    );
  } finally {
    await server.stop();
    await receiver.close();
    await environment.cleanup();
  }
}

function tally(values: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

runBench(main);
