import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { StreamServerMessageSchema } from '@voxkey/contract';
import type { AudioInput, PcmAudio } from '@voxkey/engine';
import { WebSocket } from 'ws';
import { attachWebSockets } from '../../src/http/websocket.js';
import type { StreamEngine } from '../../src/streams/verification-stream.js';
import { createStreamRegistry } from '../../src/streams/registry.js';
import { createJobRunner } from '../../src/workers/job-runner.js';
import type { VoiceAnalyzer } from '../../src/workers/job-processor.js';
import { createTestContext } from './context.js';
import { orgPath, seedEnrolledUser } from './fixtures.js';

/** The peak of a 16-bit WAV's samples (0..1): the fakes below tell "speakers" apart by loudness. */
export function wavPeak(bytes: Uint8Array): { peak: number; seconds: number } {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const samples = new Int16Array((view.length - 44) >> 1);
  for (let i = 0; i < samples.length; i++) samples[i] = view.readInt16LE(44 + 2 * i);
  return pcmPeak({ pcm: samples, sampleRate: view.readUInt32LE(24) });
}

/** The same for PCM, which a stream's probes hand the engine. */
function pcmPeak({ pcm, sampleRate }: PcmAudio): { peak: number; seconds: number } {
  const scale = pcm instanceof Int16Array ? 1 / 32768 : 1;
  let peak = 0;
  let voiced = 0;
  for (const sample of pcm) {
    const v = Math.abs(sample) * scale;
    if (v > peak) peak = v;
    if (v > 0.05) voiced++;
  }
  return { peak, seconds: voiced / sampleRate };
}

const peakOf = (audio: AudioInput) =>
  audio instanceof Uint8Array ? wavPeak(audio) : pcmPeak(audio);

/** Genuine audio is loud (peak > 0.4), an impostor's quiet: the same rule in the job's analyzer and the stream's probes. */
const scoreOf = (audio: AudioInput) => (peakOf(audio).peak > 0.4 ? 0.97 : 0.1);

/** A stand-in engine that reads loudness as identity and voiced samples as speech, so streams decide without models. */
export function fakeVoiceEngine(options: { delayMs?: number } = {}) {
  const calls = { verify: 0, checkAudio: 0 };
  /** The recordings the jobs verified (WAV bytes), oldest first. */
  const jobAudio: Uint8Array[] = [];
  const wait = () => new Promise((r) => setTimeout(r, options.delayMs ?? 0));
  const verify = async (
    audio: AudioInput,
    _voiceprints: unknown,
    opts?: { threshold?: number },
  ) => {
    calls.verify++;
    await wait();
    const { seconds } = peakOf(audio);
    const matchScore = scoreOf(audio);
    const threshold = opts?.threshold ?? 0.85;
    const enough = seconds >= 3;
    return {
      result: !enough ? 'inconclusive' : matchScore >= threshold ? 'verified' : 'rejected',
      inconclusiveCode: enough ? undefined : 'insufficient_speech',
      matchScore: enough ? matchScore : 0,
      bonafideProbability: 0.99,
      netSpeechSeconds: seconds,
      deepfakeDetected: false,
      timings: {},
    };
  };
  const analyzer = {
    speakerModelId: 'fake-speaker',
    spoofModelId: 'fake-spoof',
    defaultDeepfakeThreshold: 0.5,
    async enrol() {
      return {
        qualityScore: 0.9,
        spoof: { bonafideProbability: 0.99 },
        voiceprint: { modelId: 'fake-speaker', embedding: new Float32Array(8).fill(0.5) },
        timings: {},
      };
    },
    async verify(
      bytes: Uint8Array,
      voiceprints: unknown,
      opts?: { threshold?: number; phrase?: { expected: string } },
    ) {
      jobAudio.push(bytes);
      // The recogniser of the fakes hears exactly the phrase it was asked about.
      const phrase = opts?.phrase
        ? {
            expected: opts.phrase.expected,
            transcript: opts.phrase.expected,
            matchScore: 1,
            matched: true,
          }
        : null;
      return { ...(await verify(bytes, voiceprints, opts)), phrase };
    },
  } as unknown as VoiceAnalyzer;
  const streamEngine = {
    verify,
    async checkAudio(audio: AudioInput) {
      calls.checkAudio++;
      await wait();
      return { netSpeechSeconds: peakOf(audio).seconds, problems: [] };
    },
  } as unknown as StreamEngine;
  return { analyzer, streamEngine, calls, jobAudio };
}

/** 16 kHz mono 16-bit PCM: a tone at `amplitude` (loud = the genuine speaker of the fakes). */
export function tonePcm(seconds: number, amplitude: number, sampleRate = 16_000): Buffer {
  const samples = Math.round(seconds * sampleRate);
  const out = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++)
    out.writeInt16LE(
      Math.round(Math.sin((2 * Math.PI * 220 * i) / sampleRate) * amplitude * 32767),
      i * 2,
    );
  return out;
}

