import { randomUUID } from 'node:crypto';
import {
  EMPTY_MESSAGE,
  ERROR_CODES,
  type ErrorCode,
  FIELD_ERROR_CODES,
  type FieldErrorCode,
  REQUIRED_MESSAGE,
} from '@voxkey/contract';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createApp } from '../src/app.js';
import { openDatabase } from '../src/db/connection.js';
import { requestFingerprint } from '../src/http/middleware/idempotency.js';
import { setUserActive } from '../src/repositories/users.js';
import { insertSample, insertVoiceprint } from '../src/repositories/voiceprints.js';
import { createTestContext, type TestContext, type TestResponse } from './support/context.js';
import { TEST_DIALECT } from './support/database.js';
import { expectError, expectValidation } from './support/expect.js';
import {
  inADay,
  issueLiveToken,
  moveToPlan,
  orgPath,
  seedJobs,
  seedUser,
  silentWav,
} from './support/fixtures.js';

const AUDIO = silentWav();

function expectCode(res: TestResponse, error: ErrorCode): void {
  if (error === 'validation_failed')
    expectValidation(
      res,
      res.body.errors.map((e: { field: string }) => e.field),
    );
  else expectError(res, ERROR_CODES[error].status, undefined, error);
}

function expectFieldCode(res: TestResponse, field: string, code: FieldErrorCode): void {
  expect(
    res.body?.errors?.find((e: { field: string }) => e.field === field),
    JSON.stringify(res.body),
  ).toMatchObject({ field, code });
  expectValidation(
    res,
    res.body.errors.map((e: { field: string }) => e.field),
  );
}

