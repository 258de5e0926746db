import { describe, expect, it, onTestFinished } from 'vitest';
import { createApp } from '../src/app.js';
import { type Database, openDatabase } from '../src/db/connection.js';
import { TEST_DIALECT } from './support/database.js';
import { expectError, expectInvalidId, expectValidation, useContext } from './support/expect.js';
import { orgPath } from './support/fixtures.js';
import { fillPath, listOperations, validBody } from './support/openapi-cases.js';

/** Every operation with a JSON body, from the document, with A's own ids for the path. */
const bodyOperations = listOperations().filter((op) => op.bodySchema);

describe(`error hygiene (${TEST_DIALECT})`, () => {
  const ctx = useContext({ BODY_LIMIT_BYTES: '2048' });
  const pathOf = (template: string) =>
    fillPath(
      template,
      new Proxy(
        {},
        {
          get: (_t, name) =>
            name === 'org_id'
              ? ctx().orgA.id
              : name === 'request_uuid'
                ? '9b2f6d3e-8c1a-4f5b-9d7e-2a4c6e8f0b1d'
                : 1,
        },
      ) as any,
    );
  const textsPath = () => orgPath(ctx().orgA.id, '/predefined-texts');
  const validText = (code: number, text = 'hello') => ({
    org_id: ctx().orgA.id,
    language: 'en-UK',
    text_code: code,
    text,
  });

  describe('malformed JSON → 400 on field body', () => {
    it.each(bodyOperations.map((op) => [`${op.method} ${op.path}`, op] as const))(
      '%s',
      async (_label, op) => {
        for (const raw of [
          '{"friendly_name":',
          '{not json}',
          "{'single':'quotes'}",
          '{"a":1,}',
          '\u0000',
        ]) {
          const res = await ctx().request(op.method, pathOf(op.path), {
            rawBody: raw,
            headers: { 'content-type': 'application/json' },
          });
          expectValidation(res, [{ field: 'body', message: /json/i }]);
        }
      },
    );

    it('an empty body with Content-Type: application/json → 400 on body', async () => {
      const res = await ctx().request('POST', textsPath(), {
        rawBody: '',
        headers: { 'content-type': 'application/json' },
      });
      expectValidation(res, ['body']);
    });

    it.each([
      ['an array', '[]'],
      ['null', 'null'],
      ['a string', '"text"'],
      ['a number', '42'],
    ])('a JSON body that is %s, not an object → 400 on body', async (_name, raw) => {
      const res = await ctx().request('POST', textsPath(), {
        rawBody: raw,
        headers: { 'content-type': 'application/json' },
      });
      expectValidation(res, ['body']);
    });
  });

  describe('Content-Type', () => {
    it.each([
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
      'text/json',
    ])('%s with a body → 415 {code, message}', async (type) => {
      const res = await ctx().request('POST', textsPath(), {
        rawBody: JSON.stringify(validText(1)),
        headers: { 'content-type': type },
      });
      expectError(res, 415);
    });

    it('a string body without any Content-Type → 415', async () => {
      const res = await ctx().request('POST', textsPath(), {
        rawBody: JSON.stringify(validText(1)),
      });
      expectError(res, 415);
    });

    it.each(bodyOperations.map((op) => [`${op.method} ${op.path}`, op] as const))(
      '415 on every body route: %s',
      async (_label, op) => {
        expectError(
          await ctx().request(op.method, pathOf(op.path), {
            rawBody: '{}',
            headers: { 'content-type': 'text/plain' },
          }),
          415,
        );
      },
    );

    it.each([
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
      'Application/JSON',
      'application/vnd.voxkey+json',
    ])('%s is accepted', async (type) => {
      const code = 100 + Math.floor(Math.random() * 1_000_000);
      const res = await ctx().request('POST', textsPath(), {
        rawBody: JSON.stringify(validText(code)),
        headers: { 'content-type': type },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    });
  });

  describe('body size (BODY_LIMIT_BYTES = 2048)', () => {
    it('a body just under the limit is accepted', async () => {
      const body = validText(5000, 'x'.repeat(1900));
      expect(Buffer.byteLength(JSON.stringify(body))).toBeLessThan(2048);
      expect((await ctx().request('POST', textsPath(), { body })).status).toBe(201);
    });

    it('a body over the limit → 413 {code, message}, nothing written', async () => {
      const res = await ctx().request('POST', textsPath(), {
        body: validText(5001, 'x'.repeat(3000)),
      });
      expectError(res, 413);
      const rows = await ctx()
        .db.selectFrom('predefined_texts')
        .select('id')
        .where('text_code', '=', 5001)
        .execute();
      expect(rows).toEqual([]);
    });

    it('multi-byte characters count as bytes, not characters', async () => {
      const res = await ctx().request('POST', textsPath(), {
        body: validText(5002, 'é'.repeat(1100)),
      });
      expectError(res, 413);
    });

    it('a streamed body without Content-Length over the limit → 413', async () => {
      const payload = new TextEncoder().encode(JSON.stringify(validText(5003, 'y'.repeat(4000))));
      const res = await ctx().app.request(textsPath(), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${ctx().orgA.token}`,
          'content-type': 'application/json',
          'transfer-encoding': 'chunked',
        },
        body: new ReadableStream({
          start(controller) {
            controller.enqueue(payload.slice(0, 1000));
            controller.enqueue(payload.slice(1000));
            controller.close();
          },
        }),
        duplex: 'half',
      } as RequestInit);
      expect(res.status).toBe(413);
      expect(await res.json()).toEqual({
        code: 413,
        error: 'payload_too_large',
        message: expect.any(String),
      });
    });

    it.each(bodyOperations.map((op) => [`${op.method} ${op.path}`, op] as const))(
      '413 on every body route: %s',
      async (_label, op) => {
        const res = await ctx().request(op.method, pathOf(op.path), {
          body: { padding: 'z'.repeat(4096) },
        });
        expectError(res, 413);
      },
    );
  });

  describe('unknown routes and methods', () => {
    it.each([
      ['GET', '/v1/no-such-thing'],
      ['GET', '/v1/organisations'],
      ['POST', '/v1/organisations'],
      ['POST', '/v1/plans'],
      ['GET', '/v1/organisations/1/nothing-here'],
      ['PUT', '/v1/organisations/1'],
      ['GET', '/v2/plans'],
    ])('%s %s with a valid token → 404 or 405 JSON {code, message}', async (method, path) => {
      const res = await ctx().request(
        method,
        path.replace('/organisations/1', `/organisations/${ctx().orgA.id}`),
      );
      expect([404, 405]).toContain(res.status);
      expectError(res, res.status);
    });

    it('an unknown path outside /v1 → 404 JSON, no token needed', async () => {
      const res = await ctx().request('GET', '/definitely/not/here', { token: null });
      expectError(res, 404);
    });
  });

  describe('ids beyond the 32-bit columns → 400 on the id, never 500', () => {
    // The columns are 32-bit integers on PostgreSQL; 2^31 and a 15-digit id must not reach the database as-is.
    const idOperations = listOperations().filter((op) =>
      op.params.some((p) => p !== 'org_id' && !p.endsWith('uuid')),
    );
    for (const op of idOperations) {
      const param = op.params.find((p) => p !== 'org_id' && !p.endsWith('uuid'))!;
      it(`${op.method} ${op.path}`, async () => {
        for (const id of ['2147483648', '999999999999999']) {
          const path = fillPath(
            op.path,
            new Proxy({}, { get: (_t, p) => (p === 'org_id' ? ctx().orgA.id : id) }) as any,
          );
          const res = await ctx().request(
            op.method,
            path,
            op.bodySchema ? { body: validBody(op, ctx().orgA.id) } : {},
          );
          expectInvalidId(res, param);
        }
      });
    }
  });

  describe('NUL characters (U+0000) are refused at the edge: 400 on the field, on both databases', () => {
    it('in a body string', async () => {
      const res = await ctx().request('POST', orgPath(ctx().orgA.id, '/api-tokens'), {
        body: { friendly_name: 'a\u0000b', enabled: true },
      });
      expectValidation(res, ['friendly_name']);
    });

    it('in a nested body string', async () => {
      const res = await ctx().request('PATCH', orgPath(ctx().orgA.id, '/settings'), {
        body: { org_id: ctx().orgA.id, settings: { callback_url: 'https://8.8.8.8/\u0000' } },
      });
      expectValidation(res, ['settings.callback_url']);
    });

    it('in a body key', async () => {
      const res = await ctx().request('PATCH', orgPath(ctx().orgA.id), {
        body: { 'na\u0000me': 'x' },
      });
      expect(res.status).toBe(400);
      expect(res.body.errors).toHaveLength(1);
    });

    it('in a query value', async () => {
      const res = await ctx().request(
        'GET',
        `${orgPath(ctx().orgA.id, '/users')}?filter=external_id%3Da%00b`,
      );
      expectValidation(res, ['filter']);
    });

    it('in a path value', async () => {
      const res = await ctx().request('GET', orgPath(ctx().orgA.id, '/users/1%00'));
      expect(res.status).toBe(400);
      expect(res.body.errors).toHaveLength(1);
      expect(['user_id', 'path']).toContain(res.body.errors[0].field);
    });

    it('nothing with a NUL was stored', async () => {
      const rows = await ctx().db.selectFrom('api_tokens').select('friendly_name').execute();
      expect(rows.some((r) => r.friendly_name.includes('\u0000'))).toBe(false);
    });
  });

  it('a required JSON body that is empty and untyped is a 415 unsupported_media_type, not a 500 (found by the fuzzer)', async () => {
    const res = await ctx().request('PATCH', orgPath(ctx().orgA.id, ''), { rawBody: '' });
    expectError(res, 415, 'Content-Type must be application/json', 'unsupported_media_type');
  });

  it('a deeply nested body is a 400, not a 500 or a stack overflow', async () => {
    let nested: unknown = 'x';
    for (let i = 0; i < 300; i++) nested = { a: nested }; // about 1.8 kB: under this file's 2 kB body limit
    const res = await ctx().request('PATCH', orgPath(ctx().orgA.id, '/settings'), {
      rawBody: JSON.stringify({ org_id: ctx().orgA.id, settings: nested }),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(400);
  });

  it("validation errors never echo internals (only the contract's field codes, no zod issue details, no stack)", async () => {
    const res = await ctx().request('POST', textsPath(), {
      body: { org_id: 'x', language: 5, text_code: {}, text: [] },
    });
    expect(res.status).toBe(400);
    const dump = JSON.stringify(res.body);
    expect(dump).not.toMatch(/at \w+ \(|node_modules|ZodError|"expected"|"origin"|"received"/);
    for (const entry of res.body.errors)
      expect(Object.keys(entry).sort()).toEqual(['code', 'field', 'message']);
  });

  it('an unreachable database gives 503 unavailable with Retry-After and no internals, and the error is reported; a fault gives 500', async () => {
    // Nothing listens on port 1: every query fails as if the database were down.
    const broken = openDatabase('postgres://voxkey@127.0.0.1:1/unreachable', { poolSize: 1 });
    onTestFinished(() => broken.close());
    const reported: unknown[] = [];
    /** The organisation read through an app on `database`, errors reported into `reported`. */
    const readOrganisation = (database: Database) =>
      createApp({ ...ctx().deps, database }, { reportError: (err) => reported.push(err) }).request(
        orgPath(1),
        { headers: { authorization: `Bearer ${ctx().orgA.token}` } },
      );
    const res = await readOrganisation(broken);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    const body = await res.json();
    expect(body).toEqual({
      code: 503,
      error: 'unavailable',
      message: 'The service cannot reach its database; retry shortly',
    });
    expect(JSON.stringify(body)).not.toMatch(
      /ECONNREFUSED|127\.0\.0\.1|postgres|select|kysely|driver|stack/i,
    );
    expect(reported).toHaveLength(1);

    const closed = openDatabase('sqlite:');
    await closed.close();
    const fault = await readOrganisation(closed);
    expect(fault.status).toBe(500);
    expect(await fault.json()).toEqual({
      code: 500,
      error: 'internal_error',
      message: 'Internal server error',
    });
    expect(reported).toHaveLength(2);
  });
});
