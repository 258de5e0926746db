import { describe, expect, it } from 'vitest';
import { createVoxkeyClient, unwrap, VoxkeyError } from '../src/index.js';
import { client, json, mockFetch, user } from './helpers.js';

describe('typed success', () => {
  it('gets a user with the bearer token, org and id in the path', async () => {
    const { fetch, calls } = mockFetch(json(user(3)));
    const vk = client(fetch);
    const u = await vk.users.get(3);
    expect(u).toEqual(user(3));
    expect(calls).toHaveLength(1);
    expect(calls[0]!.method).toBe('GET');
    expect(calls[0]!.url.href).toBe('http://voxkey.test/v1/organisations/7/users/3');
    expect(calls[0]!.headers.get('authorization')).toBe('Bearer vk_test_token');
    expect(calls[0]!.headers.get('accept')).toBe('application/json');
  });

  it('sends list parameters in snake_case and repeats filter', async () => {
    const { fetch, calls } = mockFetch(
      json({ results: [user(1)] }, 200, { 'X-Total-Pages': '4', 'X-Total-Count': '31' }),
    );
    const page = await client(fetch).users.list({
      filter: ['is_active=true', 'id=gte:1'],
      sort: 'id:desc',
      perPage: 10,
      page: 2,
    });
    expect(page).toEqual({ results: [user(1)], page: 2, totalPages: 4, totalCount: 31 });
    const q = calls[0]!.url.searchParams;
    expect(q.getAll('filter')).toEqual(['is_active=true', 'id=gte:1']);
    expect(q.get('sort')).toBe('id:desc');
    expect(q.get('per_page')).toBe('10');
    expect(q.get('page')).toBe('2');
  });

  it("lists the organisation's subscriptions and invoices with list parameters, and iterates them", async () => {
    const subscription = (id: number) => ({
      id,
      org_id: 7,
      plan_id: 1,
      start_date: '2026-11-01',
      end_date: null,
      created_at: '2026-11-01T10:00:00.000Z',
      updated_at: '2026-11-01T10:00:00.000Z',
    });
    const invoice = (id: number) => ({
      id,
      org_id: 7,
      sub_id: 4,
      invoice_sequence: id,
      quotas: { monthly_verifications: 10, overage_calls: 0 },
      file_ref: `invoices/7/${id}.json`,
      created_at: '2026-12-01T00:00:00.000Z',
      updated_at: '2026-12-01T00:00:00.000Z',
    });
    const { fetch, calls } = mockFetch(
      json({ results: [subscription(4)] }, 200, { 'X-Total-Pages': '1', 'X-Total-Count': '1' }),
      json({ results: [invoice(9), invoice(8)] }, 200, {
        'X-Total-Pages': '2',
        'X-Total-Count': '3',
      }),
      json({ results: [invoice(1)] }, 200, { 'X-Total-Pages': '2', 'X-Total-Count': '3' }),
      json({ results: [invoice(9), invoice(8)] }, 200, {
        'X-Total-Pages': '2',
        'X-Total-Count': '3',
      }),
      json({ results: [invoice(1)] }, 200, { 'X-Total-Pages': '2', 'X-Total-Count': '3' }),
    );
    const vk = client(fetch);
    expect(await vk.subscriptions.list({ sort: 'id:desc' })).toEqual({
      results: [subscription(4)],
      page: 1,
      totalPages: 1,
      totalCount: 1,
    });
    const page = await vk.invoices.list({ filter: 'sub_id=4', perPage: 2 });
    expect(page).toEqual({
      results: [invoice(9), invoice(8)],
      page: 1,
      totalPages: 2,
      totalCount: 3,
    });
    expect((await vk.invoices.list({ filter: 'sub_id=4', perPage: 2, page: 2 })).results).toEqual([
      invoice(1),
    ]);
    const ids: number[] = [];
    for await (const i of vk.invoices.iterate({ filter: 'sub_id=4', perPage: 2 })) ids.push(i.id);
    expect(ids).toEqual([9, 8, 1]);
    expect(calls.map((c) => `${c.method} ${c.url.pathname}${c.url.search}`)).toEqual([
      'GET /v1/organisations/7/subscriptions?sort=id%3Adesc',
      'GET /v1/organisations/7/invoices?filter=sub_id%3D4&per_page=2',
      'GET /v1/organisations/7/invoices?filter=sub_id%3D4&per_page=2&page=2',
      'GET /v1/organisations/7/invoices?filter=sub_id%3D4&per_page=2&page=1',
      'GET /v1/organisations/7/invoices?filter=sub_id%3D4&per_page=2&page=2',
    ]);
  });

  it('fills org_id into bodies that need it', async () => {
    const text = {
      id: 1,
      org_id: 7,
      language: 'en-UK',
      text_code: 1,
      text: 'Hi',
      created_at: 'x',
      updated_at: 'x',
    };
    const { fetch, calls } = mockFetch(
      json(text, 201),
      json({
        id: 1,
        org_id: 7,
        settings: { alert_on_failure: true, callback_url: null },
        created_at: 'x',
        updated_at: 'x',
      }),
    );
    const vk = client(fetch);
    await vk.predefinedTexts.create({ language: 'en-UK', text_code: 1, text: 'Hi' });
    await vk.settings.update({ alert_on_failure: true });
    expect(calls[0]!.body).toEqual({ org_id: 7, language: 'en-UK', text_code: 1, text: 'Hi' });
    expect(calls[1]!.method).toBe('PATCH');
    expect(calls[1]!.body).toEqual({ org_id: 7, settings: { alert_on_failure: true } });
  });

  it('defaults enabled to true when creating a token', async () => {
    const created = {
      bearer: 'vk_live_x',
      token: {
        id: 2,
        friendly_name: 'ci',
        enabled: true,
        expires_at: null,
        created_at: 'x',
        updated_at: 'x',
      },
    };
    const { fetch, calls } = mockFetch(json(created, 201));
    expect(await client(fetch).tokens.create({ friendly_name: 'ci' })).toEqual(created);
    expect(calls[0]!.body).toEqual({ friendly_name: 'ci', enabled: true });
  });

  it('plans need no organisation; org routes without orgId fail before any request', async () => {
    const { fetch, calls } = mockFetch(json({ results: [] }, 200, { 'X-Total-Pages': '0' }));
    const vk = createVoxkeyClient({ baseUrl: 'http://voxkey.test/v1', token: 't', fetch });
    expect((await vk.plans.list()).results).toEqual([]);
    await expect(vk.users.list()).rejects.toThrow(/orgId/);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.url.pathname).toBe('/v1/plans');
  });

  it('accepts a token function, called per request', async () => {
    let n = 0;
    const { fetch, calls } = mockFetch(json(user(1)));
    const vk = client(fetch, { token: async () => `tok-${++n}` });
    await vk.users.get(1);
    await vk.users.get(1);
    expect(calls.map((c) => c.headers.get('authorization'))).toEqual([
      'Bearer tok-1',
      'Bearer tok-2',
    ]);
  });

  it('sends client-wide and per-call headers', async () => {
    const { fetch, calls } = mockFetch(json(user(1)));
    const vk = client(fetch, { headers: { 'X-App': 'kiosk' } });
    await vk.users.get(1, { headers: { 'X-Trace': 'abc' } });
    expect(calls[0]!.headers.get('x-app')).toBe('kiosk');
    expect(calls[0]!.headers.get('x-trace')).toBe('abc');
  });

  it('the raw client shares auth and retries', async () => {
    const { fetch, calls } = mockFetch(
      json({ code: 503, message: 'x' }, 503),
      json({ results: [] }, 200, { 'X-Total-Pages': '0' }),
    );
    const { data } = await client(fetch).raw.GET('/plans');
    expect(data).toEqual({ results: [] });
    expect(calls).toHaveLength(2);
    expect(calls[1]!.headers.get('authorization')).toBe('Bearer vk_test_token');
  });

  it('validates options', () => {
    expect(() => createVoxkeyClient({ baseUrl: '', token: 't' })).toThrow(/baseUrl/);
    expect(() => createVoxkeyClient({ baseUrl: 'http://x', token: '' })).toThrow(/token/);
    expect(() => createVoxkeyClient({ baseUrl: 'http://x', token: 't', retries: -1 })).toThrow(
      /retries/,
    );
  });

  it('raw client returns { data, error } and unwrap() throws VoxkeyError', async () => {
    const { fetch } = mockFetch(json(user(5)), json({ code: 404, message: 'User not found' }, 404));
    const vk = client(fetch);
    const ok = await vk.raw.GET('/organisations/{org_id}/users/{user_id}', {
      params: { path: { org_id: '7', user_id: '5' } },
    });
    expect(ok.data?.external_id).toBe('customer-5');
    const missing = await vk.raw.GET('/organisations/{org_id}/users/{user_id}', {
      params: { path: { org_id: '7', user_id: '6' } },
    });
    expect(missing.error).toEqual({ code: 404, message: 'User not found' });
    expect(() => unwrap(missing)).toThrow(VoxkeyError);
  });
});

