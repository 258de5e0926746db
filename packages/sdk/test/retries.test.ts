import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  backoffDelay,
  isIdempotent,
  parseRetryAfter,
  retryPolicy,
  VoxkeyError,
} from '../src/index.js';
import { client, json, mockFetch, user } from './helpers.js';

const accepted = { callback_url: 'https://example.com/hook', message: 'Request accepted' };

afterEach(() => {
  vi.useRealTimers();
});

describe('retries', () => {
  it('retries 502/503/504 on GET and then succeeds', async () => {
    const { fetch, calls } = mockFetch(
      json({ code: 502, message: 'x' }, 502),
      json({ code: 503, message: 'x' }, 503),
      json(user(1)),
    );
    expect(await client(fetch).users.get(1)).toEqual(user(1));
    expect(calls).toHaveLength(3);
  });

  it('gives up after `retries` retries and throws the last error', async () => {
    const { fetch, calls } = mockFetch(json({ code: 504, message: 'Gateway timeout' }, 504));
    await expect(client(fetch).users.get(1)).rejects.toMatchObject({
      status: 504,
      message: 'Gateway timeout',
    });
    expect(calls).toHaveLength(3); // 1 + default 2 retries
  });

  it('per-call retries override the client default', async () => {
    const { fetch, calls } = mockFetch(json({ code: 503, message: 'x' }, 503));
    await expect(client(fetch).users.get(1, { retries: 0 })).rejects.toMatchObject({ status: 503 });
    expect(calls).toHaveLength(1);
  });

  it('does not retry 500 or 4xx other than 429', async () => {
    for (const status of [500, 400, 404, 409]) {
      const { fetch, calls } = mockFetch(json({ code: status, message: 'x' }, status));
      await expect(client(fetch).users.get(1)).rejects.toMatchObject({ status });
      expect(calls).toHaveLength(1);
    }
  });

  it('does not retry gateway errors or network errors on PATCH', async () => {
    for (const call of [
      (vk: ReturnType<typeof client>) => vk.users.update(1, { is_active: false }),
      (vk: ReturnType<typeof client>) => vk.tokens.update(2, { enabled: false }),
      (vk: ReturnType<typeof client>) => vk.settings.update({ alert_on_failure: true }),
    ]) {
      const gateway = mockFetch(json({ code: 503, message: 'x' }, 503));
      await expect(call(client(gateway.fetch))).rejects.toMatchObject({ status: 503 });
      expect(gateway.calls).toHaveLength(1);
      const network = mockFetch(new TypeError('fetch failed'));
      await expect(call(client(network.fetch))).rejects.toMatchObject({
        kind: 'network',
        status: 0,
      });
      expect(network.calls).toHaveLength(1);
    }
  });

  it('retries DELETE (safe in the contract: a repeat removes nothing more)', async () => {
    const { fetch, calls } = mockFetch(json({ code: 502, message: 'x' }, 502), json(user(1)));
    expect(await client(fetch).users.delete(1)).toEqual(user(1));
    expect(calls.map((c) => c.method)).toEqual(['DELETE', 'DELETE']);
  });

  it('retries POSTs without a natural key with one Idempotency-Key across the attempts', async () => {
    const text = {
      id: 1,
      org_id: 7,
      language: 'en-UK',
      text_code: 1,
      text: 'x',
      created_at: 'x',
      updated_at: 'x',
    };
    const { fetch, calls } = mockFetch(
      new TypeError('fetch failed'),
      json({ code: 503, message: 'x' }, 503),
      json(text, 201),
    );
    expect(
      await client(fetch).predefinedTexts.create({ language: 'en-UK', text_code: 1, text: 'x' }),
    ).toEqual(text);
    expect(calls).toHaveLength(3);
    const keys = calls.map((c) => c.headers.get('idempotency-key'));
    expect(keys[0]).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(new Set(keys).size).toBe(1);
    expect(calls.every((c) => JSON.stringify(c.body) === JSON.stringify(calls[0]!.body))).toBe(
      true,
    );
  });

  it('retries a keyed POST answered 409 idempotency_key_in_progress (with Retry-After) and gets the replay; other 409s are thrown', async () => {
    const text = {
      id: 1,
      org_id: 7,
      language: 'en-UK',
      text_code: 1,
      text: 'x',
      created_at: 'x',
      updated_at: 'x',
    };
    const busy = json({ code: 409, error: 'idempotency_key_in_progress', message: 'x' }, 409, {
      'Retry-After': '0',
    });
    const { fetch, calls } = mockFetch(busy, json(text, 201, { 'Idempotent-Replayed': 'true' }));
    expect(
      await client(fetch).predefinedTexts.create({ language: 'en-UK', text_code: 1, text: 'x' }),
    ).toEqual(text);
    expect(calls).toHaveLength(2);
    expect(new Set(calls.map((c) => c.headers.get('idempotency-key'))).size).toBe(1);

    const conflict = mockFetch(json({ code: 409, error: 'already_exists', message: 'x' }, 409));
    await expect(
      client(conflict.fetch).predefinedTexts.create({ language: 'en-UK', text_code: 1, text: 'x' }),
    ).rejects.toMatchObject({ status: 409, error: 'already_exists' });
    expect(conflict.calls).toHaveLength(1);
  });

  it('retries 429 on any method (the server did no work)', async () => {
    const { fetch, calls } = mockFetch(
      json({ code: 429, message: 'Too many requests' }, 429, { 'Retry-After': '0' }),
      json(user(1)),
    );
    expect(await client(fetch).users.update(1, { is_active: true })).toEqual(user(1));
    expect(calls).toHaveLength(2);
    expect(calls[1]!.body).toEqual({ is_active: true });
  });

  it('retries enrolment and verification POSTs with the same request_uuid and body', async () => {
    const { fetch, calls } = mockFetch(
      new TypeError('fetch failed'),
      json({ code: 502, message: 'x' }, 502),
      json(accepted, 202),
    );
    const vk = client(fetch);
    const result = await vk.enrollments.create({
      external_id: 'customer-1',
      voice_data: 'UklGRg==',
    });
    expect(calls).toHaveLength(3);
    const uuids = calls.map((c) => (c.body as { request_uuid: string }).request_uuid);
    expect(new Set(uuids).size).toBe(1);
    expect(result.request_uuid).toBe(uuids[0]);
    expect(calls.every((c) => JSON.stringify(c.body) === JSON.stringify(calls[0]!.body))).toBe(
      true,
    );

    const v = mockFetch(json({ code: 503, message: 'x' }, 503), json(accepted, 202));
    await client(v.fetch).verifications.create({
      external_id: 'customer-1',
      voice_data: 'UklGRg==',
      request_uuid: '9b2f6d3e-8c1a-4f5b-9d7e-2a4c6e8f0b1d',
    });
    expect(v.calls.map((c) => (c.body as { request_uuid: string }).request_uuid)).toEqual([
      '9b2f6d3e-8c1a-4f5b-9d7e-2a4c6e8f0b1d',
      '9b2f6d3e-8c1a-4f5b-9d7e-2a4c6e8f0b1d',
    ]);
  });

  it('network errors on GET are retried, then surface as kind "network" with the cause', async () => {
    const cause = new TypeError('fetch failed');
    const { fetch, calls } = mockFetch(cause);
    const error = (await client(fetch)
      .users.get(1)
      .catch((e: unknown) => e)) as VoxkeyError;
    expect(error).toBeInstanceOf(VoxkeyError);
    expect(error).toMatchObject({
      kind: 'network',
      status: 0,
      code: 0,
      method: 'GET',
      url: 'http://voxkey.test/v1/organisations/7/users/1',
    });
    expect(error.cause).toBe(cause);
    expect(error.message).toMatch(/fetch failed.*3 attempts/);
    expect(calls).toHaveLength(3);
  });

  it('honours Retry-After in seconds, with exact waits (fake timers)', async () => {
    vi.useFakeTimers();
    const { fetch, calls } = mockFetch(
      json({ code: 429, message: 'slow down' }, 429, { 'Retry-After': '3' }),
      json(user(1)),
    );
    const promise = client(fetch, { timeoutMs: 0 }).users.get(1);
    await vi.advanceTimersByTimeAsync(2_900);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(200);
    expect(calls).toHaveLength(2);
    await expect(promise).resolves.toEqual(user(1));
  });

  it('honours Retry-After as an HTTP date', async () => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2026-11-21T12:00:00Z'));
    const { fetch, calls } = mockFetch(
      json({ code: 503, message: 'x' }, 503, { 'Retry-After': 'Sat, 21 Nov 2026 12:00:05 GMT' }),
      json(user(1)),
    );
    const promise = client(fetch, { timeoutMs: 0 }).users.get(1);
    await vi.advanceTimersByTimeAsync(4_900);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(200);
    await expect(promise).resolves.toEqual(user(1));
  });

  it('does not wait for a Retry-After beyond maxRetryAfterMs: the 429 surfaces at once', async () => {
    const { fetch, calls } = mockFetch(
      json({ code: 429, message: 'quota' }, 429, { 'Retry-After': '3600' }),
    );
    const error = (await client(fetch)
      .users.get(1)
      .catch((e: unknown) => e)) as VoxkeyError;
    expect(error).toMatchObject({ status: 429, retryAfter: 3600 });
    expect(calls).toHaveLength(1);
  });

  it('uses exponential backoff with full jitter, capped', () => {
    const retry = { baseDelayMs: 250, maxDelayMs: 8000 };
    expect(backoffDelay(0, retry, () => 0.999)).toBe(249);
    expect(backoffDelay(1, retry, () => 0.999)).toBe(499);
    expect(backoffDelay(3, retry, () => 0.5)).toBe(1000);
    expect(backoffDelay(10, retry, () => 0.999)).toBe(7992);
    expect(backoffDelay(4, retry, () => 0)).toBe(0);
  });

  it('waits the backoff between attempts (fake timers, default delays)', async () => {
    vi.useFakeTimers();
    vi.spyOn(Math, 'random').mockReturnValue(0.999);
    const { fetch, calls } = mockFetch(
      json({ code: 503, message: 'x' }, 503),
      json({ code: 503, message: 'x' }, 503),
      json(user(1)),
    );
    const promise = client(fetch, { retries: 2, timeoutMs: 0 }).users.get(1);
    await vi.advanceTimersByTimeAsync(240);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(20); // first delay < 250 ms
    expect(calls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(480);
    expect(calls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(40); // second delay < 500 ms
    expect(calls).toHaveLength(3);
    await expect(promise).resolves.toEqual(user(1));
    vi.restoreAllMocks();
  });

  it('knows which requests are idempotent, from the contract', () => {
    expect(isIdempotent('GET', 'http://x/v1/organisations/1/users')).toBe(true);
    expect(isIdempotent('head', 'http://x/v1/plans')).toBe(true);
    expect(isIdempotent('POST', 'http://x/v1/organisations/1/enrollments')).toBe(true);
    expect(isIdempotent('POST', 'http://x/v1/organisations/1/verifications')).toBe(true);
    expect(isIdempotent('POST', 'http://x/v1/organisations/1/predefined-texts')).toBe(true);
    expect(isIdempotent('POST', 'http://x/v1/organisations/1/webhook-secret')).toBe(true);
    expect(isIdempotent('DELETE', 'http://x/v1/organisations/1/users/2')).toBe(true);
    expect(isIdempotent('PATCH', 'http://x/v1/organisations/1/users/2')).toBe(false);
    expect(isIdempotent('POST', 'http://x/v1/organisations/1/something-new')).toBe(false);
    expect(retryPolicy('POST', 'http://x/v1/organisations/1/enrollments')).toBe('safe');
    expect(retryPolicy('POST', 'http://x/api/v1/organisations/1/api-tokens/')).toBe(
      'idempotency-key',
    );
    expect(retryPolicy('POST', 'http://x/v1/organisations/1/webhook-deliveries/9/redeliver')).toBe(
      'idempotency-key',
    );
    expect(
      retryPolicy(
        'GET',
        'http://x/v1/organisations/1/enrollments/9b2f6d3e-8c1a-4f5b-9d7e-2a4c6e8f0b1d',
      ),
    ).toBe('safe');
    expect(retryPolicy('PATCH', 'http://x/v1/organisations/1/settings')).toBe('never');
    expect(retryPolicy('GET', 'http://x/v1/anything')).toBe('safe');
    expect(retryPolicy('PUT', 'http://x/v1/anything')).toBe('never');
  });

  it("every operation's policy is the x-voxkey-retry of openapi/openapi.json", () => {
    const spec = JSON.parse(
      readFileSync(new URL('../../../openapi/openapi.json', import.meta.url), 'utf8'),
    ) as {
      paths: Record<string, Record<string, { 'x-voxkey-retry': string }>>;
    };
    let n = 0;
    for (const [path, item] of Object.entries(spec.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const url = `http://voxkey.test/v1${path.replace(/\{[^}]+\}/g, '9b2f6d3e-8c1a-4f5b-9d7e-2a4c6e8f0b1d')}`;
        expect(retryPolicy(method, url), `${method} ${path}`).toBe(operation['x-voxkey-retry']);
        n++;
      }
    }
    expect(n).toBeGreaterThan(20);
  });

  it('parses Retry-After', () => {
    expect(parseRetryAfter('5')).toBe(5000);
    expect(parseRetryAfter(' 0 ')).toBe(0);
    expect(
      parseRetryAfter('Sat, 21 Nov 2026 12:00:10 GMT', Date.parse('2026-11-21T12:00:00Z')),
    ).toBe(10_000);
    expect(
      parseRetryAfter('Sat, 21 Nov 2026 11:00:00 GMT', Date.parse('2026-11-21T12:00:00Z')),
    ).toBe(0);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});

/** A fetch that never answers until its request is aborted. */
function hanging() {
  const seen: Request[] = [];
  const fetch = (request: Request) => {
    seen.push(request);
    return new Promise<Response>((_, reject) => {
      request.signal.addEventListener('abort', () => reject(request.signal.reason), { once: true });
    });
  };
  return { fetch, seen };
}

describe('timeouts and abort', () => {
  it('times out each attempt, retries GETs, then throws kind "timeout"', async () => {
    const { fetch, seen } = hanging();
    const started = Date.now();
    const error = (await client(fetch, { timeoutMs: 30 })
      .users.get(1)
      .catch((e: unknown) => e)) as VoxkeyError;
    expect(error).toBeInstanceOf(VoxkeyError);
    expect(error).toMatchObject({ kind: 'timeout', status: 0, code: 0 });
    expect(error.message).toMatch(/timed out after 30 ms/);
    expect((error.cause as DOMException).name).toBe('TimeoutError');
    expect(seen).toHaveLength(3);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('a per-call timeoutMs overrides the client default', async () => {
    const { fetch, seen } = hanging();
    const vk = client(fetch, { timeoutMs: 60_000 });
    await expect(vk.users.get(1, { timeoutMs: 20, retries: 0 })).rejects.toMatchObject({
      kind: 'timeout',
    });
    expect(seen).toHaveLength(1);
  });

  it('a timed-out enrolment is retried (idempotent), a timed-out PATCH is not', async () => {
    const a = hanging();
    await expect(
      client(a.fetch, { timeoutMs: 20 }).enrollments.create({
        external_id: 'e',
        voice_data: 'AAAA',
      }),
    ).rejects.toMatchObject({
      kind: 'timeout',
    });
    expect(a.seen).toHaveLength(3);
    const b = hanging();
    await expect(
      client(b.fetch, { timeoutMs: 20 }).users.update(1, { is_active: false }),
    ).rejects.toMatchObject({ kind: 'timeout' });
    expect(b.seen).toHaveLength(1);
  });

  it("the caller's AbortSignal aborts the request with the signal's reason, without retrying", async () => {
    const { fetch, seen } = hanging();
    const controller = new AbortController();
    const promise = client(fetch).users.get(1, { signal: controller.signal });
    setTimeout(() => controller.abort(), 10);
    const error = await promise.catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(VoxkeyError);
    expect((error as DOMException).name).toBe('AbortError');
    expect(seen).toHaveLength(1);
  });

  it('a custom abort reason is thrown as is', async () => {
    const { fetch } = hanging();
    const controller = new AbortController();
    const reason = new Error('user left the page');
    const promise = client(fetch).users.get(1, { signal: controller.signal });
    controller.abort(reason);
    await expect(promise).rejects.toBe(reason);
  });

  it('an already aborted signal sends nothing', async () => {
    const { fetch, calls } = mockFetch(json(user(1)));
    await expect(client(fetch).users.get(1, { signal: AbortSignal.abort() })).rejects.toMatchObject(
      { name: 'AbortError' },
    );
    expect(calls).toHaveLength(0);
  });

  it('aborting during a backoff wait stops retrying', async () => {
    const { fetch, calls } = mockFetch(
      json({ code: 503, message: 'x' }, 503, { 'Retry-After': '30' }),
    );
    const controller = new AbortController();
    const promise = client(fetch).users.get(1, { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(promise).rejects.toMatchObject({ name: 'AbortError' });
    expect(calls).toHaveLength(1);
  });

  it('AbortSignal.timeout works as a caller signal too', async () => {
    const { fetch } = hanging();
    await expect(
      client(fetch).users.get(1, { signal: AbortSignal.timeout(20) }),
    ).rejects.toMatchObject({ name: 'TimeoutError' });
  });

  it('the signal given to fetch fires when the caller aborts (fallback without AbortSignal.any)', async () => {
    const original = (AbortSignal as { any?: unknown }).any;
    (AbortSignal as { any?: unknown }).any = undefined;
    try {
      const { fetch, seen } = hanging();
      const controller = new AbortController();
      const promise = client(fetch, { timeoutMs: 10_000 }).users.get(1, {
        signal: controller.signal,
      });
      setTimeout(() => controller.abort(), 10);
      await expect(promise).rejects.toMatchObject({ name: 'AbortError' });
      expect(seen[0]!.signal.aborted).toBe(true);
      const t = hanging();
      await expect(
        client(t.fetch, { timeoutMs: 20, retries: 0 }).users.get(1),
      ).rejects.toMatchObject({ kind: 'timeout' });
    } finally {
      (AbortSignal as { any?: unknown }).any = original;
    }
  });
});
