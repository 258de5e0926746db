import { describe, expect, it } from 'vitest';
import { issueToken } from '../src/services/organisations.js';
import { TEST_DIALECT } from './support/database.js';
import {
  expectCreatedToken,
  expectList,
  expectNotFound,
  expectResource,
  expectValidation,
  ISO_UTC,
  REQUIRED,
  UNKNOWN_FIELD,
  useContext,
} from './support/expect.js';
import { createToken, inADay, orgPath, UNKNOWN_ID } from './support/fixtures.js';

describe(`API tokens (${TEST_DIALECT})`, () => {
  const ctx = useContext();
  const tokensPath = (rest = '') => orgPath(ctx().orgA.id, `/api-tokens${rest}`);

  describe('POST /organisations/{org_id}/api-tokens', () => {
    it('201 with bearer and the token record; never expires without expires_at (when the caller never expires)', async () => {
      const before = Date.now();
      const { bearer: production } = await issueToken(ctx().db, {
        orgId: ctx().orgA.id,
        friendlyName: 'production',
        kind: 'live',
      });
      const res = await ctx().request('POST', tokensPath(), {
        token: production,
        body: { friendly_name: 'billing-service', enabled: true },
      });
      expect(res.status).toBe(201);
      expectCreatedToken(res.body);
      const { token } = res.body;
      expect(token).toMatchObject({
        friendly_name: 'billing-service',
        enabled: true,
        expires_at: null,
      });
      expect(Date.parse(token.created_at)).toBeGreaterThanOrEqual(before - 1000);
      expect(token.created_at).toMatch(ISO_UTC);
      expect(
        (await ctx().request('GET', orgPath(ctx().orgA.id), { token: res.body.bearer })).status,
      ).toBe(200);
    });

    it('without expires_at, a creator that expires (the trial token) gets 400 outlives_creator: never a silently shorter token', async () => {
      const before = expectList(await ctx().request('GET', tokensPath()), 'token').length;
      const res = await ctx().request('POST', tokensPath(), {
        body: { friendly_name: 'would-never-expire', enabled: true },
      });
      expectValidation(res, [
        { field: 'expires_at', code: 'outlives_creator', message: /^Required when the token/ },
      ]);
      expect(res.body.errors[0].message).toMatch(/no later than \d{4}-\d\d-\d\dT/);
      expect(expectList(await ctx().request('GET', tokensPath()), 'token')).toHaveLength(before);
    });

    it('expires_at with an offset is stored and returned as UTC', async () => {
      const local = new Date(Date.now() + 7 * 86_400_000);
      local.setUTCMilliseconds(0);
      const withOffset = `${local.toISOString().slice(0, 19)}+02:00`;
      const res = await ctx().request('POST', tokensPath(), {
        body: { friendly_name: 'offset', enabled: true, expires_at: withOffset },
      });
      expect(res.status).toBe(201);
      expect(res.body.token.expires_at).toMatch(ISO_UTC);
      expect(Date.parse(res.body.token.expires_at)).toBe(Date.parse(withOffset));
    });

    it('each creation returns a different bearer', async () => {
      const a = await createToken(ctx(), { friendly_name: 'same' });
      const b = await createToken(ctx(), { friendly_name: 'same' });
      expect(a.bearer).not.toBe(b.bearer);
      expect(a.token.id).not.toBe(b.token.id);
    });

    it('missing fields: one entry each, "This field is required"', async () => {
      const res = await ctx().request('POST', tokensPath(), { body: {} });
      expectValidation(res, [
        { field: 'friendly_name', message: REQUIRED },
        { field: 'enabled', message: REQUIRED },
      ]);
    });

    it('wrong types', async () => {
      const res = await ctx().request('POST', tokensPath(), {
        body: { friendly_name: 42, enabled: 'yes', expires_at: 12345 },
      });
      expectValidation(res, ['friendly_name', 'enabled', 'expires_at']);
    });

    it('unknown fields are rejected, one entry each', async () => {
      const res = await ctx().request('POST', tokensPath(), {
        body: { friendly_name: 'x', enabled: true, scope: 'admin', bearer: 'vk_live_x' },
      });
      expectValidation(res, [
        { field: 'scope', message: UNKNOWN_FIELD },
        { field: 'bearer', message: UNKNOWN_FIELD },
      ]);
    });

    it('friendly_name is 1 to 200 characters', async () => {
      const ok = await ctx().request('POST', tokensPath(), {
        body: { friendly_name: 'n'.repeat(200), enabled: true, expires_at: inADay() },
      });
      expect(ok.status).toBe(201);
      expect(ok.body.token.friendly_name).toHaveLength(200);
      expectValidation(
        await ctx().request('POST', tokensPath(), {
          body: { friendly_name: 'n'.repeat(201), enabled: true },
        }),
        ['friendly_name'],
      );
      expectValidation(
        await ctx().request('POST', tokensPath(), { body: { friendly_name: '', enabled: true } }),
        ['friendly_name'],
      );
    });

    it('blank friendly_name → 400', async () => {
      expectValidation(
        await ctx().request('POST', tokensPath(), {
          body: { friendly_name: '   ', enabled: true },
        }),
        ['friendly_name'],
      );
    });

    it.each([
      ['in the past', () => new Date(Date.now() - 60_000).toISOString()],
      ['now-ish (1 s ago)', () => new Date(Date.now() - 1000).toISOString()],
      ['a date without time', () => '2099-01-01'],
      ['not a date', () => 'tomorrow'],
      ['null', () => null],
    ])('expires_at %s → 400 on expires_at', async (_name, value) => {
      const res = await ctx().request('POST', tokensPath(), {
        body: { friendly_name: 'x', enabled: true, expires_at: value() },
      });
      expectValidation(res, ['expires_at']);
    });
  });

  describe('GET /organisations/{org_id}/api-tokens', () => {
    it('lists the organisation tokens only, without bearer', async () => {
      const c = ctx();
      await createToken(c, { friendly_name: 'b-only' }, { orgId: c.orgB.id });
      const created = await createToken(c, { friendly_name: 'listed' });
      const res = await c.request('GET', `${tokensPath()}?per_page=300`);
      const results = expectList(res, 'token');
      expect(results.some((t) => t.id === created.token.id)).toBe(true);
      expect(results.some((t) => t.friendly_name === 'b-only')).toBe(false);
      const rows = await c.db
        .selectFrom('api_tokens')
        .select('id')
        .where('org_id', '=', c.orgA.id)
        .execute();
      expect(results.map((t) => t.id).sort((x, y) => x - y)).toEqual(
        rows.map((r) => r.id).sort((x, y) => x - y),
      );
      expect(res.headers.get('x-total-count')).toBe(String(rows.length));
      expect(res.headers.get('x-total-pages')).toBe('1');
    });

    it('filter on enabled', async () => {
      const c = ctx();
      const off = await createToken(c, { friendly_name: 'disabled-one', enabled: false });
      const disabled = expectList(
        await c.request('GET', `${tokensPath()}?filter=enabled=false`),
        'token',
      );
      expect(disabled.map((t) => t.id)).toContain(off.token.id);
      expect(disabled.every((t) => t.enabled === false)).toBe(true);
      const enabled = expectList(
        await c.request('GET', `${tokensPath()}?filter=enabled=true`),
        'token',
      );
      expect(enabled.every((t) => t.enabled === true)).toBe(true);
      expect(enabled.map((t) => t.id)).not.toContain(off.token.id);
    });
  });

  describe('PATCH /organisations/{org_id}/api-tokens/{token_id}', () => {
    it('200 with the updated record (id, friendly_name, enabled, updated_at)', async () => {
      const c = ctx();
      const { token } = await createToken(c, { friendly_name: 'patch-me' });
      await new Promise((r) => setTimeout(r, 5));
      const res = await c.request('PATCH', tokensPath(`/${token.id}`), {
        body: { enabled: false },
      });
      expect(res.status).toBe(200);
      expectResource(res.body, 'token');
      expect(res.body).toMatchObject({
        id: token.id,
        friendly_name: 'patch-me',
        enabled: false,
        created_at: token.created_at,
      });
      expect(Date.parse(res.body.updated_at)).toBeGreaterThan(Date.parse(token.updated_at));
    });

    it('enabled is required; wrong type; unknown fields', async () => {
      const c = ctx();
      const { token } = await createToken(c);
      expectValidation(await c.request('PATCH', tokensPath(`/${token.id}`), { body: {} }), [
        { field: 'enabled', message: REQUIRED },
      ]);
      expectValidation(
        await c.request('PATCH', tokensPath(`/${token.id}`), { body: { enabled: 'false' } }),
        ['enabled'],
      );
      expectValidation(
        await c.request('PATCH', tokensPath(`/${token.id}`), { body: { enabled: 0 } }),
        ['enabled'],
      );
      expectValidation(
        await c.request('PATCH', tokensPath(`/${token.id}`), {
          body: { enabled: true, friendly_name: 'rename' },
        }),
        [{ field: 'friendly_name', message: UNKNOWN_FIELD }],
      );
    });

    it('404 for an unknown token id', async () => {
      expectNotFound(
        await ctx().request('PATCH', tokensPath(`/${UNKNOWN_ID}`), { body: { enabled: false } }),
      );
    });

    it('400 for a non-numeric token id', async () => {
      expectValidation(
        await ctx().request('PATCH', tokensPath('/abc'), { body: { enabled: false } }),
        ['token_id'],
      );
    });
  });

  describe('DELETE /organisations/{org_id}/api-tokens/{token_id}', () => {
    it('200 with the record as it was; a second delete is 404', async () => {
      const c = ctx();
      const { token } = await createToken(c, { friendly_name: 'to-delete', enabled: false });
      const res = await c.request('DELETE', tokensPath(`/${token.id}`));
      expect(res.status).toBe(200);
      expectResource(res.body, 'token');
      expect(res.body).toEqual(token);
      expectNotFound(await c.request('DELETE', tokensPath(`/${token.id}`)));
      expectNotFound(
        await c.request('PATCH', tokensPath(`/${token.id}`), { body: { enabled: true } }),
      );
    });

    it('404 for an unknown id, 400 for a non-numeric one', async () => {
      expectNotFound(await ctx().request('DELETE', tokensPath(`/${UNKNOWN_ID}`)));
      expectValidation(await ctx().request('DELETE', tokensPath('/x1')), ['token_id']);
    });
  });
});