describe('VoxkeyError mapping', () => {
  async function failWith(response: Response) {
    const { fetch } = mockFetch(response);
    try {
      await client(fetch, { retries: 0 }).users.get(1);
    } catch (error) {
      return error as VoxkeyError;
    }
    throw new Error('expected a VoxkeyError');
  }

  it('400 carries the validation errors', async () => {
    const e = await failWith(
      json(
        {
          code: 400,
          message: 'Request validation failed',
          errors: [{ field: 'request_uuid', message: 'This field is required' }],
        },
        400,
        {
          'X-Request-Id': 'req_123',
        },
      ),
    );
    expect(e).toBeInstanceOf(VoxkeyError);
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe('VoxkeyError');
    expect(e.kind).toBe('http');
    expect(e.status).toBe(400);
    expect(e.code).toBe(400);
    expect(e.message).toBe('Request validation failed');
    expect(e.errors).toEqual([{ field: 'request_uuid', message: 'This field is required' }]);
    expect(e.requestId).toBe('req_123');
    expect(e.method).toBe('GET');
    expect(e.url).toBe('http://voxkey.test/v1/organisations/7/users/1');
  });

  it.each([
    [401, 'Invalid or expired authentication credentials'],
    [403, 'Forbidden'],
    [404, 'User not found'],
    [409, 'A text with this language and text_code exists'],
    [500, 'Internal server error'],
  ])('%i maps status, code and message', async (status, message) => {
    const e = await failWith(json({ code: status, message }, status));
    expect(e).toMatchObject({
      kind: 'http',
      status,
      code: status,
      message,
      errors: [],
      requestId: undefined,
    });
  });

  it('exposes the machine-readable error and each field error code', async () => {
    const e = await failWith(
      json(
        {
          code: 400,
          error: 'validation_failed',
          message: 'Request validation failed',
          errors: [
            { field: 'request_uuid', code: 'invalid_uuid', message: 'Must be a valid UUID v4' },
            {
              field: 'voice_data',
              code: 'sample_rate_too_low',
              message: 'sample rate 8000 Hz is below the required 16000 Hz',
            },
          ],
        },
        400,
      ),
    );
    expect(e.error).toBe('validation_failed');
    expect(e.errors.map((f) => f.code)).toEqual(['invalid_uuid', 'sample_rate_too_low']);
  });

  it.each([
    [409, 'already_enrolled'],
    [409, 'enrollment_in_progress'],
    [409, 'no_callback_url'],
    [409, 'request_uuid_reused'],
    [404, 'not_found'],
    [429, 'queue_full'],
    [429, 'quota_exceeded'],
    [503, 'unavailable'],
  ] as const)('%i %s: error tells responses of one status apart', async (status, error) => {
    const e = await failWith(json({ code: status, error, message: 'x' }, status));
    expect(e).toMatchObject({ kind: 'http', status, code: status, error });
  });

  it('error is undefined when the body is not a Voxkey error', async () => {
    const e = await failWith(
      new Response('Bad gateway', { status: 502, statusText: 'Bad Gateway' }),
    );
    expect(e.error).toBeUndefined();
    const odd = await failWith(json({ code: 418, error: 42, message: 'x' }, 418));
    expect(odd.error).toBeUndefined();
  });

  it('429 carries retryAfter', async () => {
    const e = await failWith(
      json({ code: 429, message: 'Too many requests' }, 429, { 'Retry-After': '7' }),
    );
    expect(e.status).toBe(429);
    expect(e.retryAfter).toBe(7);
  });

  it('a non-JSON error body still gives a useful message', async () => {
    const e = await failWith(
      new Response('Bad gateway', { status: 502, statusText: 'Bad Gateway' }),
    );
    expect(e).toMatchObject({
      status: 502,
      code: 502,
      message: 'Bad gateway',
      body: 'Bad gateway',
    });
    const empty = await failWith(
      new Response(null, { status: 503, statusText: 'Service Unavailable' }),
    );
    expect(empty).toMatchObject({
      status: 503,
      code: 503,
      message: 'HTTP 503 Service Unavailable',
    });
  });

  it('isVoxkeyError recognises errors across copies (brand, not prototype)', async () => {
    const e = await failWith(json({ code: 404, message: 'x' }, 404));
    const foreign = Object.assign(Object.create(Error.prototype), {
      [Symbol.for('@voxkey/sdk.VoxkeyError')]: true,
    });
    expect(VoxkeyError.is(e)).toBe(true);
    expect(foreign instanceof VoxkeyError).toBe(true);
    expect(new Error('x') instanceof VoxkeyError).toBe(false);
  });
});
