/**
 * Verification streams from a real browser: `client.verifications.stream(...)` of the browser build
 * (the token in the WebSocket subprotocol list, the browser's own WebSocket) and `streamVoice` with
 * Chromium's fake microphone, in headless Chromium against a real server process (apps/server,
 * the engine's tiny fixture models: the scores mean nothing, the protocol and the audio are what is
 * tested). The audio is the engine's committed espeak-ng speech clips (and one as Ogg Opus, from the
 * server's test fixtures), so no data set is needed.
 *
 * Skipped with a notice when Chromium is absent (Debian: `apt-get install -y chromium`, or set
 * CHROMIUM_PATH) or apps/server is not built (`npm run build` in the repository root).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVoxkeyClient, type StreamMessage, type VoxkeyClient } from '../src/index.js';
import {
  bundleBrowserSdk,
  chromiumOrNotice,
  launchWithFakeMicrophone,
  sdkPageHtml,
  servePages,
  type PageServer,
} from './support/browser-page.js';
import {
  ENGINE_SPEECH_CLIPS,
  serverBuiltFor,
  startVoxkeyServer,
  type VoxkeyServer,
} from './support/voxkey-server.js';

const STREAMS_IN_CHROMIUM = 'verification streams in headless Chromium against a real server';
const HAS_CHROMIUM = chromiumOrNotice(import.meta.url, STREAMS_IN_CHROMIUM);
const SERVER_BUILT = serverBuiltFor(import.meta.url, STREAMS_IN_CHROMIUM);

/** What the fake microphone plays (looped): 8.5 s of espeak-ng speech, 16 kHz mono. */
const MICROPHONE_CLIP = 'alice_2.wav';
/** The same clip as Ogg Opus (apps/server/test/fixtures/audio/README.md). */
const OPUS_CLIP = fileURLToPath(
  new URL('../../../apps/server/test/fixtures/audio/alice_2.opus', import.meta.url),
);
/** Seconds of audio in alice_2.wav and alice_2.opus. */
const CLIP_SECONDS = 8.46;
/** Seconds streamVoice streams before it sends `end`. */
const STREAM_SECONDS = 6;

type Sdk = typeof import('../src/browser.js');

/** Samples of a 16-bit mono WAV file from its `data` chunk (the engine's clips have a plain 44-byte header). */
function wavSamples(bytes: Uint8Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const samples = new Float32Array(view.getUint32(40, true) / 2);
  for (let i = 0; i < samples.length; i++) samples[i] = view.getInt16(44 + i * 2, true) / 32768;
  return samples;
}

/** Log energy per 20 ms frame of 16 kHz audio. */
function envelope(samples: Float32Array): number[] {
  const out: number[] = [];
  for (let start = 0; start + 320 <= samples.length; start += 320) {
    let energy = 0;
    for (let i = start; i < start + 320; i++) energy += samples[i]! ** 2;
    out.push(Math.log10(energy / 320 + 1e-8));
  }
  return out;
}

function pearson(x: number[], y: number[]): number {
  const n = Math.min(x.length, y.length);
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) ((mx += x[i]!), (my += y[i]!));
  mx /= n;
  my /= n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (x[i]! - mx) * (y[i]! - my);
    sxx += (x[i]! - mx) ** 2;
    syy += (y[i]! - my) ** 2;
  }
  return sxy / Math.sqrt(sxx * syy || 1);
}

/** The best correlation of the energy envelopes over every offset into the looped clip (the fake device starts anywhere in it). */
function matchToClip(sent: Float32Array, clip: Float32Array): number {
  const recorded = envelope(sent);
  const played = envelope(clip);
  const looped = [...played, ...played, ...played];
  let best = -1;
  for (let lag = 0; lag < played.length; lag++)
    best = Math.max(best, pearson(recorded, looped.slice(lag, lag + recorded.length)));
  return best;
}

