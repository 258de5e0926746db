import { beforeAll, describe, expect, it } from 'vitest';
import type { TestContext, TestOrg } from './support/context.js';
import { TEST_DIALECT } from './support/database.js';
import {
  expectForbidden,
  expectList,
  expectInvalidId,
  expectNotFound,
  expectResource,
  expectValidation,
  useContext,
  WITHOUT_RATE_LIMITS,
  withQuery,
} from './support/expect.js';
import { createToken, orgPath, seedInvoice, UNKNOWN_ID } from './support/fixtures.js';

/** A further subscription of an organisation (the API cannot create one). */
async function seedSubscription(
  c: TestContext,
  orgId: number,
  planName: string,
  startDate: string,
  endDate: string | null = null,
) {
  const plan = await c.db
    .selectFrom('plans')
    .select('id')
    .where('name', '=', planName)
    .executeTakeFirstOrThrow();
  const now = new Date().toISOString();
  return c.db
    .insertInto('subscriptions')
    .values({
      org_id: orgId,
      plan_id: plan.id,
      start_date: startDate,
      end_date: endDate,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

const SEEDED_PLANS = [
  { name: 'Sandbox', monthly_calls_included: 100, overage_rate_gbp: 0 },
  { name: 'Starter', monthly_calls_included: 5_000, overage_rate_gbp: 0.02 },
  { name: 'Growth', monthly_calls_included: 50_000, overage_rate_gbp: 0.012 },
  { name: 'Enterprise', monthly_calls_included: 500_000, overage_rate_gbp: 0.006 },
];

describe(`billing (${TEST_DIALECT})`, () => {
  const ctx = useContext(WITHOUT_RATE_LIMITS);

  describe('plans', () => {
    it('GET /plans: {results} of plan records with details {name, monthly_calls_included, overage_rate_gbp}', async () => {
      const res = await ctx().request('GET', '/v1/plans');
      const plans = expectList(res, 'plan', { total: 4 });
      expect(plans.map((p) => p.details)).toEqual(SEEDED_PLANS);
      for (const p of plans) expect(typeof p.details.overage_rate_gbp).toBe('number');
    });

    it("plans are readable with any organisation's token", async () => {
      const a = await ctx().request('GET', '/v1/plans');
      const b = await ctx().request('GET', '/v1/plans', { token: ctx().orgB.token });
      expect(b.status).toBe(200);
      expect(b.body).toEqual(a.body);
    });

    it('GET /plans/{plan_id}: the plan record', async () => {
      const list = (await ctx().request('GET', '/v1/plans')).body.results;
      for (const plan of list) {
        const res = await ctx().request('GET', `/v1/plans/${plan.id}`);
        expect(res.status).toBe(200);
        expectResource(res.body, 'plan');
        expect(res.body).toEqual(plan);
      }
    });

    it('404 for an unknown plan, 400 for a non-numeric id', async () => {
      expectNotFound(await ctx().request('GET', `/v1/plans/${UNKNOWN_ID}`));
      expectValidation(await ctx().request('GET', '/v1/plans/starter'), ['plan_id']);
      expectValidation(await ctx().request('GET', '/v1/plans/0'), ['plan_id']);
    });

    it('ids beyond the 32-bit columns (2^31, 15 digits) → 400 on plan_id, never 500', async () => {
      for (const id of ['2147483648', '999999999999999'])
        expectInvalidId(await ctx().request('GET', `/v1/plans/${id}`), 'plan_id');
      expectNotFound(await ctx().request('GET', '/v1/plans/2147483647'));
    });

    it('plans cannot be created or changed through the API', async () => {
      const c = ctx();
      expect(
        (await c.request('POST', '/v1/plans', { body: { details: { name: 'Free' } } })).status,
      ).toBe(404);
      const first = (await c.request('GET', '/v1/plans')).body.results[0];
      expect(
        (await c.request('PATCH', `/v1/plans/${first.id}`, { body: { details: { name: 'Free' } } }))
          .status,
      ).toBe(404);
      expect((await c.request('DELETE', `/v1/plans/${first.id}`)).status).toBe(404);
      expect((await c.request('GET', `/v1/plans/${first.id}`)).body).toEqual(first);
    });
  });

  describe('subscriptions', () => {
    it('GET /organisations/{org_id}/subscriptions/{id}: the subscription made at sign-up', async () => {
      const c = ctx();
      const res = await c.request(
        'GET',
        orgPath(c.orgA.id, `/subscriptions/${c.orgA.subscriptionId}`),
      );
      expect(res.status).toBe(200);
      expectResource(res.body, 'subscription');
      const sandbox = (await c.request('GET', '/v1/plans?filter=name=Sandbox')).body.results[0];
      expect(res.body).toMatchObject({
        id: c.orgA.subscriptionId,
        org_id: c.orgA.id,
        plan_id: sandbox.id,
        end_date: null,
      });
      expect(res.body.start_date).toBe(res.body.created_at.slice(0, 10));
    });

    it("404 for an unknown id and for another organisation's subscription", async () => {
      const c = ctx();
      expectNotFound(await c.request('GET', orgPath(c.orgA.id, `/subscriptions/${UNKNOWN_ID}`)));
      expectNotFound(
        await c.request('GET', orgPath(c.orgA.id, `/subscriptions/${c.orgB.subscriptionId}`)),
      );
      expectValidation(await c.request('GET', orgPath(c.orgA.id, '/subscriptions/abc')), [
        'subscription_id',
      ]);
    });
  });

  describe('subscription and invoice lists', () => {
    // Two organisations of their own, so the counts do not depend on the other tests of this file.
    let c: TestContext;
    let own: TestOrg;
    let other: TestOrg;
    let ownSubIds: number[];
    let ownInvoiceIds: number[];
    let otherSubIds: number[];
    let otherInvoiceIds: number[];
    let growthPlanId: number;

    beforeAll(async () => {
      c = ctx();
      own = await c.makeOrg('ListOwn');
      other = await c.makeOrg('ListOther');
      // Interleaved, so the ids of the two organisations alternate.
      const s2 = await seedSubscription(c, own.id, 'Starter', '2026-09-01', '2026-09-30');
      const o2 = await seedSubscription(c, other.id, 'Starter', '2026-09-01');
      const s3 = await seedSubscription(c, own.id, 'Growth', '2026-10-01');
      growthPlanId = s3.plan_id;
      ownSubIds = [own.subscriptionId, s2.id, s3.id];
      otherSubIds = [other.subscriptionId, o2.id];
      ownInvoiceIds = [];
      otherInvoiceIds = [];
      const subsOfInvoices = [s2.id, s2.id, s3.id, s3.id, s3.id];
      for (const [i, subId] of subsOfInvoices.entries()) {
        const mine = await seedInvoice(c, {
          orgId: own.id,
          subId,
          sequence: i + 1,
          period: `2026-0${i + 1}`,
          fileRef: `invoices/own/${i + 1}.json`,
        });
        ownInvoiceIds.push(mine.id);
        if (i < 2) {
          const theirs = await seedInvoice(c, {
            orgId: other.id,
            subId: o2.id,
            sequence: i + 1,
            period: `2026-0${i + 1}`,
            fileRef: `secret-other-invoice-${i + 1}`,
          });
          otherInvoiceIds.push(theirs.id);
        }
      }
    });

    const get = (org: TestOrg, path: string, token = org.token) =>
      c.request('GET', orgPath(org.id, path), { token });

    it("GET /subscriptions: only the organisation's own, id ascending, each as the single GET returns it", async () => {
      const list = expectList(await get(own, '/subscriptions'), 'subscription', { total: 3 });
      expect(list.map((s) => s.id)).toEqual(ownSubIds);
      for (const s of list) {
        expect(s.org_id).toBe(own.id);
        expect(otherSubIds).not.toContain(s.id);
        expect((await get(own, `/subscriptions/${s.id}`)).body).toEqual(s);
      }
      expect(list.map((s) => s.end_date)).toEqual([null, '2026-09-30', null]);
      const theirs = expectList(await get(other, '/subscriptions'), 'subscription', { total: 2 });
      expect(theirs.map((s) => s.id)).toEqual(otherSubIds);
    });

    it("GET /invoices: only the organisation's own, id ascending, each as the single GET returns it", async () => {
      const res = await get(own, '/invoices');
      const list = expectList(res, 'invoice', { total: 5 });
      expect(list.map((i) => i.id)).toEqual(ownInvoiceIds);
      expect(list.map((i) => i.invoice_sequence)).toEqual([1, 2, 3, 4, 5]);
      for (const i of list) {
        expect(i.org_id).toBe(own.id);
        expect((await get(own, `/invoices/${i.id}`)).body).toEqual(i);
      }
      expect(JSON.stringify(res.body)).not.toContain('secret-other');
      const theirs = expectList(await get(other, '/invoices'), 'invoice', { total: 2 });
      expect(theirs.map((i) => i.id)).toEqual(otherInvoiceIds);
    });

    it('an organisation without invoices: empty results, X-Total-Pages 0 and X-Total-Count 0', async () => {
      const fresh = await c.makeOrg('ListFresh');
      expectList(await get(fresh, '/invoices'), 'invoice', { total: 0 });
      expect((await get(fresh, '/invoices')).headers.get('x-total-pages')).toBe('0');
      const subs = expectList(await get(fresh, '/subscriptions'), 'subscription', { total: 1 });
      expect(subs.map((s) => s.id)).toEqual([fresh.subscriptionId]);
    });

    it('pages: per_page and page, X-Total-Pages = ceil(total / per_page), a page past the end is empty', async () => {
      const pages: number[][] = [];
      for (const page of [1, 2, 3]) {
        const res = await get(
          own,
          withQuery('/invoices', [
            ['per_page', 2],
            ['page', page],
          ]),
        );
        expect(res.headers.get('x-total-pages')).toBe('3');
        expect(res.headers.get('x-total-count')).toBe('5');
        pages.push(expectList(res, 'invoice').map((i) => i.id));
      }
      expect(pages.flat()).toEqual(ownInvoiceIds);
      expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
      const past = await get(
        own,
        withQuery('/invoices', [
          ['per_page', 2],
          ['page', 4],
        ]),
      );
      expect(expectList(past, 'invoice')).toEqual([]);
      expect(past.headers.get('x-total-pages')).toBe('3');

      const subPage = await get(
        own,
        withQuery('/subscriptions', [
          ['per_page', 2],
          ['page', 2],
        ]),
      );
      expect(expectList(subPage, 'subscription').map((s) => s.id)).toEqual([ownSubIds[2]]);
      expect(subPage.headers.get('x-total-pages')).toBe('2');
      expect(subPage.headers.get('x-total-count')).toBe('3');
    });

    it('sort=id:desc gives the newest first; filter by plan_id, sub_id and invoice_sequence', async () => {
      const newest = await get(own, withQuery('/subscriptions', [['sort', 'id:desc']]));
      expect(expectList(newest, 'subscription').map((s) => s.id)).toEqual([...ownSubIds].reverse());
      const growth = await get(
        own,
        withQuery('/subscriptions', [['filter', `plan_id=${growthPlanId}`]]),
      );
      expect(expectList(growth, 'subscription', { total: 1 })[0].id).toBe(ownSubIds[2]);

      const bySub = await get(own, withQuery('/invoices', [['filter', `sub_id=${ownSubIds[2]}`]]));
      expect(expectList(bySub, 'invoice', { total: 3 }).map((i) => i.id)).toEqual(
        ownInvoiceIds.slice(2),
      );
      const bySeq = await get(
        own,
        withQuery('/invoices', [
          ['filter', 'invoice_sequence=gte:4'],
          ['sort', 'invoice_sequence:desc'],
        ]),
      );
      expect(expectList(bySeq, 'invoice', { total: 2 }).map((i) => i.invoice_sequence)).toEqual([
        5, 4,
      ]);
      // Another organisation's subscription id filters to nothing, not to its invoices.
      const foreign = await get(
        own,
        withQuery('/invoices', [['filter', `sub_id=${otherSubIds[1]}`]]),
      );
      expectList(foreign, 'invoice', { total: 0 });
    });

    it('unknown filter and sort fields, and a bad per_page → one 400 entry each', async () => {
      expectValidation(
        await get(
          own,
          withQuery('/invoices', [
            ['filter', 'file_ref=x'],
            ['sort', 'amount_gbp:asc'],
            ['per_page', 301],
          ]),
        ),
        [
          { field: 'filter', code: 'invalid_filter' },
          { field: 'sort', code: 'invalid_sort' },
          'per_page',
        ],
      );
      expectValidation(await get(own, withQuery('/subscriptions', [['filter', 'org_id=1']])), [
        { field: 'filter', code: 'invalid_filter' },
      ]);
    });

    it("another organisation's path → 403 with nothing of theirs (both lists, both directions)", async () => {
      for (const path of ['/subscriptions', '/invoices']) {
        for (const [from, to] of [
          [own, other],
          [other, own],
        ] as const) {
          const res = await c.request('GET', orgPath(to.id, path), { token: from.token });
          expectForbidden(res);
          expect(res.headers.get('x-total-pages')).toBeNull();
          expect(res.headers.get('x-total-count')).toBeNull();
          expect(JSON.stringify(res.body)).not.toContain('secret-other');
        }
      }
    });

    it('a token the organisation created can list; a disabled one cannot', async () => {
      const created = await createToken(
        c,
        { friendly_name: 'billing-reader' },
        { orgId: own.id, token: own.token },
      );
      const subs = await get(own, '/subscriptions', created.bearer);
      expect(expectList(subs, 'subscription', { total: 3 }).map((s) => s.id)).toEqual(ownSubIds);
      const invoices = await get(own, '/invoices', created.bearer);
      expect(expectList(invoices, 'invoice', { total: 5 }).map((i) => i.id)).toEqual(ownInvoiceIds);
      expectForbidden(await get(other, '/invoices', created.bearer));
      await c.request('PATCH', orgPath(own.id, `/api-tokens/${created.token.id}`), {
        token: own.token,
        body: { enabled: false },
      });
      expect((await get(own, '/invoices', created.bearer)).status).toBe(401);
    });
  });

  describe('invoices', () => {
    it('GET /organisations/{org_id}/invoices/{id}: the invoice with quotas', async () => {
      const c = ctx();
      const row = await seedInvoice(c, {
        orgId: c.orgA.id,
        subId: c.orgA.subscriptionId,
        sequence: 1,
        period: '2026-10',
        monthlyVerifications: 4321,
        overageCalls: 21,
        fileRef: 'invoices/a/2026-10-0001.json',
      });
      const res = await c.request('GET', orgPath(c.orgA.id, `/invoices/${row.id}`));
      expect(res.status).toBe(200);
      expectResource(res.body, 'invoice');
      expect(res.body).toEqual({
        id: row.id,
        org_id: c.orgA.id,
        sub_id: c.orgA.subscriptionId,
        invoice_sequence: 1,
        quotas: { monthly_verifications: 4321, overage_calls: 21 },
        file_ref: 'invoices/a/2026-10-0001.json',
        created_at: row.created_at,
        updated_at: row.updated_at,
      });
    });

    it("404 for an unknown id and for another organisation's invoice (no data leaks)", async () => {
      const c = ctx();
      expectNotFound(await c.request('GET', orgPath(c.orgA.id, `/invoices/${UNKNOWN_ID}`)));
      const b = await seedInvoice(c, {
        orgId: c.orgB.id,
        subId: c.orgB.subscriptionId,
        fileRef: 'secret-b-invoice',
      });
      const res = await c.request('GET', orgPath(c.orgA.id, `/invoices/${b.id}`));
      expectNotFound(res);
      expect(JSON.stringify(res.body)).not.toContain('secret-b-invoice');
      expect(
        (await c.request('GET', orgPath(c.orgB.id, `/invoices/${b.id}`), { token: c.orgB.token }))
          .status,
      ).toBe(200);
      expectValidation(await c.request('GET', orgPath(c.orgA.id, '/invoices/-1')), ['invoice_id']);
    });
  });
});
