/**
 * Tenant isolation, generated from the committed OpenAPI document: every operation under
 * /organisations/{org_id}, every method. A route added to the contract later is covered without
 * touching this file (voice routes included: the organisation guard runs before any handler).
 */
import { randomUUID } from 'node:crypto';
import { apiRoutes } from '@voxkey/contract';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TestContext, TestOrg } from './support/context.js';
import { TEST_DIALECT } from './support/database.js';
import {
  expectForbidden,
  expectUnauthorized,
  expectValidation,
  useContext,
  WITHOUT_RATE_LIMITS,
} from './support/expect.js';
import {
  createText,
  createToken,
  orgPath,
  seedDevice,
  seedInvoice,
  seedUser,
} from './support/fixtures.js';
import { snapshotOrganisation } from './support/fuzz-world.js';
import { fillPath, listOperations, type Operation, validBody } from './support/openapi-cases.js';

const operations = listOperations();
const orgOperations = operations.filter((op) => op.params.includes('org_id'));
const MARKER = 'secret-b';
const MISSING_ORG = 999_999;

interface OrgFixture {
  org: TestOrg;
  ids: Record<string, string | number>;
}

/** An organisation with one record of every kind, carrying a marker string where it can. */
async function seedOrganisation(c: TestContext, org: TestOrg, marker: string): Promise<OrgFixture> {
  await c.request('PATCH', orgPath(org.id), {
    token: org.token,
    body: { address: `${marker}-address`, vat: `${marker}-vat` },
  });
  await c.request('PATCH', orgPath(org.id, '/settings'), {
    token: org.token,
    body: {
      org_id: org.id,
      settings: { callback_url: `https://8.8.4.4/${marker}-hook`, alert_on_failure: false },
    },
  });
  const user = await seedUser(c, org.id, `${marker}-user`);
  const device = await seedDevice(c, {
    orgId: org.id,
    userId: user.id,
    fingerprint: `${marker}-fp`,
  });
  const text = await createText(
    c,
    { language: 'en-UK', text_code: 7, text: `${marker}-text` },
    { orgId: org.id, token: org.token },
  );
  const token = await createToken(
    c,
    { friendly_name: `${marker}-token` },
    { orgId: org.id, token: org.token },
  );
  const invoice = await seedInvoice(c, {
    orgId: org.id,
    subId: org.subscriptionId,
    fileRef: `${marker}-invoice`,
  });
  return {
    org,
    ids: {
      org_id: org.id,
      token_id: token.token.id,
      user_id: user.id,
      device_id: device.id,
      text_id: text.id,
      subscription_id: org.subscriptionId,
      invoice_id: invoice.id,
      request_uuid: randomUUID(),
      delivery_id: 1,
    },
  };
}

/** Values for every path parameter of an operation: the fixture's, `1` for ids we know nothing about. */
function pathValues(
  op: Operation,
  fixture: Record<string, string | number>,
  orgId: number,
): Record<string, string | number> {
  const values: Record<string, string | number> = { org_id: orgId };
  for (const p of op.params)
    if (p !== 'org_id') values[p] = fixture[p] ?? (p.endsWith('uuid') ? randomUUID() : 1);
  return values;
}

function missingValues(op: Operation, orgId: number): Record<string, string | number> {
  const values: Record<string, string | number> = { org_id: orgId };
  for (const p of op.params)
    if (p !== 'org_id') values[p] = p.endsWith('uuid') ? randomUUID() : 987_654;
  return values;
}

function expectNoLeak(res: { body: unknown; headers: Headers }): void {
  const dump = JSON.stringify(res.body);
  expect(dump).not.toContain(MARKER);
  expect(dump).not.toContain('OrgB');
  expect(dump).not.toContain('orgb@example.com');
  expect(res.headers.get('x-total-count')).toBeNull();
  expect(res.headers.get('x-total-pages')).toBeNull();
}

