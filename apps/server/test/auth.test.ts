import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signUpOrganisation } from '../src/services/organisations.js';
import { TEST_DIALECT } from './support/database.js';
import {
  expectForbidden,
  expectResource,
  expectUnauthorized,
  expectValidation,
  useContext,
} from './support/expect.js';
import { createToken, orgPath } from './support/fixtures.js';

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const wellFormedUnknown = (kind: 'live' | 'trial') =>
  `vk_${kind}_${randomBytes(32).toString('base64url')}`;

describe(`authentication (${TEST_DIALECT})`, () => {
  const ctx = useContext();

  describe('401 for anything but a valid token', () => {
    const orgUrl = () => orgPath(ctx().orgA.id);

    it('no Authorization header', async () => {
      const res = await ctx().request('GET', orgUrl(), { token: null });
      expectUnauthorized(res);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    });

    it.each([
      ['garbage', 'Bearer not-a-token'],
      ['empty bearer', 'Bearer '],
      ['scheme only', 'Bearer'],
      ['Basic scheme', `Basic ${Buffer.from('a:b').toString('base64')}`],
      ['prefix only', 'Bearer vk_live_'],
      ['well-formed unknown live token', () => `Bearer ${wellFormedUnknown('live')}`],
      ['well-formed unknown trial token', () => `Bearer ${wellFormedUnknown('trial')}`],
      [
        'valid token with a character changed',
        (c: any) => `Bearer ${c.orgA.token.slice(0, -1)}${c.orgA.token.endsWith('A') ? 'B' : 'A'}`,
      ],
      ['valid token with a suffix', (c: any) => `Bearer ${c.orgA.token}x`],
      ['two tokens', (c: any) => `Bearer ${c.orgA.token} ${c.orgB.token}`],
      ['the token hash instead of the token', (c: any) => `Bearer ${sha256(c.orgA.token)}`],
    ] as const)('%s', async (_name, header) => {
      const value = typeof header === 'function' ? header(ctx()) : header;
      const res = await ctx().request('GET', orgUrl(), {
        token: null,
        headers: { authorization: value },
      });
      expectUnauthorized(res);
    });

    it('the scheme name is case-insensitive (RFC 7235)', async () => {
      const res = await ctx().request('GET', orgUrl(), {
        token: null,
        headers: { authorization: `bearer ${ctx().orgA.token}` },
      });
      expect(res.status).toBe(200);
    });

    it('401 comes before 403: no token on another organisation', async () => {
      expectUnauthorized(await ctx().request('GET', orgPath(ctx().orgB.id), { token: null }));
    });

    it('401 comes before body validation and before 404', async () => {
      const c = ctx();
      expectUnauthorized(
        await c.request('POST', orgPath(c.orgA.id, '/predefined-texts'), {
          token: null,
          body: { nope: 1 },
        }),
      );
      expectUnauthorized(
        await c.request('GET', orgPath(c.orgA.id, '/users/987654'), { token: null }),
      );
      expectUnauthorized(await c.request('GET', '/v1/plans', { token: null }));
      expectUnauthorized(await c.request('GET', '/v1/no-such-route', { token: null }));
    });
  });

  describe('tokens are stored hashed', () => {
    it('trial tokens look like vk_trial_..., created ones vk_live_...', async () => {
      const c = ctx();
      expect(c.orgA.token).toMatch(/^vk_trial_[A-Za-z0-9_-]{43}$/);
      const created = await createToken(c);
      expect(created.bearer).toMatch(/^vk_live_[A-Za-z0-9_-]{43}$/);
      expect(created.bearer).not.toBe(c.orgA.token);
    });

    it('the api_tokens table never holds a raw bearer, only its SHA-256', async () => {
      const c = ctx();
      const created = await createToken(c, { friendly_name: 'hash-check' });
      const rows = await c.db.selectFrom('api_tokens').selectAll().execute();
      const dump = JSON.stringify(rows);
      for (const bearer of [c.orgA.token, c.orgB.token, created.bearer]) {
        expect(dump).not.toContain(bearer);
        expect(dump).not.toContain(bearer.slice('vk_live_'.length + 1));
        expect(rows.some((r) => r.token_hash === sha256(bearer))).toBe(true);
      }
      const row = rows.find((r) => r.id === created.token.id)!;
      expect(row.token_hash).toBe(sha256(created.bearer));
      expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
    });

    it('token lists never carry bearer or hash', async () => {
      const c = ctx();
      const res = await c.request('GET', orgPath(c.orgA.id, '/api-tokens'));
      expect(res.status).toBe(200);
      const dump = JSON.stringify(res.body);
      expect(dump).not.toMatch(/vk_(live|trial)_/);
      expect(dump).not.toMatch(/[0-9a-f]{64}/);
      for (const t of res.body.results) {
        expect(t).not.toHaveProperty('bearer');
        expect(t).not.toHaveProperty('token_hash');
      }
    });
  });

  describe('lifecycle', () => {
    it('disabling a token takes effect on the very next request; re-enabling restores it', async () => {
      const c = ctx();
      const { bearer, token } = await createToken(c, { friendly_name: 'to-disable' });
      expect((await c.request('GET', orgPath(c.orgA.id), { token: bearer })).status).toBe(200);

      const off = await c.request('PATCH', orgPath(c.orgA.id, `/api-tokens/${token.id}`), {
        body: { enabled: false },
      });
      expect(off.status).toBe(200);
      expect(off.body.enabled).toBe(false);
      expectUnauthorized(await c.request('GET', orgPath(c.orgA.id), { token: bearer }));
      // Every route, not only one: the disabled token reaches nothing.
      expectUnauthorized(await c.request('GET', '/v1/plans', { token: bearer }));
      expectUnauthorized(
        await c.request('PATCH', orgPath(c.orgA.id, `/api-tokens/${token.id}`), {
          token: bearer,
          body: { enabled: true },
        }),
      );

      // The record is kept for audit.
      const listed = await c.request(
        'GET',
        `${orgPath(c.orgA.id, '/api-tokens')}?filter=id=${token.id}`,
      );
      expect(listed.body.results).toHaveLength(1);
      expect(listed.body.results[0].enabled).toBe(false);

      const on = await c.request('PATCH', orgPath(c.orgA.id, `/api-tokens/${token.id}`), {
        body: { enabled: true },
      });
      expect(on.status).toBe(200);
      expect(on.body.enabled).toBe(true);
      expect((await c.request('GET', orgPath(c.orgA.id), { token: bearer })).status).toBe(200);
    });

    it('a token can disable itself, and is refused on the next request', async () => {
      const c = ctx();
      const { bearer, token } = await createToken(c);
      const res = await c.request('PATCH', orgPath(c.orgA.id, `/api-tokens/${token.id}`), {
        token: bearer,
        body: { enabled: false },
      });
      expect(res.status).toBe(200);
      expectUnauthorized(await c.request('GET', orgPath(c.orgA.id), { token: bearer }));
    });

    it('a token created disabled does not work until enabled', async () => {
      const c = ctx();
      const { bearer, token } = await createToken(c, { enabled: false });
      expect(token.enabled).toBe(false);
      expectUnauthorized(await c.request('GET', orgPath(c.orgA.id), { token: bearer }));
      await c.request('PATCH', orgPath(c.orgA.id, `/api-tokens/${token.id}`), {
        body: { enabled: true },
      });
      expect((await c.request('GET', orgPath(c.orgA.id), { token: bearer })).status).toBe(200);
    });

    it('a deleted token gets 401, and the row is gone', async () => {
      const c = ctx();
      const { bearer, token } = await createToken(c);
      const del = await c.request('DELETE', orgPath(c.orgA.id, `/api-tokens/${token.id}`));
      expect(del.status).toBe(200);
      expectResource(del.body, 'token');
      expectUnauthorized(await c.request('GET', orgPath(c.orgA.id), { token: bearer }));
      const row = await c.db
        .selectFrom('api_tokens')
        .select('id')
        .where('id', '=', token.id)
        .executeTakeFirst();
      expect(row).toBeUndefined();
    });

    it('a token can delete itself; the request succeeds and the next one is refused', async () => {
      const c = ctx();
      const { bearer, token } = await createToken(c);
      const del = await c.request('DELETE', orgPath(c.orgA.id, `/api-tokens/${token.id}`), {
        token: bearer,
      });
      expect(del.status).toBe(200);
      expect(del.body.id).toBe(token.id);
      expectUnauthorized(await c.request('GET', orgPath(c.orgA.id), { token: bearer }));
    });

    it('rotation: old and new tokens are valid together, deleting the old leaves the new working', async () => {
      const c = ctx();
      const old = await createToken(c, { friendly_name: 'svc-v1' });
      // A token that expires creates tokens that expire no later than itself.
      const rotated = await createToken(
        c,
        { friendly_name: 'svc-v2', expires_at: old.token.expires_at },
        { token: old.bearer },
      );
      for (const bearer of [old.bearer, rotated.bearer, c.orgA.token]) {
        expect((await c.request('GET', orgPath(c.orgA.id), { token: bearer })).status).toBe(200);
      }
      const del = await c.request('DELETE', orgPath(c.orgA.id, `/api-tokens/${old.token.id}`), {
        token: rotated.bearer,
      });
      expect(del.status).toBe(200);
      expectUnauthorized(await c.request('GET', orgPath(c.orgA.id), { token: old.bearer }));
      expect((await c.request('GET', orgPath(c.orgA.id), { token: rotated.bearer })).status).toBe(
        200,
      );
      expect((await c.request('GET', orgPath(c.orgA.id), { token: c.orgA.token })).status).toBe(
        200,
      );
    });

    it('an expired token gets 401 (expires_at moved into the past in the database)', async () => {
      const c = ctx();
      const org = await c.makeOrg('Expiring');
      expect((await c.request('GET', orgPath(org.id), { token: org.token })).status).toBe(200);
      const past = new Date(Date.now() - 1000).toISOString();
      await c.db
        .updateTable('api_tokens')
        .set({ expires_at: past })
        .where('org_id', '=', org.id)
        .execute();
      expectUnauthorized(await c.request('GET', orgPath(org.id), { token: org.token }));
      expectUnauthorized(await c.request('GET', '/v1/plans', { token: org.token }));
    });

    it('a live token with a future expires_at works until then, then gets 401', async () => {
      const c = ctx();
      const future = new Date(Date.now() + 60 * 60 * 1000).toISOString();
      const { bearer, token } = await createToken(c, { expires_at: future });
      expect(token.expires_at).toBe(future);
      expect((await c.request('GET', orgPath(c.orgA.id), { token: bearer })).status).toBe(200);
      await c.db
        .updateTable('api_tokens')
        .set({ expires_at: new Date(Date.now() - 1).toISOString() })
        .where('id', '=', token.id)
        .execute();
      expectUnauthorized(await c.request('GET', orgPath(c.orgA.id), { token: bearer }));
    });

    it('the trial token issued at sign-up expires after the plan trial (15 days to 3 months)', async () => {
      const c = ctx();
      const res = await c.request('GET', orgPath(c.orgA.id, '/api-tokens'));
      const trial = res.body.results.find((t: any) => t.friendly_name === 'trial');
      expect(trial).toBeDefined();
      const days = (Date.parse(trial.expires_at) - Date.parse(trial.created_at)) / 86_400_000;
      expect(days).toBeGreaterThanOrEqual(15 - 1 / 86_400); // expires_at and created_at are taken a few ms apart
      expect(days).toBeLessThanOrEqual(92);

      const plans = await c.request('GET', '/v1/plans');
      for (const plan of plans.body.results) {
        const { token } = await signUpOrganisation(c.db, {
          name: `Trial ${plan.id}`,
          email: `t${plan.id}@example.com`,
          plan: plan.id,
        });
        expect(token.bearer).toMatch(/^vk_trial_/);
        const d =
          (Date.parse(token.token.expires_at!) - Date.parse(token.token.created_at)) / 86_400_000;
        expect(d).toBeGreaterThanOrEqual(15 - 1 / 86_400);
        expect(d).toBeLessThanOrEqual(92);
      }
    });

    it("one organisation's tokens are independent of another's", async () => {
      const c = ctx();
      const b = await createToken(c, {}, { orgId: c.orgB.id });
      // Org A cannot disable org B's token, even addressing it under its own organisation.
      const res = await c.request('PATCH', orgPath(c.orgA.id, `/api-tokens/${b.token.id}`), {
        body: { enabled: false },
      });
      expect(res.status).toBe(404);
      expectForbidden(
        await c.request('PATCH', orgPath(c.orgB.id, `/api-tokens/${b.token.id}`), {
          body: { enabled: false },
        }),
      );
      expect((await c.request('GET', orgPath(c.orgB.id), { token: b.bearer })).status).toBe(200);
      // And org B's token is refused on org A.
      expectForbidden(await c.request('GET', orgPath(c.orgA.id), { token: b.bearer }));
    });
  });

  describe('organisation id in the path', () => {
    it.each(['abc', '0', '-1', '01', '1.5', '1e3', '%20', '2147483648', '999999999999999'])(
      'org id %s (not 1 to 2147483647) → 400 on field org_id',
      async (bad) => {
        const c = ctx();
        for (const suffix of ['', '/users', '/settings', '/predefined-texts/1']) {
          const res = await c.request('GET', `/v1/organisations/${bad}${suffix}`);
          expectValidation(res, ['org_id']);
        }
      },
    );

    it('a non-existent organisation → 403, the same as an existing other one', async () => {
      const c = ctx();
      const missing = await c.request('GET', orgPath(999_999));
      const other = await c.request('GET', orgPath(c.orgB.id));
      expectForbidden(missing);
      expectForbidden(other);
      expect(missing.body).toEqual(other.body);
    });
  });
});
