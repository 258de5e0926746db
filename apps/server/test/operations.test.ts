import { Writable } from 'node:stream';
import { EngineError } from '@voxkey/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { createMetrics } from '../src/observability/metrics.js';
import { takeToken } from '../src/repositories/rate-limits.js';
import { issueToken } from '../src/services/organisations.js';
import { createTestContext, type TestContext } from './support/context.js';
import { TEST_DIALECT } from './support/database.js';
import { moveToPlan, seedJobs, seedUser, silentWav } from './support/fixtures.js';
import pino from 'pino';

describe(`rate limits (${TEST_DIALECT})`, () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext({
      RATE_LIMIT_TOKEN_RPS: '0.5',
      RATE_LIMIT_TOKEN_BURST: '3',
      RATE_LIMIT_TRIAL_RPS: '0.5',
      RATE_LIMIT_TRIAL_BURST: '2',
      RATE_LIMIT_ORG_RPS: '0.5',
      RATE_LIMIT_ORG_BURST: '5',
    });
  });
  afterAll(() => ctx.cleanup());

  it('refuses a token past its burst with 429, Retry-After and RateLimit headers', async () => {
    const path = `/v1/organisations/${ctx.orgA.id}`;
    const first = await ctx.request('GET', path);
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-limit')).toBe('2');
    expect(first.headers.get('ratelimit-remaining')).toBe('1');
    expect((await ctx.request('GET', path)).status).toBe(200);
    const refused = await ctx.request('GET', path);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      code: 429,
      error: 'rate_limited',
      message: expect.stringMatching(/token/),
    });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
  });

  it('limits the organisation across all its tokens', async () => {
    const first = await issueToken(ctx.db, {
      orgId: ctx.orgB.id,
      friendlyName: 'live-1',
      kind: 'live',
    });
    const second = await issueToken(ctx.db, {
      orgId: ctx.orgB.id,
      friendlyName: 'live-2',
      kind: 'live',
    });
    const path = `/v1/organisations/${ctx.orgB.id}`;
    const statuses = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await ctx.request('GET', path, { token: first.bearer })).status);
    for (let i = 0; i < 2; i++)
      statuses.push((await ctx.request('GET', path, { token: second.bearer })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    // The second token has budget left, but the organisation has spent its burst of 5.
    const refused = await ctx.request('GET', path, { token: second.bearer });
    expect(refused.status).toBe(429);
    expect(refused.body.message).toMatch(/organisation/);
  });

  it('shares buckets through the database, so every process draws from the same one', async () => {
    const limit = { ratePerSecond: 1, burst: 2 };
    const now = Date.now();
    expect((await takeToken(ctx.db, ctx.database.dialect, 'shared:test', limit, now)).allowed).toBe(
      true,
    );
    expect((await takeToken(ctx.db, ctx.database.dialect, 'shared:test', limit, now)).allowed).toBe(
      true,
    );
    const refused = await takeToken(ctx.db, ctx.database.dialect, 'shared:test', limit, now);
    expect(refused).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
    expect(
      (await takeToken(ctx.db, ctx.database.dialect, 'shared:test', limit, now + 1100)).allowed,
    ).toBe(true);
    const concurrent = await Promise.all(
      Array.from({ length: 10 }, () =>
        takeToken(
          ctx.db,
          ctx.database.dialect,
          'shared:burst',
          { ratePerSecond: 0.001, burst: 4 },
          now,
        ),
      ),
    );
    expect(concurrent.filter((r) => r.allowed)).toHaveLength(4);
  });
});

