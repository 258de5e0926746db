import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUserActive } from '../src/repositories/users.js';
import { TEST_DIALECT } from './support/database.js';
import { createText, issueLiveToken, moveToPlan, orgPath, seedJobs } from './support/fixtures.js';
import {
  connectStream,
  sendPcm,
  startStreamServer,
  type StreamServer,
  tonePcm,
  wavPeak,
} from './support/stream-server.js';

/** The engine's espeak-ng clip alice_2.wav as Ogg Opus (48 kHz mono, 8.46 s; fixtures/audio/README.md). */
const OPUS_FIXTURE = fileURLToPath(new URL('./fixtures/audio/alice_2.opus', import.meta.url));

const GENUINE = 0.8;
const IMPOSTOR = 0.2;

// Real HTTP and WebSocket in-process, with a stand-in engine (loud tone = the enrolled speaker);
// the real models and recordings are exercised by e2e/stream-flow.test.ts.
describe(`verification streams over WebSocket (${TEST_DIALECT})`, () => {
  let s: StreamServer;
  /** A live token on a paid plan: the Sandbox's (and trial tokens') 100 calls a month would soon stop these tests. */
  let live: string;

  beforeAll(async () => {
    s = await startStreamServer({
      STREAM_IDLE_TIMEOUT_MS: '1500',
      STREAM_MAX_FRAME_BYTES: '16384',
    });
    await moveToPlan(s.ctx, s.ctx.orgA.id, 'Starter');
    live = await issueLiveToken(s.ctx);
    await s.enrol(s.ctx.orgA.id, 'alice');
  });
  afterAll(async () => {
    expect(s.ctx.reportedErrors).toEqual([]);
    await s?.stop();
  });

  const start = (fields: Record<string, unknown> = {}) =>
    JSON.stringify({
      type: 'start',
      external_id: 'alice',
      request_uuid: randomUUID(),
      format: 'pcm_s16le',
      sample_rate: 16000,
      ...fields,
    });
  const open = async (token = live) => {
    const client = connectStream(s.streamUrl(), { token });
    await client.opened;
    return client;
  };

  describe('decisions', () => {
    it('a genuine speaker is verified: progress, then the webhook payload as the result, the same record and delivery as a posted verification', async () => {
      const client = await open();
      const requestUuid = randomUUID();
      client.ws.send(
        start({ request_uuid: requestUuid, device_fingerprint: 'kiosk-1', device_type: 2 }),
      );
      await sendPcm(client.ws, tonePcm(4, GENUINE));
      const progress = await client.next('progress');
      expect(progress).toEqual({
        type: 'progress',
        received_s: expect.any(Number),
        net_speech_s: expect.any(Number),
      });
      client.ws.send(JSON.stringify({ type: 'end' }));
      const result = await client.next('result');
      expect(await client.closed).toMatchObject({ code: 1000 });
      expect(result).toMatchObject({
        type: 'result',
        final: true,
        event_type: 'verification.completed',
        request_uuid: requestUuid,
        external_id: 'alice',
        result: 'verified',
      });

      const record = await s.ctx.request(
        'GET',
        orgPath(s.ctx.orgA.id, `/verifications/${requestUuid}`),
      );
      expect(record.status).toBe(200);
      expect(record.body).toMatchObject({
        status: 'completed',
        result: 'verified',
        match_score: result.match_score,
        device_mismatch: null,
      });
      const deliveries = await s.ctx.request(
        'GET',
        orgPath(s.ctx.orgA.id, `/webhook-deliveries?filter=request_uuid=${requestUuid}`),
      );
      expect(deliveries.body.results).toHaveLength(1);
      expect(deliveries.body.results[0].event_type).toBe('verification.completed');
      const { type: _type, final: _final, ...payload } = result;
      const stored = await s.ctx.db
        .selectFrom('webhook_deliveries')
        .select('payload')
        .where('request_uuid', '=', requestUuid)
        .executeTakeFirstOrThrow();
      expect(JSON.parse(stored.payload)).toEqual(payload);

      // The posted path with the same audio: the same record and webhook fields, the same result.
      const posted = randomUUID();
      const wav = Buffer.concat([wavHeader(2 * 16000 * 4), tonePcm(4, GENUINE)]);
      expect(
        (
          await s.ctx.request('POST', orgPath(s.ctx.orgA.id, '/verifications'), {
            body: {
              voice_data: wav.toString('base64'),
              request_uuid: posted,
              external_id: 'alice',
            },
          })
        ).status,
      ).toBe(202);
      const postedRecord = await waitForRecord(posted);
      expect(Object.keys(postedRecord).sort()).toEqual(Object.keys(record.body).sort());
      const postedPayload = await s.ctx.db
        .selectFrom('webhook_deliveries')
        .select('payload')
        .where('request_uuid', '=', posted)
        .executeTakeFirstOrThrow();
      expect(Object.keys(JSON.parse(postedPayload.payload)).sort()).toEqual(
        Object.keys(payload).sort(),
      );
    });

    it('a transient database failure while recording the decision is tried again: the verification is not lost', async () => {
      const db = s.ctx.deps.database.db;
      const transaction = db.transaction.bind(db);
      let failures = 2;
      // As a pool that is busy under load answers: only the job admission's transaction fails, twice.
      db.transaction = (() => {
        if (failures > 0 && new Error().stack?.includes('admitJob')) {
          failures--;
          throw new Error('timeout exceeded when trying to connect');
        }
        return transaction();
      }) as typeof db.transaction;
      try {
        const client = await open();
        const requestUuid = randomUUID();
        client.ws.send(start({ request_uuid: requestUuid }));
        await sendPcm(client.ws, tonePcm(4, GENUINE));
        client.ws.send(JSON.stringify({ type: 'end' }));
        expect(await client.next('result')).toMatchObject({
          result: 'verified',
          request_uuid: requestUuid,
        });
        expect((await client.closed).code).toBe(1000);
        expect(failures).toBe(0);
        expect(
          (await s.ctx.request('GET', orgPath(s.ctx.orgA.id, `/verifications/${requestUuid}`)))
            .body,
        ).toMatchObject({ status: 'completed', result: 'verified' });
      } finally {
        db.transaction = transaction;
      }
    });

    it('an impostor is rejected', async () => {
      const client = await open();
      client.ws.send(start());
      await sendPcm(client.ws, tonePcm(4, IMPOSTOR));
      client.ws.send(JSON.stringify({ type: 'end' }));
      expect(await client.next('result')).toMatchObject({ result: 'rejected', final: true });
      expect((await client.closed).code).toBe(1000);
    });

    it('decides before the end once a probe is clearly away from the threshold', async () => {
      const client = await open();
      const requestUuid = randomUUID();
      client.ws.send(start({ request_uuid: requestUuid }));
      // No `end`: the probe after 3 s of speech is confident (0.97 against 0.85).
      await sendPcm(client.ws, tonePcm(8, GENUINE), { frameSeconds: 0.25, paceMs: 5 });
      const result = await client.next('result');
      expect(result).toMatchObject({ result: 'verified', request_uuid: requestUuid });
      expect((await client.closed).code).toBe(1000);
      expect(s.engine.calls.verify).toBeGreaterThan(0);
    });

    it('a challenge is consumed at start, the stream decides only after `end`, and its result reports the phrase', async () => {
      const created = await s.ctx.request('POST', orgPath(s.ctx.orgA.id, '/challenges'), {
        token: live,
        body: { external_id: 'alice' },
      });
      expect(created.status).toBe(201);
      const challengeId = created.body.challenge_id;
      const client = await open();
      const requestUuid = randomUUID();
      client.ws.send(start({ request_uuid: requestUuid, challenge_id: challengeId }));
      // Confident audio that would decide early without a phrase (see above).
      await sendPcm(client.ws, tonePcm(8, GENUINE), { frameSeconds: 0.25, paceMs: 5 });
      await client.next('progress');
      const challenge = await s.ctx.db
        .selectFrom('challenges')
        .selectAll()
        .where('id', '=', challengeId)
        .executeTakeFirstOrThrow();
      expect(challenge.used_by_request).toBe(requestUuid);
      // Without a phrase a probe decides within about 150 ms; the stream's idle limit here is 1.5 s.
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect(client.messages.filter((m) => m.type === 'result')).toEqual([]);

      // The same challenge on another stream is refused at start.
      const second = await open();
      second.ws.send(start({ challenge_id: challengeId }));
      expect(await second.next('error')).toMatchObject({ code: 409, error: 'challenge_used' });
      expect((await second.closed).code).toBe(4409);

      client.ws.send(JSON.stringify({ type: 'end' }));
      const result = await client.next('result');
      expect(result).toMatchObject({
        result: 'verified',
        phrase: {
          expected: created.body.text,
          transcript: created.body.text,
          match_score: 1,
          matched: true,
        },
      });
      const record = await s.ctx.request(
        'GET',
        orgPath(s.ctx.orgA.id, `/verifications/${requestUuid}`),
      );
      expect(record.body.phrase).toEqual(result.phrase);
    });

    it('a predefined text (text_id) at start is checked and reported the same way', async () => {
      const text = await createText(
        s.ctx,
        { language: 'en-UK', text_code: 4101, text: 'My voice is my password.' },
        { token: live },
      );
      const client = await open();
      const requestUuid = randomUUID();
      client.ws.send(start({ request_uuid: requestUuid, text_id: text.id }));
      await sendPcm(client.ws, tonePcm(8, GENUINE), { frameSeconds: 0.25, paceMs: 5 });
      client.ws.send(JSON.stringify({ type: 'end' }));
      expect(await client.next('result')).toMatchObject({
        result: 'verified',
        phrase: { expected: 'My voice is my password.', matched: true },
      });
      const job = await s.ctx.db
        .selectFrom('jobs')
        .select(['text_id', 'phrase_vocabulary'])
        .where('request_uuid', '=', requestUuid)
        .executeTakeFirstOrThrow();
      expect(job).toEqual({ text_id: text.id, phrase_vocabulary: 'free' });
    });

    it('a stream with too little speech is inconclusive, like a short recording', async () => {
      const client = await open();
      client.ws.send(start());
      await sendPcm(client.ws, tonePcm(1, GENUINE));
      client.ws.send(JSON.stringify({ type: 'end' }));
      expect(await client.next('result')).toMatchObject({
        result: 'inconclusive',
        failure_reason: 'insufficient_speech',
      });
    });

    it('takes an Ogg Opus file sent in pieces, all of it (the last page the decoder holds back too)', async () => {
      const opus = readFileSync(OPUS_FIXTURE);
      const client = await open();
      const requestUuid = randomUUID();
      client.ws.send(start({ format: 'opus', request_uuid: requestUuid }));
      await sendPcm(client.ws, opus, { frameSeconds: 0.05 }); // 1600-byte pieces, cutting through Ogg pages
      client.ws.send(JSON.stringify({ type: 'end' }));
      expect(await client.next('progress')).toMatchObject({ type: 'progress' });
      expect(await client.next('result')).toMatchObject({
        type: 'result',
        final: true,
        request_uuid: requestUuid,
      });
      expect((await client.closed).code).toBe(1000);
      // The job verified the whole clip as 48 kHz mono 16-bit (8.46 s; without the decoder's flush it lost its last 0.7 s).
      const wav = Buffer.from(s.engine.jobAudio.at(-1)!);
      expect({
        rate: wav.readUInt32LE(24),
        channels: wav.readUInt16LE(22),
        bits: wav.readUInt16LE(34),
      }).toEqual({ rate: 48_000, channels: 1, bits: 16 });
      expect((wav.length - 44) / 2 / 48_000).toBeCloseTo(8.46, 1);
      expect(wavPeak(wav).peak).toBeGreaterThan(0.1); // speech, not silence
    });

    it('takes a WAV file sent in pieces', async () => {
      const client = await open();
      client.ws.send(start({ format: 'wav' }));
      const pcm = tonePcm(4, GENUINE);
      const file = Buffer.concat([wavHeader(pcm.length), pcm]);
      await sendPcm(client.ws, file, { frameSeconds: 0.05 });
      client.ws.send(JSON.stringify({ type: 'end' }));
      expect(await client.next('result')).toMatchObject({ result: 'verified' });
    });
  });

  describe('refusals before the upgrade: the REST status and body', () => {
    const restBody = async (token: string | null) =>
      (await s.ctx.request('GET', orgPath(s.ctx.orgA.id, '/users'), { token })).body;

    it('no token, a bad token: 401', async () => {
      const none = await connectStream(s.streamUrl()).refused;
      expect(none.status).toBe(401);
      expect(none.body).toEqual(await restBody(null));
      const bad = await connectStream(s.streamUrl(), {
        token: 'vk_live_notarealtoken0000000000000000',
      }).refused;
      expect(bad.status).toBe(401);
      expect(bad.body).toEqual(await restBody('vk_live_notarealtoken0000000000000000'));
      const badProtocol = await connectStream(s.streamUrl(), {
        protocols: ['voxkey.v1', 'bearer.vk_live_nope'],
      }).refused;
      expect(badProtocol.status).toBe(401);
    });

    it("another organisation's token: 403", async () => {
      const refused = await connectStream(s.streamUrl(s.ctx.orgA.id), { token: s.ctx.orgB.token })
        .refused;
      expect(refused.status).toBe(403);
      expect(refused.body.error).toBe('forbidden');
    });

    it('the token in the subprotocol list (browsers): accepted, and the server answers voxkey.v1', async () => {
      const client = connectStream(s.streamUrl(), {
        protocols: ['voxkey.v1', `bearer.${s.ctx.orgA.token}`],
      });
      await client.opened;
      expect(client.ws.protocol).toBe('voxkey.v1');
      client.ws.close();
    });

    it('an over-quota organisation: 429 quota_exceeded with Retry-After', async () => {
      const org = await s.ctx.makeOrg('Quota');
      await s.ctx.request('PATCH', orgPath(org.id, '/settings'), {
        token: org.token,
        body: { org_id: org.id, settings: { callback_url: 'http://localhost:9/hook' } },
      });
      await moveToPlan(s.ctx, org.id, 'Sandbox');
      await seedJobs(s.ctx, 100, { org_id: org.id, kind: 'verification', status: 'completed' });
      const refused = await connectStream(s.streamUrl(org.id), { token: org.token }).refused;
      expect(refused.status).toBe(429);
      expect(refused.body.error).toBe('quota_exceeded');
      expect(refused.headers['retry-after']).toBeDefined();
    });

    it('a plain GET (no upgrade) is a 400 naming Upgrade', async () => {
      const res = await s.ctx.request('GET', orgPath(s.ctx.orgA.id, '/verifications/stream'));
      expect(res.status).toBe(400);
      expect(res.body.errors[0].field).toBe('Upgrade');
    });
  });

  describe('the start message: the same validation and codes as POST /verifications', () => {
    const refusedStart = async (fields: Record<string, unknown> | string) => {
      const client = await open();
      client.ws.send(typeof fields === 'string' ? fields : start(fields));
      const error = await client.next('error');
      return { error, close: await client.closed };
    };

    it('missing and malformed fields: 400 with field errors, close 4400', async () => {
      const { error, close } = await refusedStart(
        JSON.stringify({ type: 'start', request_uuid: 'nope', format: 'flac' }),
      );
      expect(error).toMatchObject({ type: 'error', code: 400, error: 'validation_failed' });
      expect(error.errors).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ field: 'external_id', code: 'required' }),
          expect.objectContaining({ field: 'request_uuid', code: 'invalid_uuid' }),
        ]),
      );
      expect(close.code).toBe(4400);
    });

    it('request_uuid is any UUID, as for POST /verifications: a v7 is verified under it, the nil UUID is a 400 invalid_uuid', async () => {
      const v7 = `01890a5d-ac96-7${randomUUID().slice(15)}`;
      const client = await open();
      client.ws.send(start({ request_uuid: v7 }));
      await sendPcm(client.ws, tonePcm(4, GENUINE));
      client.ws.send(JSON.stringify({ type: 'end' }));
      expect(await client.next('result')).toMatchObject({ request_uuid: v7, result: 'verified' });
      expect(await client.closed).toMatchObject({ code: 1000 });
      const record = await s.ctx.request('GET', orgPath(s.ctx.orgA.id, `/verifications/${v7}`));
      expect(record.status).toBe(200);
      expect(record.body).toMatchObject({ request_uuid: v7, status: 'completed' });

      const { error, close } = await refusedStart({
        request_uuid: '00000000-0000-0000-0000-000000000000',
      });
      expect(error.errors).toEqual([
        { field: 'request_uuid', code: 'invalid_uuid', message: 'Must be a valid UUID' },
      ]);
      expect(close.code).toBe(4400);
    });

    it('an unknown user: 404 user_not_enrolled (4404); a deactivated one: 403 user_inactive (4403)', async () => {
      const unknown = await refusedStart({ external_id: 'nobody' });
      expect(unknown.error).toMatchObject({ code: 404, error: 'user_not_enrolled' });
      expect(unknown.close.code).toBe(4404);
      const bob = await s.enrol(s.ctx.orgA.id, 'bob-inactive');
      await setUserActive(s.ctx.db, s.ctx.orgA.id, bob.id, false);
      const inactive = await refusedStart({ external_id: 'bob-inactive' });
      expect(inactive.error).toMatchObject({ code: 403, error: 'user_inactive' });
      expect(inactive.close.code).toBe(4403);
    });

    it('require_phrase: a start without challenge_id or text_id is a 400 phrase_required on challenge_id (4400)', async () => {
      const requirePhrase = (on: boolean) =>
        s.ctx.request('PATCH', orgPath(s.ctx.orgA.id, '/settings'), {
          body: { org_id: s.ctx.orgA.id, settings: { require_phrase: on } },
        });
      expect((await requirePhrase(true)).status).toBe(200);
      try {
        const { error, close } = await refusedStart({});
        expect(error).toMatchObject({ code: 400, error: 'validation_failed' });
        expect(error.errors).toEqual([
          expect.objectContaining({ field: 'challenge_id', code: 'phrase_required' }),
        ]);
        expect(close.code).toBe(4400);
      } finally {
        expect((await requirePhrase(false)).status).toBe(200);
      }
    });

    it("a challenge or text that cannot be used: the POST's codes, with their close codes", async () => {
      const challengeFor = async (externalId: string) =>
        (
          await s.ctx.request('POST', orgPath(s.ctx.orgA.id, '/challenges'), {
            token: live,
            body: { external_id: externalId },
          })
        ).body.challenge_id as string;
      const unknown = await refusedStart({ challenge_id: randomUUID() });
      expect(unknown.error).toMatchObject({ code: 404, error: 'challenge_not_found' });
      expect(unknown.close.code).toBe(4404);

      const foreign = (
        await s.ctx.request('POST', orgPath(s.ctx.orgB.id, '/challenges'), {
          token: s.ctx.orgB.token,
          body: { external_id: 'alice' },
        })
      ).body.challenge_id;
      const theirs = await refusedStart({ challenge_id: foreign });
      expect(theirs.error).toEqual(unknown.error);

      const bobs = await challengeFor('bob');
      const mismatch = await refusedStart({ challenge_id: bobs });
      expect(mismatch.error).toMatchObject({ code: 409, error: 'challenge_user_mismatch' });
      expect(mismatch.close.code).toBe(4409);

      const stale = await challengeFor('alice');
      await s.ctx.db
        .updateTable('challenges')
        .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
        .where('id', '=', stale)
        .execute();
      const expired = await refusedStart({ challenge_id: stale });
      expect(expired.error).toMatchObject({ code: 409, error: 'challenge_expired' });
      expect(expired.close.code).toBe(4409);

      const noText = await refusedStart({ text_id: 999999 });
      expect(noText.error).toMatchObject({ code: 404, error: 'text_not_found' });
      expect(noText.close.code).toBe(4404);
    });

    it('a used request_uuid: 409 request_uuid_reused (4409)', async () => {
      const used = randomUUID();
      await seedJobs(s.ctx, 1, {
        org_id: s.ctx.orgA.id,
        kind: 'verification',
        status: 'completed',
        request_uuid: used,
      });
      const { error, close } = await refusedStart({ request_uuid: used });
      expect(error).toMatchObject({ code: 409, error: 'request_uuid_reused' });
      expect(close.code).toBe(4409);
    });

    it('too low a sample rate: 400 sample_rate_too_low on sample_rate', async () => {
      const { error, close } = await refusedStart({ sample_rate: 8000 });
      expect(error.errors[0]).toMatchObject({ field: 'sample_rate', code: 'sample_rate_too_low' });
      expect(close.code).toBe(4400);
    });
  });

  describe('bad input and slow clients end the stream with an error, never a crash', () => {
    const errorOf = async (client: Awaited<ReturnType<typeof open>>) => ({
      error: await client.next('error'),
      close: await client.closed,
    });

    it('audio before start, a second start, text that is not JSON: stream_protocol_error (4400)', async () => {
      const early = await open();
      early.ws.send(tonePcm(0.1, GENUINE));
      expect(await errorOf(early)).toMatchObject({
        error: { error: 'stream_protocol_error' },
        close: { code: 4400 },
      });

      const twice = await open();
      twice.ws.send(start());
      twice.ws.send(start());
      expect(await errorOf(twice)).toMatchObject({
        error: { error: 'stream_protocol_error' },
        close: { code: 4400 },
      });

      const text = await open();
      text.ws.send('hello');
      expect(await errorOf(text)).toMatchObject({
        error: { error: 'stream_protocol_error' },
        close: { code: 4400 },
      });
    });

    it('a frame over the size limit: payload_too_large (4413)', async () => {
      const client = await open();
      client.ws.send(start());
      client.ws.send(Buffer.alloc(20_000));
      expect(await errorOf(client)).toMatchObject({
        error: { error: 'payload_too_large', code: 413 },
        close: { code: 4413 },
      });
    });

    it('bytes that are not the declared audio: stream_protocol_error', async () => {
      const client = await open();
      client.ws.send(start());
      client.ws.send(Buffer.from('RIFF....WAVEfmt this is a wav header'));
      expect(await errorOf(client)).toMatchObject({
        error: { error: 'stream_protocol_error' },
        close: { code: 4400 },
      });
      const mp3 = await open();
      mp3.ws.send(start({ format: 'mp3' }));
      for (let i = 0; i < 6; i++) mp3.ws.send(Buffer.alloc(15_000, 7));
      expect(await errorOf(mp3)).toMatchObject({
        error: { error: 'stream_protocol_error' },
        close: { code: 4400 },
      });
    });

    it('a stalled client (nothing for the idle timeout): stream_timeout (4408)', async () => {
      const client = await open();
      client.ws.send(start());
      await sendPcm(client.ws, tonePcm(0.5, GENUINE));
      expect(await errorOf(client)).toMatchObject({
        error: { error: 'stream_timeout', code: 408 },
        close: { code: 4408 },
      });
    });

    it('a client that never sends start times out too', async () => {
      const client = await open();
      expect(await errorOf(client)).toMatchObject({
        error: { error: 'stream_timeout' },
        close: { code: 4408 },
      });
    });

    it('a client that leaves mid-stream leaves no record and frees its slot', async () => {
      const client = await open();
      const requestUuid = randomUUID();
      client.ws.send(start({ request_uuid: requestUuid }));
      await sendPcm(client.ws, tonePcm(1, GENUINE));
      client.ws.terminate();
      await client.closed;
      await new Promise((r) => setTimeout(r, 200));
      expect(
        (await s.ctx.request('GET', orgPath(s.ctx.orgA.id, `/verifications/${requestUuid}`)))
          .status,
      ).toBe(404);
      expect(s.ctx.deps.streams!.count()).toBe(0);
    });
  });

  it('100 concurrent streams: every one decided, memory flat', async () => {
    // Its own server with the default idle timeout: opening 100 streams on a loaded machine
    // (PostgreSQL especially) can take longer than the 1.5 s the idle-timeout tests above use.
    const busy = await startStreamServer({ STREAM_MAX_PER_ORG: '150' });
    try {
      await moveToPlan(busy.ctx, busy.ctx.orgA.id, 'Starter');
      const token = await issueLiveToken(busy.ctx);
      await busy.enrol(busy.ctx.orgA.id, 'alice');
      global.gc?.();
      const before = process.memoryUsage();
      const clients = await Promise.all(
        Array.from({ length: 100 }, async () => {
          const client = connectStream(busy.streamUrl(), { token });
          await client.opened;
          return client;
        }),
      );
      for (const client of clients) client.ws.send(start());
      const audio = tonePcm(2, GENUINE);
      await Promise.all(clients.map((client) => sendPcm(client.ws, audio, { frameSeconds: 0.25 })));
      await Promise.all(clients.map((client) => client.next('progress')));
      expect(busy.ctx.deps.streams!.count()).toBe(100);
      const during = process.memoryUsage();
      for (const client of clients) client.ws.send(JSON.stringify({ type: 'end' }));
      const results = await Promise.all(clients.map((client) => client.next('result', 60_000)));
      expect(results.every((r) => r.result === 'inconclusive' || r.result === 'verified')).toBe(
        true,
      );
      await Promise.all(clients.map((client) => client.closed));
      expect(busy.ctx.deps.streams!.count()).toBe(0);
      // 100 streams of 2 s (64 KB of PCM each, buffers of 4 s): far under 1 MB per stream on the heap
      // (this process's heap, shared with the clients; e2e/stream-memory.test.ts measures a server process's RSS).
      const growthMiB =
        (during.heapUsed + during.arrayBuffers - before.heapUsed - before.arrayBuffers) / 2 ** 20;
      expect(
        growthMiB,
        `heap + array buffers grew ${growthMiB.toFixed(1)} MiB with 100 streams open`,
      ).toBeLessThan(100);
      expect(busy.ctx.reportedErrors).toEqual([]);
    } finally {
      await busy.stop();
    }
  }, 120_000);

  it('caps concurrent streams per organisation: 429 before the upgrade', async () => {
    const capped = await startStreamServer({ STREAM_MAX_PER_ORG: '2' });
    try {
      const first = connectStream(capped.streamUrl(), { token: capped.ctx.orgA.token });
      const second = connectStream(capped.streamUrl(), { token: capped.ctx.orgA.token });
      await Promise.all([first.opened, second.opened]);
      const third = await connectStream(capped.streamUrl(), { token: capped.ctx.orgA.token })
        .refused;
      expect(third.status).toBe(429);
      expect(third.body).toMatchObject({ code: 429, error: 'rate_limited' });
      first.ws.close();
      await first.closed;
      await new Promise((r) => setTimeout(r, 100));
      const again = connectStream(capped.streamUrl(), { token: capped.ctx.orgA.token });
      await again.opened;
      again.ws.close();
      second.ws.close();
    } finally {
      await capped.stop();
    }
  });

  it('the rate limit applies to the upgrade as to any request (429 rate_limited)', async () => {
    const limited = await startStreamServer({
      RATE_LIMIT_TRIAL_BURST: '1',
      RATE_LIMIT_TRIAL_RPS: '0.01',
    });
    try {
      // A fresh organisation (no callback URL yet): the first upgrade passes the rate limit and is refused by the route (409).
      const org = await limited.ctx.makeOrg('Limited');
      const first = await connectStream(limited.streamUrl(org.id), { token: org.token }).refused;
      expect(first.body.error).toBe('no_callback_url');
      const second = await connectStream(limited.streamUrl(org.id), { token: org.token }).refused;
      expect(second.status).toBe(429);
      expect(second.body.error).toBe('rate_limited');
      expect(second.headers['retry-after']).toBeDefined();
    } finally {
      await limited.stop();
    }
  });

  it('shutdown: a stream with audio gets its decision, then 1001; new streams are refused (503)', async () => {
    const server = await startStreamServer();
    try {
      await server.enrol(server.ctx.orgA.id, 'carol');
      const client = connectStream(server.streamUrl(), { token: server.ctx.orgA.token });
      await client.opened;
      client.ws.send(start({ external_id: 'carol' }));
      await sendPcm(client.ws, tonePcm(4, GENUINE));
      await client.next('progress');
      const waiting = connectStream(server.streamUrl(), { token: server.ctx.orgA.token });
      await waiting.opened;
      const shutdown = server.ctx.deps.streams!.shutdown();
      expect(await client.next('result')).toMatchObject({ result: 'verified' });
      expect((await client.closed).code).toBe(1001);
      expect(await waiting.next('error')).toMatchObject({ error: 'unavailable' });
      expect((await waiting.closed).code).toBe(1001);
      await shutdown;
      const refused = await connectStream(server.streamUrl(), { token: server.ctx.orgA.token })
        .refused;
      expect(refused.status).toBe(503);
    } finally {
      await server.stop();
    }
  });

  async function waitForRecord(requestUuid: string) {
    for (let i = 0; i < 200; i++) {
      const res = await s.ctx.request(
        'GET',
        orgPath(s.ctx.orgA.id, `/verifications/${requestUuid}`),
      );
      if (res.body.status === 'completed') return res.body;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('the posted verification did not complete');
  }
});

function wavHeader(dataBytes: number): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'latin1');
  h.writeUInt32LE(36 + dataBytes, 4);
  h.write('WAVEfmt ', 8, 'latin1');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(16000, 24);
  h.writeUInt32LE(32000, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'latin1');
  h.writeUInt32LE(dataBytes, 40);
  return h;
}
