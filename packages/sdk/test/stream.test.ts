/**
 * `verifications.stream` against the real server (apps/server) with the engine's tiny fixture
 * models (scores are meaningless; the protocol is what is tested) and real recordings from the
 * development data set (the VAD needs speech): a child process on a free port, a fresh SQLite
 * database. Skipped with a notice when apps/server/dist or the data set is missing.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import {
  createVoxkeyClient,
  type StreamMessage,
  VoxkeyError,
  type VoxkeyClient,
  type WebSocketConstructor,
} from '../src/index.js';
import { prerequisite } from '../../../scripts/test-prerequisites.mjs';
import { serverBuiltFor, startVoxkeyServer, type VoxkeyServer } from './support/voxkey-server.js';

const STREAM_TESTS = 'verifications.stream against the real server (Node)';
const built = serverBuiltFor(import.meta.url, STREAM_TESTS);
const datasetDir =
  process.env.VOXKEY_DATASET_DIR ??
  fileURLToPath(new URL('../../../../shared/datasets', import.meta.url));
const hasDataset = prerequisite({
  testFile: import.meta.url,
  tests: STREAM_TESTS,
  missing: `the development data set (${resolve(datasetDir)})`,
  present: existsSync(join(datasetDir, 'manifest.csv')),
});

/** Two long-enough MP3 recordings of one Common Voice speaker (real speech: the VAD needs it). */
function speakerClips(): [Uint8Array, Uint8Array] {
  const rows = readFileSync(join(datasetDir, 'manifest.csv'), 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((r) => r.split(','));
  const bySpeaker = new Map<string, string[]>();
  for (const c of rows)
    if (c[1] === 'commonvoice' && c[3] === 'bonafide' && Number(c[5]) >= 5)
      bySpeaker.set(c[2]!, [...(bySpeaker.get(c[2]!) ?? []), c[0]!]);
  const clips = [...bySpeaker.values()].find((paths) => paths.length >= 2)!;
  return [readFileSync(join(datasetDir, clips[0]!)), readFileSync(join(datasetDir, clips[1]!))];
}

describe.skipIf(!built || !hasDataset)(
  'verifications.stream against the real server (Node)',
  () => {
    let server: VoxkeyServer;
    let baseUrl: string;
    let token: string;
    let orgId: number;
    let vk: VoxkeyClient;
    let clips: [Uint8Array, Uint8Array];

    beforeAll(async () => {
      server = await startVoxkeyServer('SDK Stream');
      ({ baseUrl, token, orgId } = server);
      vk = createVoxkeyClient({
        baseUrl,
        token,
        orgId,
        WebSocket: WebSocket as unknown as WebSocketConstructor,
      });
      // The fixture spoof model's scores are noise: keep its gate out of the way of the enrolment.
      await vk.settings.update({ reject_deepfake_enrollments: false });
      clips = speakerClips();
      const enrolled = await vk.enrollments.create({
        external_id: 'sdk-streamer',
        voice_data: clips[0],
      });
      const record = await vk.enrollments.waitForResult(enrolled.request_uuid, {
        intervalMs: 100,
        timeoutMs: 30_000,
      });
      if (record.status !== 'completed')
        throw new Error(`enrolment failed: ${JSON.stringify(record)}`);
    });

    afterAll(async () => {
      await server?.stop();
    });

    it('streams audio chunks (an MP3 in 4 KiB pieces), yields progress then the result, and the record matches', async () => {
      const stream = vk.verifications.stream({
        external_id: 'sdk-streamer',
        format: 'mp3',
        device_fingerprint: 'sdk-node',
      });
      const mp3 = clips[1];
      for (let offset = 0; offset < mp3.length; offset += 4096)
        stream.send(mp3.subarray(offset, offset + 4096));
      stream.end();
      const seen: StreamMessage[] = [];
      for await (const message of stream) seen.push(message);
      expect(seen[0]).toMatchObject({ type: 'progress' });
      const result = seen.at(-1)!;
      expect(result).toMatchObject({
        type: 'result',
        final: true,
        event_type: 'verification.completed',
        request_uuid: stream.request_uuid,
        external_id: 'sdk-streamer',
      });
      expect(await stream).toEqual(result);
      if (result.type !== 'result') throw new Error('no result');
      expect(['verified', 'rejected', 'inconclusive']).toContain(result.result);
      const record = await vk.verifications.get(stream.request_uuid);
      expect(record).toMatchObject({
        status: 'completed',
        result: result.result,
        match_score: result.match_score,
      });
    });

    it('a refused start rejects with a VoxkeyError carrying the API error', async () => {
      const stream = vk.verifications.stream({ external_id: 'nobody' });
      const error = await stream.result.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(VoxkeyError);
      expect(error).toMatchObject({ kind: 'http', status: 404, error: 'user_not_enrolled' });
      await expect(async () => {
        for await (const _ of stream) {
          // drains to the error
        }
      }).rejects.toBeInstanceOf(VoxkeyError);
    });

    it('a refused connection (bad token) rejects with a network VoxkeyError', async () => {
      const bad = createVoxkeyClient({
        baseUrl,
        token: 'vk_live_notarealtoken0000000000000000',
        orgId,
        WebSocket: WebSocket as unknown as WebSocketConstructor,
      });
      const error = await bad.verifications
        .stream({ external_id: 'sdk-streamer' })
        .result.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(VoxkeyError);
      expect(error).toMatchObject({ kind: 'network' });
    });
  },
);