/** An in-process server (real HTTP and WebSocket, the app, a job runner on the fake engine) on a fresh test database. */
export async function startStreamServer(
  configOverrides: Record<string, string> = {},
  options: { delayMs?: number } = {},
) {
  const ctx = await createTestContext({ JOB_POLL_MS: '50', ...configOverrides });
  const engine = fakeVoiceEngine(options);
  const runner = createJobRunner(ctx.deps, engine.analyzer, 2);
  ctx.deps.signals.jobQueued = () => runner.wake();
  ctx.deps.streams = createStreamRegistry(ctx.deps, () => engine.streamEngine);
  const server = serve({ fetch: ctx.app.fetch, port: 0, hostname: '127.0.0.1' });
  attachWebSockets(server, ctx.app, (err) => ctx.reportedErrors.push(err));
  await new Promise<void>((resolve) =>
    server.listening ? resolve() : server.once('listening', () => resolve()),
  );
  const { port } = server.address() as AddressInfo;
  runner.start();
  for (const org of [ctx.orgA, ctx.orgB]) {
    const res = await ctx.request('PATCH', orgPath(org.id, '/settings'), {
      token: org.token,
      body: { org_id: org.id, settings: { callback_url: 'http://localhost:9/hook' } },
    });
    if (res.status !== 200) throw new Error(`settings: ${res.status} ${JSON.stringify(res.body)}`);
  }

  const enrol = (orgId: number, externalId: string) => seedEnrolledUser(ctx, orgId, externalId);

  const streamUrl = (orgId = ctx.orgA.id) =>
    `ws://127.0.0.1:${port}/v1/organisations/${orgId}/verifications/stream`;

  return {
    ctx,
    engine,
    port,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    streamUrl,
    enrol,
    async stop() {
      await ctx.deps.streams?.shutdown();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await runner.stop();
      await ctx.cleanup();
    },
  };
}

export type StreamServer = Awaited<ReturnType<typeof startStreamServer>>;

/** A test client: records every message and the close, in order. */
export interface StreamClient {
  ws: WebSocket;
  messages: any[];
  closed: Promise<{ code: number; reason: string }>;
  opened: Promise<void>;
  /** Resolves with the upgrade's refusal: status and JSON body. */
  refused: Promise<{
    status: number;
    body: any;
    headers: Record<string, string | string[] | undefined>;
  }>;
  next(type: string, timeoutMs?: number): Promise<any>;
}

export function connectStream(
  url: string,
  options: { token?: string; protocols?: string[]; headers?: Record<string, string> } = {},
): StreamClient {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const ws = new WebSocket(url, options.protocols ?? [], { headers });
  const messages: any[] = [];
  const waiters: Array<() => void> = [];
  ws.on('message', (data, isBinary) => {
    if (!isBinary) {
      const message = JSON.parse(data.toString());
      // Every message the server sends must be one the contract documents (a failure here fails the run).
      const checked = StreamServerMessageSchema.safeParse(message);
      if (!checked.success)
        throw new Error(
          `the server sent a message outside the contract: ${JSON.stringify(message)}: ${checked.error.message}`,
        );
      messages.push(message);
    }
    for (const w of waiters.splice(0)) w();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  const opened = new Promise<void>((resolve, reject) => {
    ws.on('open', () => resolve());
    ws.on('error', reject);
  });
  opened.catch(() => {});
  const refused = new Promise<{
    status: number;
    body: any;
    headers: Record<string, string | string[] | undefined>;
  }>((resolve) => {
    ws.on('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: text ? JSON.parse(text) : undefined,
          headers: res.headers,
        }),
      );
    });
  });
  ws.on('error', () => {});
  closed.then(() => {
    for (const w of waiters.splice(0)) w();
  });
  let seen = 0;
  return {
    ws,
    messages,
    closed,
    opened,
    refused,
    async next(type, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const index = messages.findIndex((m, i) => i >= seen && m.type === type);
        if (index >= 0) {
          seen = index + 1;
          return messages[index];
        }
        if (ws.readyState === WebSocket.CLOSED)
          throw new Error(`closed without a ${type} message; got ${JSON.stringify(messages)}`);
        if (Date.now() > deadline)
          throw new Error(
            `no ${type} message within ${timeoutMs} ms; got ${JSON.stringify(messages)}`,
          );
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100);
        });
      }
    },
  };
}

/** Sends PCM in real-time-ish frames (`frameSeconds` each, `paceMs` apart; 0 = as fast as possible). */
export async function sendPcm(
  ws: WebSocket,
  pcm: Buffer,
  options: { frameSeconds?: number; paceMs?: number; sampleRate?: number } = {},
) {
  const frameBytes = Math.round((options.frameSeconds ?? 0.1) * (options.sampleRate ?? 16_000)) * 2;
  for (let offset = 0; offset < pcm.length; offset += frameBytes) {
    if (ws.readyState !== WebSocket.OPEN) return;
    ws.send(pcm.subarray(offset, offset + frameBytes));
    if (options.paceMs) await new Promise((r) => setTimeout(r, options.paceMs));
  }
}