describe(`machine-readable error codes (${TEST_DIALECT})`, () => {
  let ctx: TestContext;
  const covered = { errors: new Set<ErrorCode>(), fields: new Set<FieldErrorCode>() };

  const voice = (
    kind: 'enrollments' | 'verifications',
    body: Record<string, unknown>,
    token?: string,
  ) =>
    ctx.request('POST', orgPath(ctx.orgA.id, `/${kind}`), {
      body: { voice_data: AUDIO, request_uuid: randomUUID(), ...body },
      token,
    });
  const code = (res: TestResponse, error: ErrorCode) => {
    covered.errors.add(error);
    expectCode(res, error);
  };
  const fieldCode = (res: TestResponse, field: string, fieldError: FieldErrorCode) => {
    covered.fields.add(fieldError);
    expectFieldCode(res, field, fieldError);
  };

  beforeAll(async () => {
    ctx = await createTestContext();
    const set = await ctx.request('PATCH', orgPath(ctx.orgA.id, '/settings'), {
      body: { org_id: ctx.orgA.id, settings: { callback_url: 'http://localhost:9/hook' } },
    });
    expect(set.status).toBe(200);
  });
  afterAll(() => ctx.cleanup());

  describe('error', () => {
    it('validation_failed', async () => {
      code(await voice('enrollments', { external_id: 5 }), 'validation_failed');
    });

    it('unauthorized', async () => {
      const res = await ctx.request('GET', orgPath(ctx.orgA.id), { token: 'vk_live_nope' });
      code(res, 'unauthorized');
    });

    it('forbidden', async () => {
      code(await ctx.request('GET', orgPath(ctx.orgB.id)), 'forbidden');
    });

    it('not_found', async () => {
      code(await ctx.request('GET', orgPath(ctx.orgA.id, '/users/999999')), 'not_found');
      code(await ctx.request('GET', '/v1/no-such-route'), 'not_found');
    });

    it('user_not_enrolled', async () => {
      code(await voice('verifications', { external_id: 'nobody' }), 'user_not_enrolled');
    });

    it('user_inactive', async () => {
      const user = await seedUser(ctx, ctx.orgA.id, 'sleeper');
      await setUserActive(ctx.db, ctx.orgA.id, user.id, false);
      code(await voice('verifications', { external_id: 'sleeper' }), 'user_inactive');
    });

    describe('phrase challenges', () => {
      const challengeFor = async (externalId: string) => {
        const res = await ctx.request('POST', orgPath(ctx.orgA.id, '/challenges'), {
          body: { external_id: externalId },
        });
        expect(res.status).toBe(201);
        return res.body.challenge_id as string;
      };

      it('challenge_not_found, text_not_found', async () => {
        await seedUser(ctx, ctx.orgA.id, 'reader');
        code(
          await voice('verifications', { external_id: 'reader', challenge_id: randomUUID() }),
          'challenge_not_found',
        );
        code(
          await voice('verifications', { external_id: 'reader', text_id: 99999 }),
          'text_not_found',
        );
      });

      it('challenge_used, challenge_user_mismatch, challenge_expired', async () => {
        const challengeId = await challengeFor('reader');
        code(
          await voice('enrollments', { external_id: 'someone-else', challenge_id: challengeId }),
          'challenge_user_mismatch',
        );
        expect(
          (await voice('verifications', { external_id: 'reader', challenge_id: challengeId }))
            .status,
        ).toBe(202);
        code(
          await voice('verifications', { external_id: 'reader', challenge_id: challengeId }),
          'challenge_used',
        );
        const stale = await challengeFor('reader');
        await ctx.db
          .updateTable('challenges')
          .set({ expires_at: '2000-01-01T00:00:00.000Z' })
          .where('id', '=', stale)
          .execute();
        code(
          await voice('verifications', { external_id: 'reader', challenge_id: stale }),
          'challenge_expired',
        );
      });

      it('unsupported_language, mutually_exclusive, phrase_required (field codes)', async () => {
        fieldCode(
          await ctx.request('POST', orgPath(ctx.orgA.id, '/challenges'), {
            body: { external_id: 'reader', language: 'de-DE' },
          }),
          'language',
          'unsupported_language',
        );
        fieldCode(
          await voice('verifications', {
            external_id: 'reader',
            challenge_id: randomUUID(),
            text_id: 1,
          }),
          'text_id',
          'mutually_exclusive',
        );
        const settings = (require_phrase: boolean) =>
          ctx.request('PATCH', orgPath(ctx.orgA.id, '/settings'), {
            body: { org_id: ctx.orgA.id, settings: { require_phrase } },
          });
        expect((await settings(true)).status).toBe(200);
        onTestFinished(async () => void (await settings(false)));
        fieldCode(
          await voice('verifications', { external_id: 'reader' }),
          'challenge_id',
          'phrase_required',
        );
      });
    });

    it('no_callback_url', async () => {
      const res = await ctx.request('POST', orgPath(ctx.orgB.id, '/enrollments'), {
        token: ctx.orgB.token,
        body: { voice_data: AUDIO, request_uuid: randomUUID(), external_id: 'x' },
      });
      code(res, 'no_callback_url');
    });

    it('already_enrolled', async () => {
      await seedUser(ctx, ctx.orgA.id, 'enrolled');
      code(await voice('enrollments', { external_id: 'enrolled' }), 'already_enrolled');
    });

    it('enrollment_in_progress', async () => {
      expect((await voice('enrollments', { external_id: 'pending' })).status).toBe(202);
      code(await voice('enrollments', { external_id: 'pending' }), 'enrollment_in_progress');
    });

    it('voiceprint_full (mode add, 10 samples already)', async () => {
      const user = await seedUser(ctx, ctx.orgA.id, 'full-voiceprint');
      const voiceprint = await insertVoiceprint(ctx.db, {
        orgId: ctx.orgA.id,
        userId: user.id,
        modelId: 'm',
        enrolmentFingerprint: null,
        qualityScore: 0.9,
      });
      for (let i = 0; i < 10; i++)
        await insertSample(ctx.db, voiceprint, {
          modelId: 'm',
          sealedEmbedding: `sealed-${i}`,
          sealVersion: 2,
          qualityScore: 0.9,
        });
      code(
        await voice('enrollments', { external_id: 'full-voiceprint', mode: 'add' }),
        'voiceprint_full',
      );
    });

    it('request_uuid_reused (a replay with the same body is answered again)', async () => {
      const body = { voice_data: AUDIO, request_uuid: randomUUID(), external_id: 'reuser' };
      expect(
        (await ctx.request('POST', orgPath(ctx.orgA.id, '/enrollments'), { body })).status,
      ).toBe(202);
      expect(
        (await ctx.request('POST', orgPath(ctx.orgA.id, '/enrollments'), { body })).status,
      ).toBe(202);
      const reused = await ctx.request('POST', orgPath(ctx.orgA.id, '/enrollments'), {
        body: { ...body, external_id: 'someone-else' },
      });
      code(reused, 'request_uuid_reused');
      // The fingerprint hashes the recording's bytes: another base64 spelling of them is the same request.
      const spelled = {
        ...body,
        voice_data: `data:audio/wav;base64,${body.voice_data.replace(/(.{76})/g, '$1\n')}`,
      };
      expect(
        (await ctx.request('POST', orgPath(ctx.orgA.id, '/enrollments'), { body: spelled })).status,
      ).toBe(202);
    });

    it('already_exists', async () => {
      const body = { org_id: ctx.orgA.id, language: 'en-UK', text_code: 77, text: 'Say hello' };
      expect(
        (await ctx.request('POST', orgPath(ctx.orgA.id, '/predefined-texts'), { body })).status,
      ).toBe(201);
      code(
        await ctx.request('POST', orgPath(ctx.orgA.id, '/predefined-texts'), { body }),
        'already_exists',
      );
    });

    it('idempotency_key_reused', async () => {
      const headers = { 'Idempotency-Key': `reused-${randomUUID()}` };
      const path = orgPath(ctx.orgA.id, '/api-tokens');
      const expires_at = inADay();
      expect(
        (
          await ctx.request('POST', path, {
            headers,
            body: { friendly_name: 'first', enabled: true, expires_at },
          })
        ).status,
      ).toBe(201);
      code(
        await ctx.request('POST', path, {
          headers,
          body: { friendly_name: 'second', enabled: true, expires_at },
        }),
        'idempotency_key_reused',
      );
    });

    it('idempotency_key_in_progress', async () => {
      const key = `busy-${randomUUID()}`;
      const path = orgPath(ctx.orgA.id, '/webhook-secret');
      const now = new Date().toISOString();
      await ctx.db
        .insertInto('idempotency_keys')
        .values({
          org_id: ctx.orgA.id,
          idempotency_key: key,
          request_fingerprint: requestFingerprint('POST', path, ''),
          status: 'in_progress',
          response_status: null,
          sealed_response: null,
          created_at: now,
          updated_at: now,
        })
        .execute();
      const res = await ctx.request('POST', path, { headers: { 'Idempotency-Key': key } });
      code(res, 'idempotency_key_in_progress');
      expect(res.headers.get('retry-after')).toBe('1');
    });

    it('payload_too_large', async () => {
      const res = await ctx.request('PATCH', orgPath(ctx.orgA.id), {
        rawBody: JSON.stringify({ name: 'x'.repeat(ctx.config.BODY_LIMIT_BYTES) }),
        headers: { 'content-type': 'application/json' },
      });
      code(res, 'payload_too_large');
    });

    it('unsupported_media_type', async () => {
      const res = await ctx.request('PATCH', orgPath(ctx.orgA.id), {
        rawBody: 'name=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      code(res, 'unsupported_media_type');
    });

    it('rate_limited', async () => {
      const limited = await createTestContext({
        RATE_LIMIT_TRIAL_BURST: '1',
        RATE_LIMIT_TRIAL_RPS: '0.001',
      });
      onTestFinished(() => limited.cleanup());
      expect((await limited.request('GET', orgPath(limited.orgA.id))).status).toBe(200);
      const res = await limited.request('GET', orgPath(limited.orgA.id));
      code(res, 'rate_limited');
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    });

    it('queue_full', async () => {
      const full = await createTestContext({ JOB_MAX_QUEUE: '1' });
      onTestFinished(() => full.cleanup());
      await full.request('PATCH', orgPath(full.orgA.id, '/settings'), {
        body: { org_id: full.orgA.id, settings: { callback_url: 'http://localhost:9/hook' } },
      });
      const first = await full.request('POST', orgPath(full.orgA.id, '/enrollments'), {
        body: { voice_data: AUDIO, request_uuid: randomUUID(), external_id: 'a' },
      });
      expect(first.status).toBe(202);
      const res = await full.request('POST', orgPath(full.orgA.id, '/enrollments'), {
        body: { voice_data: AUDIO, request_uuid: randomUUID(), external_id: 'b' },
      });
      code(res, 'queue_full');
      expect(res.headers.get('retry-after')).toBe('5');
    });

    it('quota_exceeded (a Sandbox organisation with any token; trial tokens on any plan)', async () => {
      const quota = await createTestContext();
      onTestFinished(() => quota.cleanup());
      await quota.request('PATCH', orgPath(quota.orgA.id, '/settings'), {
        body: { org_id: quota.orgA.id, settings: { callback_url: 'http://localhost:9/hook' } },
      });
      await seedJobs(quota, 100, { org_id: quota.orgA.id, kind: 'enrollment' });
      const res = await quota.request('POST', orgPath(quota.orgA.id, '/enrollments'), {
        body: { voice_data: AUDIO, request_uuid: randomUUID(), external_id: 'one-more' },
      });
      code(res, 'quota_exceeded');
      const bearer = await issueLiveToken(quota);
      const enrolWithLive = () =>
        quota.request('POST', orgPath(quota.orgA.id, '/enrollments'), {
          token: bearer,
          body: { voice_data: AUDIO, request_uuid: randomUUID(), external_id: 'one-more' },
        });
      code(await enrolWithLive(), 'quota_exceeded');
      await moveToPlan(quota, quota.orgA.id, 'Starter');
      expect((await enrolWithLive()).status).toBe(202);
    });

    it('internal_error', async () => {
      // a database handle that was closed: an unexpected fault, not an outage
      const closed = openDatabase('sqlite:');
      await closed.close();
      const app = createApp({ ...ctx.deps, database: closed }, { reportError: () => {} });
      const res = await app.request(orgPath(1), {
        headers: { authorization: `Bearer ${ctx.orgA.token}` },
      });
      code({ status: res.status, body: await res.json(), headers: res.headers }, 'internal_error');
    });

    it('unavailable (no voice processing; or no database, with Retry-After)', async () => {
      const down = await createTestContext();
      onTestFinished(() => down.cleanup());
      down.deps.voiceUnavailable = { code: 'model_missing' };
      const res = await down.request('POST', orgPath(down.orgA.id, '/enrollments'), {
        body: { voice_data: AUDIO, request_uuid: randomUUID(), external_id: 'x' },
      });
      code(res, 'unavailable');

      const unreachable = openDatabase('postgres://voxkey@127.0.0.1:1/unreachable', {
        poolSize: 1,
      });
      onTestFinished(() => unreachable.close());
      const app = createApp({ ...ctx.deps, database: unreachable }, { reportError: () => {} });
      const outage = await app.request(orgPath(1), {
        headers: { authorization: `Bearer ${ctx.orgA.token}` },
      });
      const body = await outage.json();
      code({ status: outage.status, body, headers: outage.headers }, 'unavailable');
      expect(outage.headers.get('retry-after')).toBe('1');
      expect(JSON.stringify(body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);
    });
  });

  describe('errors[].code', () => {
    it('required, invalid_uuid, unknown_field, invalid_type', async () => {
      const res = await ctx.request('POST', orgPath(ctx.orgA.id, '/enrollments'), {
        body: { voice_data: AUDIO, request_uuid: 'not-a-uuid', device_type: 'phone', extra: 1 },
      });
      fieldCode(res, 'external_id', 'required');
      expect(
        res.body.errors.find((e: { field: string }) => e.field === 'external_id').message,
      ).toBe(REQUIRED_MESSAGE);
      fieldCode(res, 'request_uuid', 'invalid_uuid');
      fieldCode(res, 'extra', 'unknown_field');
      fieldCode(res, 'device_type', 'invalid_type');
    });

    it('too_short, too_long, out_of_range, invalid_format', async () => {
      const res = await voice('enrollments', {
        voice_data: '',
        external_id: 'x'.repeat(256),
        device_type: 9,
        language: 'english',
      });
      fieldCode(res, 'voice_data', 'too_short');
      // Present but empty is too short, and says so; only a missing field is `required` with REQUIRED_MESSAGE.
      expect(res.body.errors.find((e: { field: string }) => e.field === 'voice_data').message).toBe(
        EMPTY_MESSAGE,
      );
      fieldCode(res, 'external_id', 'too_long');
      fieldCode(res, 'device_type', 'out_of_range');
      fieldCode(res, 'language', 'invalid_format');
      fieldCode(
        await ctx.request('GET', orgPath(ctx.orgA.id, '/users/2147483648')),
        'user_id',
        'out_of_range',
      );
    });

    it('invalid_type on a body boolean and on a query number', async () => {
      fieldCode(
        await ctx.request('PATCH', orgPath(ctx.orgA.id, '/users/1'), {
          body: { is_active: 'yes' },
        }),
        'is_active',
        'invalid_type',
      );
      const res = await ctx.request(
        'GET',
        `${orgPath(ctx.orgA.id, '/webhook-deliveries')}?per_page=abc`,
      );
      fieldCode(res, 'per_page', 'invalid_type');
    });

    it('invalid_json, contains_nul, too_deeply_nested', async () => {
      fieldCode(
        await ctx.request('PATCH', orgPath(ctx.orgA.id), {
          rawBody: '{"name":',
          headers: { 'content-type': 'application/json' },
        }),
        'body',
        'invalid_json',
      );
      fieldCode(
        await ctx.request('PATCH', orgPath(ctx.orgA.id), { body: { name: 'a\u0000b' } }),
        'name',
        'contains_nul',
      );
      let nested: unknown = 'x';
      for (let i = 0; i < 40; i++) nested = { a: nested };
      const deep = await ctx.request('PATCH', orgPath(ctx.orgA.id), { body: { name: nested } });
      covered.fields.add('too_deeply_nested');
      expect(deep.body.errors[0].code).toBe('too_deeply_nested');
    });

    it('invalid_filter, invalid_sort', async () => {
      fieldCode(
        await ctx.request('GET', `${orgPath(ctx.orgA.id, '/users')}?filter=favourite_colour=blue`),
        'filter',
        'invalid_filter',
      );
      fieldCode(
        await ctx.request('GET', `${orgPath(ctx.orgA.id, '/users')}?sort=colour:asc`),
        'sort',
        'invalid_sort',
      );
    });

    it('must_match_path, must_be_in_future, outlives_creator, callback_url_not_allowed', async () => {
      fieldCode(
        await ctx.request('POST', orgPath(ctx.orgA.id, '/predefined-texts'), {
          body: { org_id: ctx.orgB.id, language: 'en-UK', text_code: 1, text: 'x' },
        }),
        'org_id',
        'must_match_path',
      );
      fieldCode(
        await ctx.request('POST', orgPath(ctx.orgA.id, '/api-tokens'), {
          body: { friendly_name: 'old', enabled: true, expires_at: '2000-01-01T00:00:00Z' },
        }),
        'expires_at',
        'must_be_in_future',
      );
      // The trial token expires within the plan's trial: it cannot create a token that outlives it.
      fieldCode(
        await ctx.request('POST', orgPath(ctx.orgA.id, '/api-tokens'), {
          body: { friendly_name: 'later', enabled: true, expires_at: '2099-01-01T00:00:00Z' },
        }),
        'expires_at',
        'outlives_creator',
      );
      // Nor one that never expires: without expires_at its request is refused, not shortened.
      fieldCode(
        await ctx.request('POST', orgPath(ctx.orgA.id, '/api-tokens'), {
          body: { friendly_name: 'forever', enabled: true },
        }),
        'expires_at',
        'outlives_creator',
      );
      fieldCode(
        await ctx.request('PATCH', orgPath(ctx.orgA.id, '/settings'), {
          body: { org_id: ctx.orgA.id, settings: { callback_url: 'https://10.0.0.1/hook' } },
        }),
        'settings.callback_url',
        'callback_url_not_allowed',
      );
    });

    it.each([
      ['invalid_base64', '!!!not base64!!!'],
      [
        'unsupported_audio_format',
        Buffer.from('hello world, this is not audio').toString('base64'),
      ],
      ['corrupt_audio', Buffer.from('RIFF').toString('base64')],
      ['sample_rate_too_low', silentWav(4, 8000)],
      ['audio_too_short', silentWav(1)],
      ['audio_too_long', silentWav(61)],
    ] as const)('%s on voice_data', async (expected, voiceData) => {
      fieldCode(
        await voice('enrollments', { voice_data: voiceData, external_id: `audio-${expected}` }),
        'voice_data',
        expected,
      );
    });

    it('audio_too_large on voice_data', async () => {
      const big = await createTestContext({ BODY_LIMIT_BYTES: String(20 * 1024 * 1024) });
      onTestFinished(() => big.cleanup());
      await big.request('PATCH', orgPath(big.orgA.id, '/settings'), {
        body: { org_id: big.orgA.id, settings: { callback_url: 'http://localhost:9/hook' } },
      });
      const res = await big.request('POST', orgPath(big.orgA.id, '/enrollments'), {
        body: {
          voice_data: Buffer.alloc(11 * 1024 * 1024).toString('base64'),
          request_uuid: randomUUID(),
          external_id: 'big',
        },
      });
      fieldCode(res, 'voice_data', 'audio_too_large');
    });
  });

  it('too_many_errors: at most 20 field errors, then one entry saying how many more', async () => {
    const body: Record<string, unknown> = { friendly_name: 'x', enabled: true };
    for (let i = 0; i < 25; i++) body[`unknown_${i}`] = i;
    const res = await ctx.request('POST', orgPath(ctx.orgA.id, '/api-tokens'), { body });
    expect(res.status).toBe(400);
    expect(res.body.errors).toHaveLength(21);
    expect(
      res.body.errors.slice(0, 20).every((e: { code: string }) => e.code === 'unknown_field'),
    ).toBe(true);
    expect(res.body.errors[20]).toEqual({
      field: '',
      code: 'too_many_errors',
      message: '5 more errors not listed; fix these and send the request again',
    });
    covered.fields.add('too_many_errors');
  });

  it('every code the contract lists has a test above', () => {
    expect([...covered.errors].sort()).toEqual(Object.keys(ERROR_CODES).sort());
    // invalid_value is the fallback for checks no request schema has today (enumerations in bodies).
    expect([...covered.fields].sort()).toEqual(
      Object.keys(FIELD_ERROR_CODES)
        .filter((c) => c !== 'invalid_value')
        .sort(),
    );
  });
});
