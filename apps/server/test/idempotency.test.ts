import { apiRoutes } from '@voxkey/contract';
import { describe, expect, it } from 'vitest';
import { keyedOperationPatterns, requestFingerprint } from '../src/http/middleware/idempotency.js';
import { nowIso } from '../src/repositories/clock.js';
import { purgeExpiredIdempotencyKeys } from '../src/workers/idempotency-purge.js';
import type { TestResponse } from './support/context.js';
import { TEST_DIALECT } from './support/database.js';
import { expectError, useContext } from './support/expect.js';
import { inADay } from './support/fixtures.js';
import { startWebhookReceiver } from './support/webhook-receiver.js';

const HOUR = 60 * 60 * 1000;
let keyCounter = 0;
const newKey = () => `key-${process.pid}-${Date.now()}-${++keyCounter}`;

describe(`Idempotency-Key on the POSTs without a natural key (${TEST_DIALECT})`, () => {
  const ctx = useContext({ WEBHOOK_ALLOW_LOOPBACK: 'true' });
  const org = () => `/v1/organisations/${ctx().orgA.id}`;
  const post = (path: string, key: string | null, body?: unknown, token?: string) =>
    ctx().request('POST', `${org()}${path}`, {
      body,
      token,
      headers: key === null ? {} : { 'Idempotency-Key': key },
    });
  const count = async (
    table: 'api_tokens' | 'webhook_secrets' | 'predefined_texts' | 'webhook_deliveries',
  ) =>
    (await ctx().db.selectFrom(table).select('id').where('org_id', '=', ctx().orgA.id).execute())
      .length;

  async function withCallbackUrl(): Promise<() => Promise<void>> {
    const receiver = await startWebhookReceiver();
    const res = await ctx().request('PATCH', `${org()}/settings`, {
      body: { org_id: ctx().orgA.id, settings: { callback_url: receiver.url } },
    });
    expect(res.status).toBe(200);
    return () => receiver.close();
  }

  function expectReplay(first: TestResponse, again: TestResponse): void {
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(again.status).toBe(first.status);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('content-type')).toMatch(/^application\/json/);
  }

  it('covers exactly the POSTs the contract marks x-voxkey-retry: idempotency-key, all under an organisation', () => {
    const keyed = Object.values(apiRoutes).filter(
      (r) => (r as { 'x-voxkey-retry'?: string })['x-voxkey-retry'] === 'idempotency-key',
    );
    expect(keyed.map((r) => r.operationId).sort()).toEqual([
      'createApiToken',
      'createChallenge',
      'createPredefinedText',
      'redeliverWebhook',
      'rotateWebhookSecret',
      'sendWebhookTest',
    ]);
    expect(
      keyed.every((r) => r.method === 'post' && r.path.startsWith('/organisations/{org_id}/')),
    ).toBe(true);
    expect(keyedOperationPatterns()).toHaveLength(keyed.length);
  });

  it('createApiToken: a repeat replays the first response, the same bearer, and creates one token', async () => {
    const key = newKey();
    const before = await count('api_tokens');
    const body = { friendly_name: 'idem', enabled: true, expires_at: inADay() };
    const first = await post('/api-tokens', key, body);
    expect(first.status).toBe(201);
    const again = await post('/api-tokens', key, body);
    expectReplay(first, again);
    expect(again.body.bearer).toBe(first.body.bearer);
    expect(await count('api_tokens')).toBe(before + 1);
    // The stored response is sealed: the bearer is not in the table in clear.
    const row = await ctx()
      .db.selectFrom('idempotency_keys')
      .selectAll()
      .where('idempotency_key', '=', key)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ org_id: ctx().orgA.id, status: 'completed', response_status: 201 });
    expect(row.sealed_response).not.toContain(first.body.bearer);
    expect(JSON.stringify(row)).not.toContain(first.body.bearer.slice(-16));
    // The replayed bearer works.
    expect(
      (await ctx().request('GET', `${org()}/api-tokens`, { token: again.body.bearer })).status,
    ).toBe(200);
  });

  it('rotateWebhookSecret: one rotation per key', async () => {
    const key = newKey();
    const before = await count('webhook_secrets');
    const first = await post('/webhook-secret', key);
    expect(first.status).toBe(201);
    expectReplay(first, await post('/webhook-secret', key));
    expect(await count('webhook_secrets')).toBe(before + 1);
  });

  it('createPredefinedText: one text per key (no 409 already_exists on the repeat)', async () => {
    const key = newKey();
    const body = {
      org_id: ctx().orgA.id,
      language: 'en-UK',
      text_code: 4242,
      text: 'Idempotent prompt',
    };
    const first = await post('/predefined-texts', key, body);
    expect(first.status).toBe(201);
    expectReplay(first, await post('/predefined-texts', key, body));
    expect(await count('predefined_texts')).toBe(1);
  });

  it('sendWebhookTest and redeliverWebhook: one queued delivery per key', async () => {
    const close = await withCallbackUrl();
    try {
      const key = newKey();
      const before = await count('webhook_deliveries');
      const first = await post('/webhook-test', key);
      expect(first.status).toBe(202);
      expectReplay(first, await post('/webhook-test', key));
      expect(await count('webhook_deliveries')).toBe(before + 1);

      const redeliverKey = newKey();
      const redelivered = await post(
        `/webhook-deliveries/${first.body.id}/redeliver`,
        redeliverKey,
      );
      expect(redelivered.status).toBe(202);
      expectReplay(
        redelivered,
        await post(`/webhook-deliveries/${first.body.id}/redeliver`, redeliverKey),
      );
    } finally {
      await close();
    }
  });

  it('the same key with a different body, or on another operation, is 409 idempotency_key_reused and does nothing', async () => {
    const key = newKey();
    const expires_at = inADay();
    expect(
      (await post('/api-tokens', key, { friendly_name: 'one', enabled: true, expires_at })).status,
    ).toBe(201);
    const before = await count('api_tokens');
    expectError(
      await post('/api-tokens', key, { friendly_name: 'two', enabled: true, expires_at }),
      409,
      /different request/,
      'idempotency_key_reused',
    );
    expectError(await post('/webhook-secret', key), 409, undefined, 'idempotency_key_reused');
    expect(await count('api_tokens')).toBe(before);
  });

  it('keys are scoped per organisation; the token (and its kind) does not matter', async () => {
    const key = newKey();
    const body = { friendly_name: 'scoped', enabled: true, expires_at: inADay() };
    const first = await post('/api-tokens', key, body);
    // Another token of the same organisation (a production token; the first was a trial token) gets the replay.
    const again = await post('/api-tokens', key, body, first.body.bearer);
    expectReplay(first, again);
    // The same key in another organisation is a new request there.
    const other = await ctx().request('POST', `/v1/organisations/${ctx().orgB.id}/api-tokens`, {
      token: ctx().orgB.token,
      body,
      headers: { 'Idempotency-Key': key },
    });
    expect(other.status).toBe(201);
    expect(other.headers.get('idempotent-replayed')).toBeNull();
    expect(other.body.bearer).not.toBe(first.body.bearer);
  });

  it('without the header every request acts', async () => {
    const before = await count('webhook_secrets');
    await post('/webhook-secret', null);
    await post('/webhook-secret', null);
    expect(await count('webhook_secrets')).toBe(before + 2);
  });

  it('a malformed key is a 400 on the Idempotency-Key field', async () => {
    for (const key of ['x'.repeat(256), 'with space', 'é']) {
      const res = await post('/webhook-secret', key);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('validation_failed');
      expect(res.body.errors).toEqual([
        { field: 'Idempotency-Key', code: 'invalid_format', message: expect.any(String) },
      ]);
    }
  });

  it('a failed request stores nothing: the key can be used again, even with a corrected body', async () => {
    const key = newKey();
    const bad = await post('/api-tokens', key, { friendly_name: '', enabled: true });
    expect(bad.status).toBe(400);
    const good = await post('/api-tokens', key, {
      friendly_name: 'fixed',
      enabled: true,
      expires_at: inADay(),
    });
    expect(good.status).toBe(201);
    expect(good.headers.get('idempotent-replayed')).toBeNull();
  });

  it('concurrent duplicates do not both act: one token, every other answer a replay or 409 idempotency_key_in_progress', async () => {
    const key = newKey();
    const before = await count('api_tokens');
    const body = { friendly_name: 'race', enabled: true, expires_at: inADay() };
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => post('/api-tokens', key, body)),
    );
    expect(await count('api_tokens')).toBe(before + 1);
    const created = answers.filter((a) => a.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((a) => a.body.bearer)).size).toBe(1);
    expect(created.filter((a) => a.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    for (const answer of answers.filter((a) => a.status !== 201)) {
      expectError(answer, 409, undefined, 'idempotency_key_in_progress');
      expect(answer.headers.get('retry-after')).toBe('1');
    }
    // Once the first has finished, a repeat is a replay.
    const later = await post('/api-tokens', key, body);
    expect(later.headers.get('idempotent-replayed')).toBe('true');
    expect(later.body.bearer).toBe(created[0]!.body.bearer);
  });

  async function insertKeyRow(
    key: string,
    values: {
      status: 'in_progress' | 'completed';
      createdAt: string;
      updatedAt: string;
      fingerprint?: string;
    },
  ) {
    await ctx()
      .db.insertInto('idempotency_keys')
      .values({
        org_id: ctx().orgA.id,
        idempotency_key: key,
        request_fingerprint: values.fingerprint ?? 'not-this-request',
        status: values.status,
        response_status: values.status === 'completed' ? 201 : null,
        sealed_response: null,
        created_at: values.createdAt,
        updated_at: values.updatedAt,
      })
      .execute();
  }

  it('a claim in progress answers 409 idempotency_key_in_progress; one abandoned for over a minute is taken over', async () => {
    const fresh = newKey();
    const now = nowIso();
    const fingerprint = requestFingerprint('POST', `${org()}/webhook-secret`, '');
    await insertKeyRow(fresh, {
      status: 'in_progress',
      createdAt: now,
      updatedAt: now,
      fingerprint,
    });
    const busy = await post('/webhook-secret', fresh);
    expectError(busy, 409, /still being processed/, 'idempotency_key_in_progress');
    expect(busy.headers.get('retry-after')).toBe('1');
    // Another request with a key in progress is refused as reused.
    expectError(await post('/webhook-test', fresh), 409, undefined, 'idempotency_key_reused');

    const abandoned = newKey();
    const twoMinutesAgo = new Date(Date.now() - 2 * 60 * 1000).toISOString();
    await insertKeyRow(abandoned, {
      status: 'in_progress',
      createdAt: twoMinutesAgo,
      updatedAt: twoMinutesAgo,
    });
    const res = await post('/webhook-secret', abandoned);
    expect(res.status).toBe(201);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
  });

  it('a key older than 24 hours no longer counts, and the workers purge it', async () => {
    const old = newKey();
    const dayAgo = new Date(Date.now() - 25 * HOUR).toISOString();
    await insertKeyRow(old, { status: 'completed', createdAt: dayAgo, updatedAt: dayAgo });
    const stale = newKey();
    await insertKeyRow(stale, { status: 'completed', createdAt: dayAgo, updatedAt: dayAgo });
    const res = await post('/webhook-secret', old);
    expect(res.status).toBe(201);
    expect(res.headers.get('idempotent-replayed')).toBeNull();

    const recent = newKey();
    await post('/webhook-secret', recent);
    expect(await purgeExpiredIdempotencyKeys(ctx().deps)).toBeGreaterThanOrEqual(1);
    const keys = (
      await ctx().db.selectFrom('idempotency_keys').select('idempotency_key').execute()
    ).map((r) => r.idempotency_key);
    expect(keys).not.toContain(stale);
    expect(keys).toContain(old);
    expect(keys).toContain(recent);
    // A day later, everything here is purged.
    await purgeExpiredIdempotencyKeys(ctx().deps, Date.now() + 25 * HOUR);
    expect(await ctx().db.selectFrom('idempotency_keys').select('id').execute()).toEqual([]);
  });
});