describe(`matrices from openapi.json (${TEST_DIALECT})`, () => {
  // The limiter runs between authentication and the organisation guard; it is exercised (on) by
  // auth, tokens, errors, meta and concurrency. Off here, it saves two committed upserts per request.
  const ctx = useContext(WITHOUT_RATE_LIMITS);

  describe('cross-tenant', () => {
    let a: OrgFixture;
    let b: OrgFixture;
    let before: Awaited<ReturnType<typeof snapshotOrganisation>>;

    beforeAll(async () => {
      const c = ctx();
      a = await seedOrganisation(c, c.orgA, 'own-a');
      b = await seedOrganisation(c, c.orgB, MARKER);
      before = await snapshotOrganisation(c, c.orgB.id);
    });

    it('the document has the organisation-scoped operations (sanity)', () => {
      expect(orgOperations.length).toBeGreaterThanOrEqual(24);
      const ids = orgOperations.map((op) => op.operationId);
      for (const expected of [
        'createApiToken',
        'listApiTokens',
        'updateApiToken',
        'deleteApiToken',
        'getOrganisation',
        'updateOrganisation',
        'getSettings',
        'updateSettings',
        'listUsers',
        'getUser',
        'updateUser',
        'deleteUser',
        'getDevice',
        'createPredefinedText',
        'listPredefinedTexts',
        'getPredefinedText',
        'updatePredefinedText',
        'deletePredefinedText',
        'listSubscriptions',
        'getSubscription',
        'listInvoices',
        'getInvoice',
      ]) {
        expect(ids).toContain(expected);
      }
    });

    it('the bodies used below are valid for their routes (per the contract schemas)', () => {
      for (const op of orgOperations.filter((o) => o.bodySchema)) {
        const schema = (apiRoutes as Record<string, any>)[op.operationId]?.request?.body?.content?.[
          'application/json'
        ]?.schema;
        if (!schema) continue;
        const parsed = schema.safeParse(validBody(op, b.org.id));
        expect(parsed.success ? [] : parsed.error.issues, op.operationId).toEqual([]);
      }
    });

    describe.each(orgOperations.map((op) => [`${op.method} ${op.path}`, op] as const))(
      '%s',
      (_label, op) => {
        it("org A's token on org B's path, B's real ids → 403 {code, message}, nothing of B's", async () => {
          const res = await ctx().request(
            op.method,
            fillPath(op.path, pathValues(op, b.ids, b.org.id)),
          );
          expectForbidden(res);
          expectNoLeak(res);
        });

        it("org A's token on org B's path, ids that exist nowhere → the same 403", async () => {
          const res = await ctx().request(
            op.method,
            fillPath(op.path, missingValues(op, b.org.id)),
          );
          expectForbidden(res);
          expectNoLeak(res);
        });

        it('an organisation that does not exist → the same 403', async () => {
          const res = await ctx().request(
            op.method,
            fillPath(op.path, missingValues(op, MISSING_ORG)),
          );
          expectForbidden(res);
          expectNoLeak(res);
        });

        if (op.bodySchema) {
          it('with a valid body naming org B (org_id = B) → 403', async () => {
            const res = await ctx().request(
              op.method,
              fillPath(op.path, pathValues(op, b.ids, b.org.id)),
              { body: validBody(op, b.org.id) },
            );
            expectForbidden(res);
            expectNoLeak(res);
          });

          it('with an invalid body → still 403 (the guard runs before validation)', async () => {
            const res = await ctx().request(
              op.method,
              fillPath(op.path, pathValues(op, b.ids, b.org.id)),
              { body: { unknown_field: true } },
            );
            expectForbidden(res);
          });
        }

        it("org B's token on org A's path → 403 (both directions)", async () => {
          const res = await ctx().request(
            op.method,
            fillPath(op.path, pathValues(op, a.ids, a.org.id)),
            {
              token: b.org.token,
              ...(op.bodySchema ? { body: validBody(op, a.org.id) } : {}),
            },
          );
          expectForbidden(res);
          expect(JSON.stringify(res.body)).not.toContain('own-a');
        });

        it('a non-numeric organisation id → 400 on org_id', async () => {
          const res = await ctx().request(
            op.method,
            fillPath(op.path, { ...pathValues(op, b.ids, b.org.id), org_id: 'org-b' }),
          );
          expectValidation(res, ['org_id']);
        });
      },
    );

    it.each([
      (b: number) => `/v1/organisations/${b}/`,
      (b: number) => `/v1/organisations/${b}/users/`,
      (b: number, u: number) => `/v1/organisations/${b}/users/${u}/`,
      (b: number) => `/v1//organisations/${b}/users`,
      (b: number) => `/v1/organisations//${b}/users`,
      (b: number) => `/v1/organisations/${String(b).replace(/\d/g, (d) => `%3${d}`)}/users`,
      (b: number) => `/v1/organisations/${b}%2Fusers`,
      (b: number) => `/v1/Organisations/${b}/users`,
      (b: number) => `/v1/organisations/${b}/users/../users`,
      (b: number) => `/v1/organisations/${b}/./users`,
      (b: number) => `/v1/organisations/0${b}/users`,
      (b: number) => `/v1/organisations/+${b}/users`,
      (b: number) => `/v1/organisations/${b}.0/users`,
      (b: number) => `/v1/organisations/${b};x/users`,
      (b: number) => `/v1/organisations/${b}%00/users`,
      (b: number, _u: number, a: number) => `/v1/organisations/${b}/users?org_id=${a}`,
      (b: number, _u: number, a: number) => `/v1/organisations/${a}/../${b}/users`,
    ])("path variant %# of org B's users never reaches them (400, 403 or 404)", async (make) => {
      const path = make(b.org.id, Number(b.ids.user_id), a.org.id);
      const res = await ctx().request('GET', path);
      expect([400, 403, 404], `${path} → ${res.status}`).toContain(res.status);
      expectNoLeak(res);
    });

    describe.each(
      orgOperations
        .filter((op) => op.params.some((p) => p !== 'org_id'))
        .map((op) => [`${op.method} ${op.path}`, op] as const),
    )(
      "org B's record ids under org A's own path: %s",

      (_label, op) => {
        it("the same 404 as an id that exists nowhere (no existence oracle), nothing of B's", async () => {
          const options = op.bodySchema ? { body: validBody(op, a.org.id) } : {};

          const foreign = await ctx().request(
            op.method,
            fillPath(op.path, { ...pathValues(op, b.ids, a.org.id), org_id: a.org.id }),
            options,
          );

          const missing = await ctx().request(
            op.method,
            fillPath(op.path, missingValues(op, a.org.id)),
            options,
          );

          expect(foreign.status, JSON.stringify(foreign.body)).toBe(404);

          expect(foreign.body).toEqual(missing.body);

          expectNoLeak(foreign);
        });
      },
    );

    it("after all of the above, org B's data is exactly as it was", async () => {
      expect(await snapshotOrganisation(ctx(), ctx().orgB.id)).toEqual(before);
      expect(
        (await ctx().request('GET', orgPath(ctx().orgB.id), { token: ctx().orgB.token })).status,
      ).toBe(200);
    });

    describe('control: the same operations on the own organisation are not refused', () => {
      let c: OrgFixture;
      beforeAll(async () => {
        const org = await ctx().makeOrg('Control');
        c = await seedOrganisation(ctx(), org, 'control');
      });

      it.each(orgOperations.map((op) => [`${op.method} ${op.path}`, op] as const))(
        '%s → not 403',
        async (_label, op) => {
          const res = await ctx().request(
            op.method,
            fillPath(op.path, pathValues(op, c.ids, c.org.id)),
            {
              token: c.org.token,
              ...(op.bodySchema ? { body: validBody(op, c.org.id) } : {}),
            },
          );
          expect(res.status, JSON.stringify(res.body)).not.toBe(403);
          expect(res.status, JSON.stringify(res.body)).toBeLessThan(500);
        },
      );
    });
  });

  describe('401 for every operation', () => {
    const tokens: Record<string, () => string | null> = {};
    let own: OrgFixture;

    beforeAll(async () => {
      const c = ctx();
      own = await seedOrganisation(c, await c.makeOrg('AuthMatrix'), 'own-m');
      const opts = { orgId: own.org.id, token: own.org.token };
      const expired = await createToken(c, { friendly_name: 'expired' }, opts);
      await c.db
        .updateTable('api_tokens')
        .set({ expires_at: new Date(Date.now() - 60_000).toISOString() })
        .where('id', '=', expired.token.id)
        .execute();
      const disabled = await createToken(c, { friendly_name: 'disabled', enabled: false }, opts);
      const deleted = await createToken(c, { friendly_name: 'deleted' }, opts);
      expect(
        (
          await c.request('DELETE', orgPath(own.org.id, `/api-tokens/${deleted.token.id}`), {
            token: own.org.token,
          })
        ).status,
      ).toBe(200);
      tokens.none = () => null;
      tokens.garbage = () => 'garbage';
      tokens.expired = () => expired.bearer;
      tokens.disabled = () => disabled.bearer;
      tokens.deleted = () => deleted.bearer;
    });

    const kinds = ['none', 'garbage', 'expired', 'disabled', 'deleted'];
    describe.each(operations.map((op) => [`${op.method} ${op.path}`, op] as const))(
      '%s',
      (_label, op) => {
        it.each(kinds)(
          '%s token → 401 {code:401, message:"Invalid or expired authentication credentials"}',
          async (kind) => {
            const res = await ctx().request(
              op.method,
              fillPath(op.path, pathValues(op, own.ids, own.org.id)),
              {
                token: tokens[kind]!(),
                ...(op.bodySchema ? { body: validBody(op, own.org.id) } : {}),
              },
            );
            expectUnauthorized(res);
            expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
          },
        );
      },
    );
  });
});
