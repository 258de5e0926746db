import { describe, expect, it } from 'vitest';
import { TEST_DIALECT } from './support/database.js';
import {
  expectList,
  expectInvalidId,
  expectNotFound,
  expectResource,
  expectValidation,
  useContext,
  WITHOUT_RATE_LIMITS,
} from './support/expect.js';
import { orgPath, seedInvoice, UNKNOWN_ID } from './support/fixtures.js';

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
