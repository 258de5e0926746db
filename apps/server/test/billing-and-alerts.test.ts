import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkFailureRate } from '../src/workers/failure-alerts.js';
import { closeBillingPeriod } from '../src/services/invoices.js';
import { createTestContext, type TestContext, testConfig } from './support/context.js';
import { TEST_DIALECT } from './support/database.js';
import { seedJob } from './support/fixtures.js';

function insertVerification(
  ctx: TestContext,
  orgId: number,
  values: { createdAt: string; result?: 'verified' | 'rejected' | 'inconclusive' },
) {
  const at = values.createdAt;
  return seedJob(ctx, {
    org_id: orgId,
    result: values.result ?? 'verified',
    run_after: at,
    completed_at: at,
    created_at: at,
    updated_at: at,
  });
}

/** When the months these tests close have ended. */
const DECEMBER = new Date('2026-12-01T00:00:00.000Z');

describe(`billing periods (${TEST_DIALECT})`, () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(() => ctx.cleanup());

  it('invoices each subscription once per month, counting verifications and overage', async () => {
    // Org A is on Sandbox: 100 calls included. 103 verifications in October, 2 in November.
    for (let i = 0; i < 103; i++)
      await insertVerification(ctx, ctx.orgA.id, {
        createdAt: `2026-10-${String(1 + (i % 28)).padStart(2, '0')}T10:00:00.000Z`,
      });
    for (let i = 0; i < 2; i++)
      await insertVerification(ctx, ctx.orgA.id, { createdAt: '2026-11-02T10:00:00.000Z' });
    await ctx.db.updateTable('subscriptions').set({ start_date: '2026-09-01' }).execute();
    const dataDir = mkdtempSync(path.join(tmpdir(), 'voxkey-invoices-'));

    const invoices = await closeBillingPeriod(ctx.db, '2026-10', dataDir, DECEMBER);
    const forA = invoices.find((inv) => inv.org_id === ctx.orgA.id)!;
    expect(forA).toMatchObject({
      invoice_sequence: 1,
      monthly_verifications: 103,
      overage_calls: 3,
      period: '2026-10',
    });
    expect(existsSync(path.join(dataDir, forA.file_ref))).toBe(true);
    expect(JSON.parse(readFileSync(path.join(dataDir, forA.file_ref), 'utf8'))).toMatchObject({
      overage_calls: 3,
      amount_due_gbp: 0,
    });
    expect(await closeBillingPeriod(ctx.db, '2026-10', dataDir, DECEMBER)).toHaveLength(0);

    const november = await closeBillingPeriod(ctx.db, '2026-11', dataDir, DECEMBER);
    expect(november.find((inv) => inv.org_id === ctx.orgA.id)).toMatchObject({
      invoice_sequence: 2,
      monthly_verifications: 2,
      overage_calls: 0,
    });

    const res = await ctx.request('GET', `/v1/organisations/${ctx.orgA.id}/invoices/${forA.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: forA.id,
      org_id: ctx.orgA.id,
      sub_id: ctx.orgA.subscriptionId,
      invoice_sequence: 1,
      quotas: { monthly_verifications: 103, overage_calls: 3 },
      file_ref: forA.file_ref,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const other = await ctx.request('GET', `/v1/organisations/${ctx.orgA.id}/invoices/${forA.id}`, {
      token: ctx.orgB.token,
    });
    expect(other.status).toBe(403);
  });

  it('rejects a malformed month, and a month that has not ended', async () => {
    await expect(closeBillingPeriod(ctx.db, '2026-13', tmpdir())).rejects.toThrow(/YYYY-MM/);
    const lastDay = new Date('2026-11-30T23:59:59.999Z');
    await expect(closeBillingPeriod(ctx.db, '2026-11', tmpdir(), lastDay)).rejects.toThrow(
      '2026-11 has not ended yet (it ends at 2026-12-01T00:00:00.000Z)',
    );
    await expect(closeBillingPeriod(ctx.db, '2027-05', tmpdir(), lastDay)).rejects.toThrow(
      /has not ended yet/,
    );
  });
});

describe(`failure-rate alerts by email (${TEST_DIALECT})`, () => {
  let ctx: TestContext;
  let smtp: SMTPServer;
  const mails: string[] = [];

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onData(stream, _session, callback) {
        let data = '';
        stream.on('data', (chunk) => (data += chunk));
        stream.on('end', () => {
          mails.push(data);
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const { port } = smtp.server.address() as AddressInfo;
    ctx = await createTestContext({
      SMTP_URL: `smtp://127.0.0.1:${port}`,
      ALERT_MIN_VERIFICATIONS: '10',
      ALERT_FAILURE_RATE: '0.5',
    });
  });
  afterAll(async () => {
    await ctx.cleanup();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  it('emails the contact address once when the failure rate is abnormal, then stays quiet for the cooldown', async () => {
    const now = new Date();
    const recent = new Date(now.getTime() - 5 * 60 * 1000).toISOString();
    for (let i = 0; i < 4; i++)
      await insertVerification(ctx, ctx.orgA.id, { createdAt: recent, result: 'verified' });
    for (let i = 0; i < 8; i++)
      await insertVerification(ctx, ctx.orgA.id, {
        createdAt: recent,
        result: i % 2 ? 'rejected' : 'inconclusive',
      });

    // Off until the organisation asks for it.
    expect(await checkFailureRate(ctx.deps, ctx.orgA.id, now)).toBe(false);
    await ctx.request('PATCH', `/v1/organisations/${ctx.orgA.id}/settings`, {
      body: { org_id: ctx.orgA.id, settings: { alert_on_failure: true } },
    });

    expect(await checkFailureRate(ctx.deps, ctx.orgA.id, now)).toBe(true);
    expect(mails).toHaveLength(1);
    expect(mails[0]).toContain('To: orga@example.com');
    expect(mails[0]).toMatch(/8 of 12 verifications/);
    expect(await checkFailureRate(ctx.deps, ctx.orgA.id, new Date(now.getTime() + 60_000))).toBe(
      false,
    );
    expect(mails).toHaveLength(1);
  });

  it('does not alert below the minimum volume', async () => {
    const ctxDeps = {
      ...ctx.deps,
      config: testConfig({ SMTP_URL: 'smtp://127.0.0.1:1', ALERT_MIN_VERIFICATIONS: '1000' }),
    };
    await ctx.request('PATCH', `/v1/organisations/${ctx.orgB.id}/settings`, {
      token: ctx.orgB.token,
      body: { org_id: ctx.orgB.id, settings: { alert_on_failure: true } },
    });
    await insertVerification(ctx, ctx.orgB.id, {
      createdAt: new Date().toISOString(),
      result: 'rejected',
    });
    expect(await checkFailureRate(ctxDeps, ctx.orgB.id)).toBe(false);
  });
});