describe(`trial quota, request ids, metrics, headers and logs (${TEST_DIALECT})`, () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(() => ctx.cleanup());

  it('limits trial tokens to the sandbox quota of voice requests a month', async () => {
    await ctx.request('PATCH', `/v1/organisations/${ctx.orgA.id}/settings`, {
      body: { org_id: ctx.orgA.id, settings: { callback_url: 'http://localhost:9/hook' } },
    });
    await seedJobs(ctx, 100, { org_id: ctx.orgA.id, external_id: 'quota' });
    await seedUser(ctx, ctx.orgA.id, 'quota');
    const wav = silentWav();
    const res = await ctx.request('POST', `/v1/organisations/${ctx.orgA.id}/verifications`, {
      body: { voice_data: wav, request_uuid: crypto.randomUUID(), external_id: 'quota' },
    });
    expect(res.status).toBe(429);
    expect(res.body.message).toMatch(/sandbox quota of 100/);
    const { bearer } = await issueToken(ctx.db, {
      orgId: ctx.orgA.id,
      friendlyName: 'live',
      kind: 'live',
    });
    const verifyWithLive = () =>
      ctx.request('POST', `/v1/organisations/${ctx.orgA.id}/verifications`, {
        token: bearer,
        body: { voice_data: wav, request_uuid: crypto.randomUUID(), external_id: 'quota' },
      });
    // The quota follows the plan: a production token of a Sandbox organisation is capped too (decisions).
    expect((await verifyWithLive()).status).toBe(429);
    await moveToPlan(ctx, ctx.orgA.id, 'Starter');
    expect((await verifyWithLive()).status).toBe(202);
  });

  it('echoes a valid X-Request-Id and generates one otherwise', async () => {
    const given = await ctx.request('GET', `/v1/organisations/${ctx.orgA.id}`, {
      headers: { 'x-request-id': 'abc-123' },
    });
    expect(given.headers.get('x-request-id')).toBe('abc-123');
    const generated = await ctx.request('GET', '/v1/nope');
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('exposes Prometheus metrics by route template and status', async () => {
    await ctx.request('GET', `/v1/organisations/${ctx.orgA.id}/users`);
    const res = await ctx.app.request('/metrics');
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).toMatch(
      /voxkey_http_requests_total\{method="GET",route="\/v1\/organisations\/:org_id\/users",status="200"\} \d+/,
    );
    expect(text).toContain('voxkey_http_request_duration_seconds_bucket');
    expect(text).toContain('voxkey_job_queue_depth{status="queued"}');
    expect(text).toContain('voxkey_process_resident_memory_bytes');
    expect(text).not.toMatch(/organisations\/\d+/);
  });

  it('sends security headers, with a strict CSP on the docs page', async () => {
    const docs = await ctx.app.request('/docs');
    expect(docs.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(docs.headers.get('x-content-type-options')).toBe('nosniff');
    const api = await ctx.request('GET', `/v1/organisations/${ctx.orgA.id}`);
    expect(api.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('logs one structured line per request and never the bearer token', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = pino(
      { level: 'info', redact: ['authorization', 'headers.authorization'] },
      sink,
    );
    const app = createApp({ ...ctx.deps, observability: { logger, metrics: createMetrics() } });
    await app.request(`/v1/organisations/${ctx.orgA.id}`, {
      headers: { authorization: `Bearer ${ctx.orgA.token}`, 'x-request-id': 'log-test' },
    });
    const entry = JSON.parse(lines.find((l) => l.includes('log-test'))!);
    expect(entry).toMatchObject({
      reqId: 'log-test',
      orgId: ctx.orgA.id,
      method: 'GET',
      route: '/v1/organisations/:org_id',
      status: 200,
    });
    expect(entry.latencyMs).toEqual(expect.any(Number));
    expect(lines.join('')).not.toContain(ctx.orgA.token);
  });
});

describe(`voice processing unavailable (${TEST_DIALECT})`, () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(() => ctx.cleanup());

  // What the engine says of a missing model: a local path and a CLI hint, for the operator only.
  const ENGINE_DETAIL =
    'model manifest not found at /srv/voxkey/models/manifest.json; run `npx voxkey models pull`';
  const CLIENT_MESSAGE =
    "Voice processing is unavailable on this server (model_missing); the operator's server log has the details.";
  const unavailable = { code: 503, error: 'unavailable', message: CLIENT_MESSAGE };
  const expectNoDetail = (body: unknown) => {
    const text = JSON.stringify(body);
    for (const part of ['/srv/', 'manifest.json', 'voxkey models pull']) {
      expect(text).not.toContain(part);
    }
  };

  const voiceRequest = (kind: 'enrollments' | 'verifications') =>
    ctx.request('POST', `/v1/organisations/${ctx.orgA.id}/${kind}`, {
      body: { voice_data: silentWav(), request_uuid: crypto.randomUUID(), external_id: 'x' },
    });
  const audioCheck = () =>
    ctx.request('POST', `/v1/organisations/${ctx.orgA.id}/audio-checks`, {
      body: { voice_data: silentWav() },
    });

  it('answers voice requests with 503 naming the engine error code, while the rest of the API works', async () => {
    ctx.deps.voiceUnavailable = { code: 'model_missing' };
    try {
      const res = await voiceRequest('enrollments');
      expect(res.status).toBe(503);
      expect(res.body).toEqual(unavailable);
      expect((await ctx.request('GET', `/v1/organisations/${ctx.orgA.id}`)).status).toBe(200);
    } finally {
      ctx.deps.voiceUnavailable = undefined;
    }
  });

  it('never shows the engine message (local paths, CLI hints) in 503 bodies or on /readyz', async () => {
    ctx.deps.voiceUnavailable = { code: 'model_missing' };
    const audioChecker = ctx.deps.audioChecker;
    ctx.deps.audioChecker = undefined;
    try {
      for (const res of [
        await voiceRequest('enrollments'),
        await voiceRequest('verifications'),
        await audioCheck(),
      ]) {
        expect(res.status).toBe(503);
        expect(res.body).toEqual(unavailable);
        expectNoDetail(res.body);
      }
      const ready = await ctx.request('GET', '/readyz', { token: null });
      expect(ready.status).toBe(200);
      expect(ready.body).toEqual({ status: 'ready', voice: 'unavailable (model_missing)' });
      expectNoDetail(ready.body);
    } finally {
      ctx.deps.voiceUnavailable = undefined;
      ctx.deps.audioChecker = audioChecker;
    }
  });

  it('an engine that fails to start on an audio check: 503 with the code, the message in the server log only', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const { logger } = ctx.deps.observability;
    const audioChecker = ctx.deps.audioChecker;
    ctx.deps.observability.logger = pino({ level: 'info' }, sink);
    ctx.deps.audioChecker = {
      checkAudio: () => Promise.reject(new EngineError('model_missing', ENGINE_DETAIL)),
    };
    try {
      const res = await audioCheck();
      expect(res.status).toBe(503);
      expect(res.body).toEqual(unavailable);
      expectNoDetail(res.body);
      expect(lines.join('')).toContain(ENGINE_DETAIL);
    } finally {
      ctx.deps.observability.logger = logger;
      ctx.deps.audioChecker = audioChecker;
    }
  });
});