describe.skipIf(!HAS_CHROMIUM || !SERVER_BUILT)(
  'verification streams in headless Chromium against a real server',
  () => {
    let voxkey: VoxkeyServer;
    let vk: VoxkeyClient;
    let pages: PageServer;
    let browser: Browser;

    beforeAll(async () => {
      voxkey = await startVoxkeyServer('SDK Browser Stream');
      vk = createVoxkeyClient({
        baseUrl: voxkey.baseUrl,
        token: voxkey.token,
        orgId: voxkey.orgId,
      });
      // The fixture spoof model's scores are noise: keep its gate out of the way of the enrolment.
      await vk.settings.update({ reject_deepfake_enrollments: false });
      const enrolled = await vk.enrollments.create({
        external_id: 'alice',
        voice_data: new Uint8Array(readFileSync(join(ENGINE_SPEECH_CLIPS, 'alice_1.wav'))),
      });
      const record = await vk.enrollments.waitForResult(enrolled.request_uuid, {
        intervalMs: 100,
        timeoutMs: 30_000,
      });
      if (record.status !== 'completed')
        throw new Error(`enrolment failed: ${JSON.stringify(record)}\n${voxkey.output()}`);

      pages = await servePages({
        '/': ['text/html', sdkPageHtml('streams')],
        '/sdk.js': ['text/javascript', await bundleBrowserSdk()],
        '/audio/alice_2.wav': ['audio/wav', readFileSync(join(ENGINE_SPEECH_CLIPS, 'alice_2.wav'))],
        '/audio/alice_2.opus': ['audio/ogg', readFileSync(OPUS_CLIP)],
      }); // the page's own origin (another port than the API's): a WebSocket is not bound by CORS
      browser = await launchWithFakeMicrophone(join(ENGINE_SPEECH_CLIPS, MICROPHONE_CLIP));
    }, 90_000);

    afterAll(async () => {
      await browser?.close();
      await pages?.close();
      await voxkey?.stop();
    });

    /** A fresh page with the SDK loaded; its console is printed when the test fails. */
    async function withPage<T>(run: (page: Page) => Promise<T>): Promise<T> {
      const page = await browser.newPage();
      const consoleLines: string[] = [];
      page.on('console', (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
      page.on('pageerror', (e) => consoleLines.push(`pageerror: ${e.message}`));
      try {
        await page.goto(pages.url);
        await page.waitForFunction(() => document.title === 'ready');
        return await run(page);
      } catch (error) {
        console.info(
          `browser console:\n${consoleLines.join('\n')}\n--- server ---\n${voxkey.output().slice(-3000)}`,
        );
        throw error;
      } finally {
        await page.close();
      }
    }

    const connection = () => ({
      baseUrl: voxkey.baseUrl,
      token: voxkey.token,
      orgId: voxkey.orgId,
    });

    it.each([
      ['wav', '/audio/alice_2.wav'],
      ['opus', '/audio/alice_2.opus'],
    ] as const)(
      'client.verifications.stream (%s): a file sent in pieces from the page, progress then the result, the record matches',
      async (format, file) => {
        const outcome = await withPage((page) =>
          page.evaluate(
            async ({ connection, format, file }) => {
              const sdk = (window as unknown as { sdk: Sdk }).sdk;
              const vk = sdk.createVoxkeyClient(connection);
              const bytes = new Uint8Array(await (await fetch(file)).arrayBuffer());
              const stream = vk.verifications.stream({
                external_id: 'alice',
                format,
                device_fingerprint: 'chromium-page',
              });
              for (let offset = 0; offset < bytes.length; offset += 4096)
                stream.send(bytes.subarray(offset, offset + 4096));
              stream.end();
              const seen: StreamMessage[] = [];
              for await (const message of stream) seen.push(message);
              return { requestUuid: stream.request_uuid, seen, awaited: await stream };
            },
            { connection: connection(), format, file },
          ),
        );
        expect(outcome.seen[0]).toMatchObject({
          type: 'progress',
          received_s: expect.any(Number),
          net_speech_s: expect.any(Number),
        });
        const result = outcome.seen.at(-1)!;
        expect(result).toMatchObject({
          type: 'result',
          final: true,
          event_type: 'verification.completed',
          request_uuid: outcome.requestUuid,
          external_id: 'alice',
        });
        expect(outcome.awaited).toEqual(result);
        for (const progress of outcome.seen.filter((m) => m.type === 'progress'))
          expect(progress.received_s).toBeLessThanOrEqual(CLIP_SECONDS + 0.01);
        const record = await vk.verifications.get(outcome.requestUuid);
        expect(record).toMatchObject({
          status: 'completed',
          result: (result as { result: string }).result,
          match_score: (result as { match_score: number }).match_score,
        });
        console.info(
          `browser stream of ${format}: ${outcome.seen.length - 1} progress messages (${JSON.stringify(outcome.seen[0])}), result ${(result as { result: string }).result}`,
        );
      },
    );

    it('a refused start rejects with the API error; a refused connection (bad token) with a network VoxkeyError', async () => {
      const outcome = await withPage((page) =>
        page.evaluate(async (connection) => {
          const sdk = (window as unknown as { sdk: Sdk }).sdk;
          const describe = (e: unknown) =>
            e instanceof sdk.VoxkeyError
              ? { isVoxkeyError: true, kind: e.kind, status: e.status, error: e.error ?? null }
              : { isVoxkeyError: false, text: String(e) };
          const unknownUser = sdk
            .createVoxkeyClient(connection)
            .verifications.stream({ external_id: 'nobody' });
          unknownUser.send(new Int16Array(1600));
          let iterated: unknown;
          try {
            for await (const _ of unknownUser) {
              // drains to the error
            }
          } catch (e) {
            iterated = e;
          }
          const badToken = sdk
            .createVoxkeyClient({ ...connection, token: 'vk_live_notarealtoken0000000000000000' })
            .verifications.stream({ external_id: 'alice' });
          return {
            unknownUser: describe(await unknownUser.result.catch((e: unknown) => e)),
            iterated: describe(iterated),
            badToken: describe(await badToken.result.catch((e: unknown) => e)),
          };
        }, connection()),
      );
      expect(outcome.unknownUser).toEqual({
        isVoxkeyError: true,
        kind: 'http',
        status: 404,
        error: 'user_not_enrolled',
      });
      expect(outcome.iterated).toEqual(outcome.unknownUser);
      expect(outcome.badToken).toEqual({
        isVoxkeyError: true,
        kind: 'network',
        status: 0,
        error: null,
      });
    });

    it.each(['audio-worklet', 'script-processor'] as const)(
      'streamVoice streams the microphone through %s as 16 kHz PCM until it has the result',
      async (capture) => {
        const outcome = await withPage((page) =>
          page.evaluate(
            async ({ connection, capture, seconds }) => {
              const sdk = (window as unknown as { sdk: Sdk }).sdk;
              const stream = sdk
                .createVoxkeyClient(connection)
                .verifications.stream({ external_id: 'alice' });
              const seen: StreamMessage[] = [];
              const iterating = (async () => {
                for await (const message of stream) seen.push(message);
              })();
              // A pass-through target that keeps what streamVoice sends, to compare with what the microphone played.
              const chunks: Int16Array[] = [];
              const target = {
                send(chunk: ArrayBufferView) {
                  chunks.push(new Int16Array((chunk as Int16Array).slice()));
                  stream.send(chunk);
                },
                end: () => stream.end(),
                result: stream.result,
              };
              let levels = 0;
              const sent = await sdk.streamVoice(target, {
                maxSeconds: seconds,
                capture,
                onProgress: () => levels++,
              });
              const result = await stream;
              await iterating;
              const total = chunks.reduce((n, c) => n + c.length, 0);
              const pcm = new Int16Array(total);
              let offset = 0;
              for (const chunk of chunks) {
                pcm.set(chunk, offset);
                offset += chunk.length;
              }
              let binary = '';
              const bytes = new Uint8Array(pcm.buffer);
              for (let i = 0; i < bytes.length; i += 0x8000)
                binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
              return {
                sent,
                result,
                seen,
                levels,
                chunks: chunks.length,
                pcm: btoa(binary),
                requestUuid: stream.request_uuid,
              };
            },
            { connection: connection(), capture, seconds: STREAM_SECONDS },
          ),
        );
        expect(outcome.sent.capture).toBe(capture);
        expect(outcome.sent.captureSampleRate).toBeGreaterThanOrEqual(16_000);
        expect(outcome.levels).toBeGreaterThan(0);
        const progress = outcome.seen.filter((m) => m.type === 'progress');
        expect(progress.length).toBeGreaterThan(0);
        expect(outcome.seen.at(-1)).toEqual(outcome.result);
        expect(outcome.result).toMatchObject({
          type: 'result',
          final: true,
          request_uuid: outcome.requestUuid,
          external_id: 'alice',
        });
        // 16 kHz mono 16-bit samples, as many as durationSeconds says; all of them unless a probe decided early.
        const sent = new Int16Array(new Uint8Array(Buffer.from(outcome.pcm, 'base64')).buffer);
        expect(sent.length).toBe(Math.round(outcome.sent.durationSeconds * 16_000));
        expect(outcome.sent.durationSeconds).toBeGreaterThan(1);
        expect(outcome.sent.durationSeconds).toBeLessThanOrEqual(STREAM_SECONDS + 0.01);
        expect(outcome.chunks).toBeGreaterThan(3); // 0.25 s chunks, sent as they were captured
        const receivedS = progress.map((m) => (m as { received_s: number }).received_s);
        expect(receivedS).toEqual([...receivedS].sort((a, b) => a - b));
        // The server heard speech in it (silence would measure 0 s).
        expect(
          Math.max(...progress.map((m) => (m as { net_speech_s: number }).net_speech_s)),
        ).toBeGreaterThan(0);
        const match = matchToClip(
          Float32Array.from(sent, (v) => v / 32768).subarray(1600), // the device's first 100 ms
          wavSamples(new Uint8Array(readFileSync(join(ENGINE_SPEECH_CLIPS, MICROPHONE_CLIP)))),
        );
        expect(
          match,
          'what streamVoice sent carries the clip the fake microphone played',
        ).toBeGreaterThan(0.8);
        const record = await vk.verifications.get(outcome.requestUuid);
        expect(record).toMatchObject({
          status: 'completed',
          result: (outcome.result as { result: string }).result,
        });
        console.info(
          `streamVoice via ${capture}: ${outcome.sent.durationSeconds.toFixed(2)} s sent in ${outcome.chunks} chunks (captured at ${outcome.sent.captureSampleRate} Hz), ` +
            `${progress.length} progress messages (last ${JSON.stringify(progress.at(-1))}), envelope r = ${match.toFixed(3)}, result ${(outcome.result as { result: string }).result}`,
        );
      },
      40_000,
    );

    it('streamVoice: an abort throws its reason and releases the microphone; closing the stream then records nothing; maxSeconds is checked', async () => {
      const outcome = await withPage((page) =>
        page.evaluate(async (connection) => {
          const sdk = (window as unknown as { sdk: Sdk }).sdk;
          const tracks: MediaStreamTrack[] = [];
          const getUserMedia = navigator.mediaDevices.getUserMedia.bind(navigator.mediaDevices);
          navigator.mediaDevices.getUserMedia = async (constraints) => {
            const media = await getUserMedia(constraints);
            tracks.push(...media.getTracks());
            return media;
          };
          const vk = sdk.createVoxkeyClient(connection);
          const stream = vk.verifications.stream({ external_id: 'alice' });
          let progress = 0;
          const iterating = (async () => {
            for await (const message of stream) if (message.type === 'progress') progress++;
          })().catch((e: unknown) => (e instanceof sdk.VoxkeyError ? e.message : String(e)));
          const controller = new AbortController();
          setTimeout(() => controller.abort(new Error('stopped by the user')), 1500);
          const aborted = await sdk
            .streamVoice(stream, { maxSeconds: 20, signal: controller.signal })
            .then(
              () => 'resolved',
              (e: Error) => e.message,
            );
          const released = tracks.length > 0 && tracks.every((t) => t.readyState === 'ended');
          stream.close();
          const closed = await stream.result.then(
            () => 'resolved',
            (e: unknown) => (e instanceof sdk.VoxkeyError ? e.message : String(e)),
          );
          const idle = { send() {}, end() {}, result: new Promise<never>(() => {}) };
          const invalid = await sdk.streamVoice(idle, { maxSeconds: 61 }).then(
            () => 'resolved',
            (e: Error) => e.name,
          );
          return {
            aborted,
            released,
            closed,
            invalid,
            iterated: await iterating,
            progress,
            requestUuid: stream.request_uuid,
          };
        }, connection()),
      );
      expect(outcome).toMatchObject({
        aborted: 'stopped by the user',
        released: true,
        closed: 'The stream was closed before a result',
        invalid: 'RangeError',
        iterated: 'The stream was closed before a result',
      });
      expect(outcome.progress, 'audio reached the server before the abort').toBeGreaterThan(0);
      // A stream abandoned before its decision is not recorded.
      await new Promise((r) => setTimeout(r, 300));
      await expect(vk.verifications.get(outcome.requestUuid)).rejects.toMatchObject({
        status: 404,
      });
    });
  },
);
