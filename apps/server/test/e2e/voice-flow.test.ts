import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DIALECT } from '../support/database.js';
import { datasetPresentFor, speakerRecordings } from '../support/recordings.js';
import {
  callApi,
  createServerEnvironment,
  runCli,
  type ServerEnvironment,
  type ServerProcess,
  startServerProcess,
} from '../support/server-process.js';
import { signatureIsValid, startWebhookReceiver } from '../support/webhook-receiver.js';

// Real server processes, real recordings from ../shared/datasets (skipped without them), real webhooks.
describe.skipIf(!datasetPresentFor(import.meta.url, 'enrolment and verification end to end'))(
  `enrolment and verification end to end, with dataset recordings (${TEST_DIALECT})`,
  () => {
    let environment: ServerEnvironment;
    let server: ServerProcess;
    let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
    let org: { id: number; token: string; secret: string };
    let recordings: string[][];
    let failNext = 0;

    const api = (method: string, path: string, body?: unknown, token = org.token) =>
      callApi(server.baseUrl, token, method, path, body);
    const orgPath = (suffix = '') => `/organisations/${org.id}${suffix}`;
    const resultFor = (requestUuid: string) =>
      receiver.waitFor((calls) =>
        calls.some((c) => c.body.request_uuid === requestUuid && c.rawBody),
      );

    beforeAll(async () => {
      recordings = speakerRecordings({ speakers: 2, count: 3 });
      receiver = await startWebhookReceiver(() => {
        if (failNext > 0) {
          failNext--;
          return 500;
        }
        return 200;
      });
      environment = await createServerEnvironment();
      const created = await runCli(environment, [
        'org',
        'create',
        '--name',
        'E2E',
        '--email',
        'e2e@example.com',
        '--callback-url',
        receiver.url,
      ]);
      org = {
        id: created.organisation.id,
        token: created.token.bearer,
        secret: created.webhook_secret,
      };
      server = await startServerProcess(environment);
    });

    afterAll(async () => {
      await server?.stop();
      await receiver?.close();
      await environment?.cleanup();
    });

    it('enrols a user and delivers a signed enrollment.completed webhook', async () => {
      const requestUuid = randomUUID();
      const accepted = await api('POST', orgPath('/enrollments'), {
        voice_data: recordings[0]![0],
        request_uuid: requestUuid,
        external_id: 'alice',
        device_fingerprint: 'phone-1',
        device_type: 1,
      });
      expect(accepted.status).toBe(202);
      expect(accepted.body).toEqual({ callback_url: receiver.url, message: expect.any(String) });

      const calls = await resultFor(requestUuid);
      const call = calls.find((c) => c.body.request_uuid === requestUuid)!;
      expect(signatureIsValid(org.secret, call)).toBe(true);
      expect(call.body).toEqual({
        event_type: 'enrollment.completed',
        request_uuid: requestUuid,
        external_id: 'alice',
        user_id: expect.any(Number),
        status: 'enrolled',
        quality_score: expect.any(Number),
        failure_reason: null,
        latency_ms: expect.any(Number),
        created_at: expect.any(String),
        mode: 'new',
        samples: 1,
        deepfake_score: expect.any(Number),
        models: { speaker: expect.any(String), spoof: expect.any(String) },
        recording_quality: {
          net_speech_s: expect.any(Number),
          snr_db: expect.any(Number),
          bandwidth_hz: expect.any(Number),
          spectral_hole_ratio: expect.any(Number),
          decay_rate_db_per_s: expect.any(Number),
        },
        phrase: null,
      });
      const users = await api('GET', orgPath('/users?filter=external_id=alice'));
      expect(users.body.results).toHaveLength(1);
      expect(users.body.results[0].id).toBe(call.body.user_id);

      const record = await api('GET', orgPath(`/enrollments/${requestUuid}`));
      expect(record.body).toMatchObject({ status: 'completed', user_id: call.body.user_id });
    });

    it('refuses a second enrolment of the same external_id (409); mode add makes it a second sample', async () => {
      const again = await api('POST', orgPath('/enrollments'), {
        voice_data: recordings[0]![2],
        request_uuid: randomUUID(),
        external_id: 'alice',
      });
      expect(again.status).toBe(409);
      const requestUuid = randomUUID();
      const added = await api('POST', orgPath('/enrollments'), {
        voice_data: recordings[0]![2],
        request_uuid: requestUuid,
        external_id: 'alice',
        mode: 'add',
      });
      expect(added.status).toBe(202);
      const call = (await resultFor(requestUuid)).find((c) => c.body.request_uuid === requestUuid)!;
      expect(call.body).toMatchObject({ status: 'enrolled', mode: 'add', samples: 2 });
    });

    it('verifies with exactly the spec payload, signed, and flags a device mismatch', async () => {
      const requestUuid = randomUUID();
      const accepted = await api('POST', orgPath('/verifications'), {
        voice_data: recordings[0]![1],
        request_uuid: requestUuid,
        external_id: 'alice',
        device_fingerprint: 'laptop-9',
        device_type: 2,
      });
      expect(accepted.status).toBe(202);
      const call = (await resultFor(requestUuid)).find((c) => c.body.request_uuid === requestUuid)!;
      expect(signatureIsValid(org.secret, call)).toBe(true);
      // The spec's fields, plus the additive ones of issue 14 (docs/decisions.md).
      const specFields = [
        'created_at',
        'deepfake_detected',
        'event_type',
        'external_id',
        'latency_ms',
        'match_score',
        'request_uuid',
        'result',
      ];
      const additive = [
        'deepfake_score',
        'match_threshold',
        'deepfake_threshold',
        'failure_reason',
        'models',
        'voiceprint_upgraded',
        'recording_quality',
        'phrase',
      ];
      expect(Object.keys(call.body).sort()).toEqual([...specFields, ...additive].sort());
      expect(call.body.event_type).toBe('verification.completed');
      expect(['verified', 'rejected', 'inconclusive']).toContain(call.body.result);
      expect(call.body.match_score).toBeGreaterThanOrEqual(0);
      expect(call.body.match_score).toBeLessThanOrEqual(1);
      expect(typeof call.body.deepfake_detected).toBe('boolean');

      const record = await api('GET', orgPath(`/verifications/${requestUuid}`));
      expect(record.body).toMatchObject({
        status: 'completed',
        device_mismatch: true,
        result: call.body.result,
      });
    });

    it('answers a replayed request_uuid with 202 and no second job; a different body is 409', async () => {
      const requestUuid = randomUUID();
      const body = {
        voice_data: recordings[0]![2],
        request_uuid: requestUuid,
        external_id: 'alice',
      };
      expect((await api('POST', orgPath('/verifications'), body)).status).toBe(202);
      expect((await api('POST', orgPath('/verifications'), body)).status).toBe(202);
      await resultFor(requestUuid);
      expect((await api('POST', orgPath('/verifications'), body)).status).toBe(202);
      expect(
        (await api('POST', orgPath('/verifications'), { ...body, external_id: 'bob' })).status,
      ).toBe(409);
      await new Promise((r) => setTimeout(r, 500));
      expect(
        new Set(receiver.calls.filter((c) => c.body.request_uuid === requestUuid).map((c) => c.id))
          .size,
      ).toBe(1);
    });

    it('retries a failing receiver with the same webhook-id until it recovers', async () => {
      failNext = 2;
      const requestUuid = randomUUID();
      expect(
        (
          await api('POST', orgPath('/verifications'), {
            voice_data: recordings[0]![1],
            request_uuid: requestUuid,
            external_id: 'alice',
          })
        ).status,
      ).toBe(202);
      const calls = await receiver.waitFor(
        (all) => all.filter((c) => c.body.request_uuid === requestUuid).length >= 3,
      );
      const attempts = calls.filter((c) => c.body.request_uuid === requestUuid);
      expect(new Set(attempts.map((c) => c.id)).size).toBe(1);
      expect(attempts.every((c) => signatureIsValid(org.secret, c))).toBe(true);
      // the dispatcher records the attempt after the receiver has answered it: wait for that record
      const delivered = async () => {
        for (let i = 0; i < 100; i++) {
          const deliveries = await api(
            'GET',
            orgPath(`/webhook-deliveries?filter=request_uuid=${requestUuid}`),
          );
          const [delivery] = deliveries.body.results;
          if (delivery?.status !== 'pending') return delivery;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        throw new Error('the delivery was still pending after 5 s');
      };
      expect(await delivered()).toMatchObject({
        status: 'delivered',
        attempts: 3,
        webhook_id: attempts[0]!.id,
      });
    });

    it('refuses a deactivated user (403) and an unknown or deleted one (404)', async () => {
      const bobUuid = randomUUID();
      await api('POST', orgPath('/enrollments'), {
        voice_data: recordings[1]![0],
        request_uuid: bobUuid,
        external_id: 'bob',
      });
      const enrolled = (await resultFor(bobUuid)).find((c) => c.body.request_uuid === bobUuid)!;
      const bobId = enrolled.body.user_id;
      expect((await api('PATCH', orgPath(`/users/${bobId}`), { is_active: false })).status).toBe(
        200,
      );
      const refused = await api('POST', orgPath('/verifications'), {
        voice_data: recordings[1]![1],
        request_uuid: randomUUID(),
        external_id: 'bob',
      });
      expect(refused.status).toBe(403);
      expect((await api('DELETE', orgPath(`/users/${bobId}`))).status).toBe(200);
      const unknown = await api('POST', orgPath('/verifications'), {
        voice_data: recordings[1]![1],
        request_uuid: randomUUID(),
        external_id: 'bob',
      });
      expect(unknown.status).toBe(404);
      // Deleted users may enrol again as new users.
      const again = await api('POST', orgPath('/enrollments'), {
        voice_data: recordings[1]![0],
        request_uuid: randomUUID(),
        external_id: 'bob',
      });
      expect(again.status).toBe(202);
    });

    it('pre-checks a recording synchronously: a real one is usable, nothing is queued', async () => {
      // The recording alice enrolled with (so it has enough speech).
      const check = await api('POST', orgPath('/audio-checks'), { voice_data: recordings[0]![0] });
      expect(check.status, JSON.stringify(check.body)).toBe(200);
      expect(check.body).toMatchObject({
        usable: true,
        problems: [],
        format: expect.stringMatching(/^(wav|mp3)$/),
      });
      expect(check.body.net_speech_s).toBeGreaterThan(3);
      const notAudio = await api('POST', orgPath('/audio-checks'), {
        voice_data: Buffer.from('hello world, not audio').toString('base64'),
      });
      expect(notAudio.status).toBe(400);
      expect(notAudio.body.errors[0].field).toBe('voice_data');
    });

    it('rejects bad audio before accepting (400 on voice_data) and needs external_id', async () => {
      const notAudio = await api('POST', orgPath('/verifications'), {
        voice_data: Buffer.from('hello world, not audio').toString('base64'),
        request_uuid: randomUUID(),
        external_id: 'alice',
      });
      expect(notAudio.status).toBe(400);
      expect(notAudio.body.errors[0].field).toBe('voice_data');
      expect(notAudio.body.errors[0].code).toBe('unsupported_audio_format');
      const missing = await api('POST', orgPath('/verifications'), {
        voice_data: recordings[0]![0],
        request_uuid: 'not-a-uuid',
      });
      expect(missing.status).toBe(400);
      expect(missing.body.errors).toEqual(
        expect.arrayContaining([
          { field: 'external_id', code: 'required', message: 'This field is required' },
          { field: 'request_uuid', code: 'invalid_uuid', message: 'Must be a valid UUID' },
        ]),
      );
    });

    it("never lets another organisation's token in (403)", async () => {
      const other = await runCli(environment, [
        'org',
        'create',
        '--name',
        'Other',
        '--email',
        'other@example.com',
        '--callback-url',
        receiver.url,
      ]);
      const res = await api(
        'POST',
        orgPath('/verifications'),
        { voice_data: recordings[0]![0], request_uuid: randomUUID(), external_id: 'alice' },
        other.token.bearer,
      );
      expect(res.status).toBe(403);
    });
  },
);
