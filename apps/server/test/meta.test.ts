import { readFileSync } from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createApp } from '../src/app.js';
import { openDatabase } from '../src/db/connection.js';
import { TEST_DIALECT } from './support/database.js';
import type { TestContext } from './support/context.js';
import { useContext } from './support/expect.js';
import { fillPath, listOperations, OPENAPI_FILE } from './support/openapi-cases.js';

describe(`health, readiness, OpenAPI and docs (${TEST_DIALECT})`, () => {
  const ctx = useContext();

  it('GET /healthz → 200 {status: "ok"} without a token', async () => {
    const res = await ctx().request('GET', '/healthz', { token: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('GET /readyz → 200 when the database answers, without a token', async () => {
    const res = await ctx().request('GET', '/readyz', { token: null });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready', voice: 'available' });
  });

  it('GET /readyz → 503 when the database does not answer (and /healthz stays 200)', async () => {
    // Nothing listens on port 1: every query fails as if the database were down.
    const broken = openDatabase('postgres://voxkey@127.0.0.1:1/unreachable', { poolSize: 1 });
    onTestFinished(() => broken.close());
    const reported: unknown[] = [];
    const app = createApp(
      { ...ctx().deps, database: broken },
      { reportError: (err) => reported.push(err) },
    );
    const res = await app.request('/readyz');
    expect(res.status).toBe(503);
    const body = (await res.json()) as { code: number; message: string };
    expect(body.code).toBe(503);
    expect(typeof body.message).toBe('string');
    expect(JSON.stringify(body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|kysely/i);
    expect((await app.request('/healthz')).status).toBe(200);
  });

  it('GET /openapi.json is the committed document, byte for byte, without a token', async () => {
    const res = await ctx().app.request('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const served = Buffer.from(await res.arrayBuffer());
    const committed = readFileSync(OPENAPI_FILE);
    expect(served.length).toBe(committed.length);
    expect(served.equals(committed)).toBe(true);
    const doc = JSON.parse(served.toString('utf8'));
    expect(doc.openapi).toMatch(/^3\.1\./);
  });

  it("the document's server is relative (/v1), so it resolves to whatever origin serves it: any port, any proxy", async () => {
    const doc = (await (await ctx().app.request('/openapi.json')).json()) as {
      servers: { url: string }[];
    };
    expect(doc.servers).toEqual([{ url: '/v1', description: expect.any(String) }]);
    for (const origin of [
      'http://127.0.0.1:8080',
      'http://localhost:3000',
      'https://voice.example.com',
    ]) {
      expect(new URL(doc.servers[0]!.url, `${origin}/openapi.json`).href).toBe(`${origin}/v1`);
    }
  });

  it('GET /docs → an HTML page that loads /openapi.json, without a token', async () => {
    const res = await ctx().app.request('/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).toMatch(/<html/i);
    expect(html).toContain('/openapi.json');
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'self'/);
  });

  it('GET /metrics: Prometheus text labelled by route template, with no ids, tokens or names in it', async () => {
    const c = ctx();
    await c.request('GET', `/v1/organisations/${c.orgA.id}/users/987654`);
    await c.request('GET', `/v1/organisations/${c.orgB.id}/users`);
    await c.request('GET', `/v1/organisations/${c.orgA.id}`, { token: null });
    const res = await c.app.request('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toMatch(/^voxkey_http_requests_total\{/m);
    expect(text).toContain(':org_id');
    expect(text).not.toMatch(/\/organisations\/\d/);
    expect(text).not.toMatch(/vk_(live|trial)_/);
    expect(text).not.toContain(c.orgA.token);
    expect(text).not.toMatch(/OrgA|OrgB|example\.com/);
  });

  it('GET /metrics with METRICS_ENABLED=false → 404 JSON', async () => {
    const app = createApp({ ...ctx().deps, config: { ...ctx().config, METRICS_ENABLED: false } });
    const res = await app.request('/metrics');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      code: 404,
      error: 'not_found',
      message: expect.any(String),
    });
  });

  describe('headers on /v1 answers', () => {
    const cases = (c: TestContext): [string, string, { token?: string | null }][] => [
      ['200', `/v1/organisations/${c.orgA.id}`, {}],
      ['401', `/v1/organisations/${c.orgA.id}`, { token: null }],
      ['403', `/v1/organisations/${c.orgB.id}`, {}],
      ['404', `/v1/organisations/${c.orgA.id}/users/987654`, {}],
      ['400', `/v1/organisations/${c.orgA.id}/users?per_page=0`, {}],
    ];

    it('every answer carries an X-Request-Id; a caller-supplied one is echoed', async () => {
      const c = ctx();
      const seen = new Set<string>();
      for (const [status, path, options] of cases(c)) {
        const res = await c.request('GET', path, options);
        expect(String(res.status)).toBe(status);
        const id = res.headers.get('x-request-id');
        expect(id, `${status} ${path}`).toBeTruthy();
        seen.add(id!);
      }
      expect(seen.size).toBe(cases(c).length);
      const echoed = await c.request('GET', `/v1/organisations/${c.orgA.id}`, {
        headers: { 'x-request-id': 'client-req-42' },
      });
      expect(echoed.headers.get('x-request-id')).toBe('client-req-42');
      const tooLong = 'r'.repeat(129);
      const replaced = await c.request('GET', `/v1/organisations/${c.orgA.id}`, {
        headers: { 'x-request-id': tooLong },
      });
      expect(replaced.headers.get('x-request-id')).toBeTruthy();
      expect(replaced.headers.get('x-request-id')).not.toBe(tooLong);
    });

    it('every answer carries the security headers', async () => {
      const c = ctx();
      for (const [status, path, options] of cases(c)) {
        const res = await c.request('GET', path, options);
        expect(res.headers.get('x-content-type-options'), `${status} ${path}`).toBe('nosniff');
        expect(res.headers.get('x-frame-options'), `${status} ${path}`).toBeTruthy();
        expect(res.headers.get('referrer-policy'), `${status} ${path}`).toBeTruthy();
      }
    });

    it('authenticated answers carry RateLimit-Limit, -Remaining and -Reset', async () => {
      const c = ctx();
      for (const [status, path, options] of cases(c).filter(([s]) => s !== '401')) {
        const res = await c.request('GET', path, options);
        for (const h of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) {
          expect(res.headers.get(h), `${h} on ${status} ${path}`).toMatch(/^\d+$/);
        }
      }
    });
  });

  it('every operation of the document is served (none answers "Route not found")', async () => {
    const c = ctx();
    const missing: string[] = [];
    for (const op of listOperations()) {
      const path = fillPath(
        op.path,
        new Proxy(
          {},
          {
            get: (_t, name) =>
              name === 'org_id'
                ? c.orgA.id
                : name === 'request_uuid'
                  ? '9b2f6d3e-8c1a-4f5b-9d7e-2a4c6e8f0b1d'
                  : 987654,
          },
        ) as any,
      );
      // An empty JSON object: enough to reach the route; validation may refuse it, which is fine here.
      const res = await c.request(op.method, path, op.bodySchema ? { body: {} } : {});
      if (res.status === 404 && res.body?.message === 'Route not found')
        missing.push(`${op.method} ${op.path}`);
      if (res.status === 405) missing.push(`${op.method} ${op.path} (405)`);
    }
    expect(missing).toEqual([]);
  });
});
