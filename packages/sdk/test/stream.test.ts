/**
 * `verifications.stream` against the real server (apps/server) with the engine's tiny fixture
 * models (scores are meaningless; the protocol is what is tested) and real recordings from the
 * development data set (the VAD needs speech): a child process on a free port, a fresh SQLite
 * database. Skipped with a notice when apps/server/dist or the data set is missing.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createVoxkeyClient, type StreamMessage, VoxkeyError, type VoxkeyClient, type WebSocketConstructor } from '../src/index.js';

const cli = fileURLToPath(new URL('../../../apps/server/bin/voxkey.js', import.meta.url));
const fixtureModels = fileURLToPath(new URL('../../engine/test/fixtures/models', import.meta.url));
const built = existsSync(fileURLToPath(new URL('../../../apps/server/dist/main.js', import.meta.url)));
if (!built) console.warn('stream.test.ts skipped: apps/server is not built (run `npm run build` in the repository root)');
const datasetDir = process.env.VOXKEY_DATASET_DIR ?? fileURLToPath(new URL('../../../../shared/datasets', import.meta.url));
const hasDataset = existsSync(join(datasetDir, 'manifest.csv'));
if (!hasDataset) console.warn(`stream.test.ts skipped: the development data set is absent (${datasetDir})`);

/** Two long-enough MP3 recordings of one Common Voice speaker (real speech: the VAD needs it). */
function speakerClips(): [Uint8Array, Uint8Array] {
  const rows = readFileSync(join(datasetDir, 'manifest.csv'), 'utf8').trim().split('\n').slice(1).map((r) => r.split(','));
  const bySpeaker = new Map<string, string[]>();
  for (const c of rows) if (c[1] === 'commonvoice' && c[3] === 'bonafide' && Number(c[5]) >= 5) bySpeaker.set(c[2]!, [...(bySpeaker.get(c[2]!) ?? []), c[0]!]);
  const clips = [...bySpeaker.values()].find((paths) => paths.length >= 2)!;
  return [readFileSync(join(datasetDir, clips[0]!)), readFileSync(join(datasetDir, clips[1]!))];
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function parseCliJson(stdout: string): any {
  const lines = stdout.split('\n');
  return JSON.parse(lines.slice(lines.indexOf('{'), lines.lastIndexOf('}') + 1).join('\n'));
}

describe.skipIf(!built || !hasDataset)('verifications.stream against the real server (Node)', () => {
  let dir: string;
  let child: ChildProcess | undefined;
  let output = '';
  let baseUrl: string;
  let token: string;
  let orgId: number;
  let vk: VoxkeyClient;
  let clips: [Uint8Array, Uint8Array];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'voxkey-sdk-stream-'));
    const port = await freePort();
    const env = {
      ...process.env,
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: String(port),
      DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}`,
      BOOTSTRAP_DEMO_ORG: 'false',
      DATA_DIR: dir,
      VOXKEY_ENCRYPTION_KEY: 'b'.repeat(64),
      VOXKEY_MODELS_DIR: fixtureModels,
      ENGINE_THREADS: '1',
      JOB_POLL_MS: '100',
      RATE_LIMIT_ENABLED: 'false',
      WEBHOOK_ALLOW_LOOPBACK: 'true',
    };
    const { stdout } = await promisify(execFile)(process.execPath, [cli, 'org', 'create', '--name', 'SDK Stream', '--email', 'stream@example.com', '--callback-url', 'http://127.0.0.1:9/hook', '--json'], { env });
    const created = parseCliJson(stdout);
    orgId = created.organisation.id;
    token = created.token.bearer;
    child = spawn(process.execPath, [cli, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    baseUrl = `http://127.0.0.1:${port}/v1`;
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${output}`);
      try {
        if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break;
      } catch {}
      if (Date.now() > deadline) throw new Error(`server did not start within 30 s:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    vk = createVoxkeyClient({ baseUrl, token, orgId, WebSocket: WebSocket as unknown as WebSocketConstructor });
    // The fixture spoof model's scores are noise: keep its gate out of the way of the enrolment.
    await vk.settings.update({ reject_deepfake_enrollments: false });
    clips = speakerClips();
    const enrolled = await vk.enrollments.create({ external_id: 'sdk-streamer', voice_data: clips[0] });
    const record = await vk.enrollments.waitForResult(enrolled.request_uuid, { intervalMs: 100, timeoutMs: 30_000 });
    if (record.status !== 'completed') throw new Error(`enrolment failed: ${JSON.stringify(record)}`);
  });

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('streams audio chunks (an MP3 in 4 KiB pieces), yields progress then the result, and the record matches', async () => {
    const stream = vk.verifications.stream({ external_id: 'sdk-streamer', format: 'mp3', device_fingerprint: 'sdk-node' });
    const mp3 = clips[1];
    for (let offset = 0; offset < mp3.length; offset += 4096) stream.send(mp3.subarray(offset, offset + 4096));
    stream.end();
    const seen: StreamMessage[] = [];
    for await (const message of stream) seen.push(message);
    expect(seen[0]).toMatchObject({ type: 'progress' });
    const result = seen.at(-1)!;
    expect(result).toMatchObject({ type: 'result', final: true, event_type: 'verification.completed', request_uuid: stream.request_uuid, external_id: 'sdk-streamer' });
    expect(await stream).toEqual(result);
    if (result.type !== 'result') throw new Error('no result');
    expect(['verified', 'rejected', 'inconclusive']).toContain(result.result);
    const record = await vk.verifications.get(stream.request_uuid);
    expect(record).toMatchObject({ status: 'completed', result: result.result, match_score: result.match_score });
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
    const bad = createVoxkeyClient({ baseUrl, token: 'vk_live_notarealtoken0000000000000000', orgId, WebSocket: WebSocket as unknown as WebSocketConstructor });
    const error = await bad.verifications.stream({ external_id: 'sdk-streamer' }).result.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VoxkeyError);
    expect(error).toMatchObject({ kind: 'network' });
  });
});
