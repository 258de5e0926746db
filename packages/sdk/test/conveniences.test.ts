import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SDK_VERSION, VoxkeyError, type RequestRecord } from '../src/index.js';
import { client, json, mockFetch } from './helpers.js';

const UUID = '9b2f6d3e-8c1a-4f5b-9d7e-2a4c6e8f0b1d';
const accepted = { callback_url: 'https://example.com/hook', message: 'Request accepted' };

function record(
  status: RequestRecord['status'],
  kind: RequestRecord['kind'] = 'verification',
): RequestRecord {
  const completed = status === 'completed';
  return {
    request_uuid: UUID,
    kind,
    external_id: 'customer-1',
    status,
    result: completed && kind === 'verification' ? 'verified' : null,
    match_score: completed && kind === 'verification' ? 0.91 : null,
    deepfake_detected: completed && kind === 'verification' ? false : null,
    quality_score: null,
    failure_reason: status === 'failed' ? 'insufficient_speech' : null,
    device_mismatch: null,
    user_id: completed ? 1 : null,
    created_at: '2026-11-21T10:00:00.000Z',
    completed_at: completed || status === 'failed' ? '2026-11-21T10:00:02.000Z' : null,
    mode: kind === 'enrollment' ? 'new' : null,
    samples: completed && kind === 'enrollment' ? 1 : null,
    deepfake_score: completed ? 0.02 : null,
    match_threshold: completed && kind === 'verification' ? 0.85 : null,
    deepfake_threshold: completed ? 0.5 : null,
    models: completed ? { speaker: 'voxkey-speaker-v2', spoof: 'voxkey-spoof-v2' } : null,
    voiceprint_upgraded: completed && kind === 'verification' ? false : null,
    recording_quality: null,
    phrase: null,
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('User-Agent', () => {
  it('is voxkey-sdk/<package version> outside browsers', async () => {
    const { version } = JSON.parse(
      readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    expect(SDK_VERSION).toBe(version);
    const { fetch, calls } = mockFetch(json({ results: [] }, 200, { 'X-Total-Pages': '0' }));
    await client(fetch).plans.list();
    expect(calls[0]!.headers.get('user-agent')).toBe(`voxkey-sdk/${version}`);
  });

  it('a User-Agent in the client headers wins', async () => {
    const { fetch, calls } = mockFetch(json({ results: [] }, 200, { 'X-Total-Pages': '0' }));
    await client(fetch, { headers: { 'User-Agent': 'kiosk/2 voxkey-sdk' } }).plans.list();
    expect(calls[0]!.headers.get('user-agent')).toBe('kiosk/2 voxkey-sdk');
  });

  it('is not set in a browser (a document exists)', async () => {
    vi.stubGlobal('document', {});
    try {
      const { fetch, calls } = mockFetch(json({ results: [] }, 200, { 'X-Total-Pages': '0' }));
      await client(fetch).plans.list();
      expect(calls[0]!.headers.get('user-agent')).toBeNull();
    } finally {
      vi.unstubAllGlobals();
    }
  });
});

describe('Idempotency-Key', () => {
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
  const delivery = { id: 9, event_type: 'verification.completed', status: 'pending' };

  it('is sent on the POSTs without a natural key, a fresh one per call', async () => {
    const { fetch, calls } = mockFetch(
      json(created, 201),
      json(created, 201),
      json({ secret: 'whsec_x' }, 201),
      json(delivery, 202),
    );
    const vk = client(fetch);
    await vk.tokens.create({ friendly_name: 'ci' });
    await vk.tokens.create({ friendly_name: 'ci' });
    await vk.webhooks.rotateSecret();
    await vk.webhooks.redeliver(9);
    const keys = calls.map((c) => c.headers.get('idempotency-key'));
    expect(keys.every((k) => typeof k === 'string' && /^[0-9a-f-]{36}$/.test(k))).toBe(true);
    expect(new Set(keys).size).toBe(4);
  });

  it('is not sent on reads, PATCH, DELETE, or the POSTs keyed by request_uuid', async () => {
    const { fetch, calls } = mockFetch(
      json(accepted, 202),
      json(accepted, 202),
      json({ results: [] }, 200, { 'X-Total-Pages': '0' }),
    );
    const vk = client(fetch);
    await vk.enrollments.create({ external_id: 'e', voice_data: 'UklGRg==' });
    await vk.verifications.create({ external_id: 'e', voice_data: 'UklGRg==' });
    await vk.users.list();
    await vk.users.update(1, { is_active: true }).catch(() => {});
    await vk.users.delete(1).catch(() => {});
    expect(calls).toHaveLength(5);
    expect(calls.map((c) => c.headers.get('idempotency-key'))).toEqual([
      null,
      null,
      null,
      null,
      null,
    ]);
  });

  it("keeps the caller's own key, on every attempt", async () => {
    const { fetch, calls } = mockFetch(json({ code: 502, message: 'x' }, 502), json(created, 201));
    await client(fetch).tokens.create(
      { friendly_name: 'ci' },
      { headers: { 'Idempotency-Key': 'my-key-1' } },
    );
    expect(calls.map((c) => c.headers.get('idempotency-key'))).toEqual(['my-key-1', 'my-key-1']);
  });

  it('the raw client gets one too', async () => {
    const { fetch, calls } = mockFetch(json({ secret: 'whsec_x' }, 201));
    await client(fetch).raw.POST('/organisations/{org_id}/webhook-secret', {
      params: { path: { org_id: '7' } },
    });
    expect(calls[0]!.headers.get('idempotency-key')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('logger', () => {
  it('logs each attempt and retry, never the token or voice_data', async () => {
    const lines: Array<{ message: string; fields?: Record<string, unknown> }> = [];
    const logger = {
      debug: (message: string, fields?: Record<string, unknown>) => lines.push({ message, fields }),
    };
    const voice = 'UklGRiQAAABXQVZFZm10IBAAAAABAAEAgD4AAAB9AAACABAAZGF0YQAAAAA=';
    const { fetch } = mockFetch(
      json({ code: 503, message: 'x' }, 503),
      new TypeError('fetch failed'),
      json(accepted, 202),
    );
    await client(fetch, { logger, token: 'vk_live_secret_token' }).enrollments.create({
      external_id: 'e',
      voice_data: voice,
    });
    const text = lines.map((l) => `${l.message} ${JSON.stringify(l.fields)}`).join('\n');
    expect(lines.map((l) => l.message)).toEqual([
      expect.stringMatching(
        /^voxkey: POST http:\/\/voxkey\.test\/v1\/organisations\/7\/enrollments -> 503 in \d+ ms \(attempt 1\/3\)$/,
      ),
      expect.stringMatching(/^voxkey: retrying POST \S+ in \d+ ms after 503 \(attempt 2\/3\)$/),
      expect.stringMatching(/^voxkey: POST \S+ failed: fetch failed \(attempt 2\/3\)$/),
      expect.stringMatching(/^voxkey: retrying POST \S+ in \d+ ms \(attempt 3\/3\)$/),
      expect.stringMatching(/^voxkey: POST \S+ -> 202 in \d+ ms \(attempt 3\/3\)$/),
    ]);
    expect(lines[0]!.fields).toMatchObject({
      method: 'POST',
      status: 503,
      attempt: 1,
      attempts: 3,
    });
    expect(text).not.toContain('vk_live_secret_token');
    expect(text).not.toContain(voice);
    expect(text).not.toMatch(/voice_data|authorization|bearer/i);
  });

  it('a throwing logger does not fail the call; console works as a logger', async () => {
    const { fetch } = mockFetch(json({ results: [] }, 200, { 'X-Total-Pages': '0' }));
    const throwing = {
      debug: () => {
        throw new Error('log sink down');
      },
    };
    await expect(client(fetch, { logger: throwing }).plans.list()).resolves.toMatchObject({
      results: [],
    });
    const debug = vi.spyOn(console, 'debug').mockImplementation(() => {});
    await client(fetch, { logger: console }).plans.list();
    expect(debug).toHaveBeenCalledWith(
      expect.stringMatching(/^voxkey: GET http:\/\/voxkey\.test\/v1\/plans -> 200/),
      expect.objectContaining({ status: 200 }),
    );
    debug.mockRestore();
  });

  it('per-call retry or timeout overrides keep the logger', async () => {
    const lines: string[] = [];
    const { fetch } = mockFetch(json({ results: [] }, 200, { 'X-Total-Pages': '0' }));
    await client(fetch, { logger: { debug: (m) => lines.push(m) } }).plans.list(undefined, {
      retries: 0,
      timeoutMs: 1000,
    });
    expect(lines).toEqual([expect.stringMatching(/-> 200 in \d+ ms \(attempt 1\/1\)$/)]);
  });
});

describe('waitForResult', () => {
  it('polls the request record until it is completed', async () => {
    const { fetch, calls } = mockFetch(
      json(record('queued')),
      json(record('processing')),
      json(record('completed')),
    );
    const result = await client(fetch).verifications.waitForResult(UUID, { intervalMs: 5 });
    expect(result).toMatchObject({ status: 'completed', result: 'verified' });
    expect(calls).toHaveLength(3);
    expect(
      calls.every(
        (c) => c.method === 'GET' && c.url.pathname === `/v1/organisations/7/verifications/${UUID}`,
      ),
    ).toBe(true);
  });

  it('returns a failed enrolment too (the record says why)', async () => {
    const { fetch, calls } = mockFetch(json(record('failed', 'enrollment')));
    expect(await client(fetch).enrollments.waitForResult(UUID)).toMatchObject({
      status: 'failed',
      kind: 'enrollment',
    });
    expect(calls[0]!.url.pathname).toBe(`/v1/organisations/7/enrollments/${UUID}`);
  });

  it('throws a VoxkeyError of kind "timeout" after timeoutMs (fake timers)', async () => {
    vi.useFakeTimers();
    const { fetch, calls } = mockFetch(json(record('queued')));
    const promise = client(fetch, { timeoutMs: 0 }).enrollments.waitForResult(UUID, {
      timeoutMs: 5_000,
      intervalMs: 1_000,
    });
    const settled = promise.catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(5_100);
    const error = (await settled) as VoxkeyError;
    expect(error).toBeInstanceOf(VoxkeyError);
    expect(error).toMatchObject({ kind: 'timeout', status: 0 });
    expect(error.message).toMatch(
      new RegExp(`enrolment ${UUID} did not complete within 5000 ms \\(last status: queued\\)`),
    );
    expect(calls.length).toBeGreaterThanOrEqual(5);
    expect(calls.length).toBeLessThanOrEqual(6);
  });

  it('rethrows an API error (404 for an unknown request_uuid) at once', async () => {
    const { fetch, calls } = mockFetch(json({ code: 404, message: 'Request not found' }, 404));
    await expect(client(fetch).verifications.waitForResult(UUID)).rejects.toMatchObject({
      kind: 'http',
      status: 404,
    });
    expect(calls).toHaveLength(1);
  });

  it("stops on the caller's signal with its reason", async () => {
    const { fetch } = mockFetch(json(record('processing')));
    const controller = new AbortController();
    const promise = client(fetch).verifications.waitForResult(UUID, {
      intervalMs: 50,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(new Error('user left')), 20);
    await expect(promise).rejects.toThrow('user left');
  });
});
