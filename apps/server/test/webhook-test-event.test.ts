import { WebhookTestEventSchema } from '@voxkey/contract';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookDispatcher, maxDeliveryAttempts } from '../src/workers/webhook-dispatcher.js';
import { TEST_DIALECT } from './support/database.js';
import { expectError, expectForbidden, ISO_UTC, useContext } from './support/expect.js';
import { startWebhookReceiver } from './support/webhook-receiver.js';

describe(`webhook test events: POST /organisations/{org_id}/webhook-test (${TEST_DIALECT})`, () => {
  const ctx = useContext({ WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_RETRY_SCHEDULE: '0.1,0.1' });
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(() => receiver.close());

  const testPath = (orgId = ctx().orgA.id) => `/v1/organisations/${orgId}/webhook-test`;
  const setCallback = (callbackUrl: string | null, orgId = ctx().orgA.id) =>
    ctx().request('PATCH', `/v1/organisations/${orgId}/settings`, {
      body: { org_id: orgId, settings: { callback_url: callbackUrl } },
    });

  /** Runs a dispatcher (with `deps`, the context's by default) until `done` says so. */
  async function dispatchUntil(done: () => Promise<boolean>, deps = ctx().deps): Promise<void> {
    const dispatcher = createWebhookDispatcher(deps);
    dispatcher.start();
    try {
      const deadline = Date.now() + 10_000;
      while (!(await done())) {
        if (Date.now() > deadline) throw new Error('deliveries still pending');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await dispatcher.stop();
    }
  }

  const deliverAll = () =>
    dispatchUntil(async () => {
      const pending = await ctx()
        .db.selectFrom('webhook_deliveries')
        .select('id')
        .where('status', '=', 'pending')
        .execute();
      return pending.length === 0;
    });

  const deliveryRow = (id: number) =>
    ctx()
      .db.selectFrom('webhook_deliveries')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();

  const redeliver = (id: number) =>
    ctx().request('POST', `/v1/organisations/${ctx().orgA.id}/webhook-deliveries/${id}/redeliver`);

  /** Sends a test event to a receiver that always answers 500, until the delivery is failed. */
  async function sendUntilRetriesRunOut() {
    const failing = await startWebhookReceiver(() => 500);
    try {
      await setCallback(failing.url);
      const sent = await ctx().request('POST', testPath());
      await deliverAll();
      return sent;
    } finally {
      await failing.close();
      await setCallback(receiver.url);
    }
  }

  /** What a queued delivery looks like before its first attempt. */
  const FRESH = {
    status: 'pending',
    attempts: 0,
    last_status_code: null,
    last_error: null,
    delivered_at: null,
  };

  it('409 no_callback_url when the organisation has no callback URL, and nothing is queued', async () => {
    await setCallback(null);
    const res = await ctx().request('POST', testPath());
    expectError(res, 409, /No callback URL is configured/, 'no_callback_url');
    const rows = await ctx()
      .db.selectFrom('webhook_deliveries')
      .select('id')
      .where('org_id', '=', ctx().orgA.id)
      .execute();
    expect(rows).toHaveLength(0);
  });

  it('202 queues a signed webhook.test event that reaches the receiver, verifies with the organisation secret and shows in the delivery log', async () => {
    expect((await setCallback(receiver.url)).status).toBe(200);
    const before = ctx().signalled.deliveries;
    const res = await ctx().request('POST', testPath());
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      event_type: 'webhook.test',
      status: 'pending',
      attempts: 0,
      last_status_code: null,
      delivered_at: null,
    });
    expect(res.body.webhook_id).toMatch(/^msg_[0-9a-f-]{36}$/);
    expect(res.body.created_at).toMatch(ISO_UTC);
    expect(ctx().signalled.deliveries).toBe(before + 1);

    await deliverAll();
    const call = receiver.calls.find((c) => c.id === res.body.webhook_id)!;
    expect(call).toBeDefined();
    const event = new Webhook(ctx().orgA.webhookSecret).verify(call.rawBody, {
      'webhook-id': call.id,
      'webhook-timestamp': call.timestamp,
      'webhook-signature': call.signature,
    });
    expect(WebhookTestEventSchema.strict().parse(event)).toEqual({
      event_type: 'webhook.test',
      request_uuid: res.body.request_uuid,
      organisation_id: ctx().orgA.id,
      message: expect.any(String),
      created_at: expect.stringMatching(ISO_UTC),
    });

    const log = await ctx().request(
      'GET',
      `/v1/organisations/${ctx().orgA.id}/webhook-deliveries?filter=event_type%3Dwebhook.test`,
    );
    expect(log.status).toBe(200);
    expect(log.body.results).toEqual([
      expect.objectContaining({
        id: res.body.id,
        webhook_id: res.body.webhook_id,
        status: 'delivered',
        attempts: 1,
        last_status_code: 200,
      }),
    ]);
  });

  it('a test delivery can be redelivered (same webhook-id) like any other', async () => {
    const sent = await ctx().request('POST', testPath());
    await deliverAll();
    const again = await redeliver(sent.body.id);
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({
      ...FRESH,
      id: sent.body.id,
      webhook_id: sent.body.webhook_id,
    });
    await deliverAll();
    expect(receiver.calls.filter((c) => c.id === sent.body.webhook_id)).toHaveLength(2);
    expect(await deliveryRow(sent.body.id)).toMatchObject({
      status: 'delivered',
      attempts: 1,
      last_status_code: 200,
    });
  });

  it('a delivery whose retries ran out is sent again, the same event, when redelivered', async () => {
    const sent = await sendUntilRetriesRunOut();
    const exhausted = await deliveryRow(sent.body.id);
    expect(exhausted).toMatchObject({
      status: 'failed',
      attempts: maxDeliveryAttempts(ctx().deps.config.WEBHOOK_RETRY_SCHEDULE),
      last_status_code: 500,
      last_error: 'receiver answered 500',
    });

    const again = await redeliver(sent.body.id);
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ ...FRESH, webhook_id: sent.body.webhook_id });
    await deliverAll();
    const calls = receiver.calls.filter((c) => c.id === sent.body.webhook_id);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.rawBody).toBe(exhausted.payload);
    expect(await deliveryRow(sent.body.id)).toMatchObject({
      status: 'delivered',
      attempts: 1,
      last_status_code: 200,
      last_error: null,
    });
  });

  it('a redelivered delivery that fails retries on the first step of the schedule', async () => {
    const sent = await ctx().request('POST', testPath());
    await deliverAll();
    const failing = await startWebhookReceiver(() => 500);
    // Steps far apart: the delay after the attempt tells which step of the schedule it was on.
    const schedule = [60_000, 3_600_000];
    const deps = {
      ...ctx().deps,
      config: { ...ctx().deps.config, WEBHOOK_RETRY_SCHEDULE: schedule },
    };
    try {
      await setCallback(failing.url);
      expect((await redeliver(sent.body.id)).status).toBe(202);
      await dispatchUntil(
        async () => (await deliveryRow(sent.body.id)).last_status_code === 500,
        deps,
      );
      const row = await deliveryRow(sent.body.id);
      expect(row).toMatchObject({ status: 'pending', attempts: 1, delivered_at: null });
      const delay = Date.parse(row.next_attempt_at!) - Date.parse(row.updated_at);
      expect(delay).toBeGreaterThan(schedule[0]! * 0.8 - 1000);
      expect(delay).toBeLessThanOrEqual(schedule[0]! * 1.2);
    } finally {
      // Not left pending for a minute: the other tests dispatch until nothing is pending.
      await ctx()
        .db.updateTable('webhook_deliveries')
        .set({ status: 'failed', next_attempt_at: null })
        .where('id', '=', sent.body.id)
        .execute();
      await failing.close();
      await setCallback(receiver.url);
    }
  });

  it('stays within the organisation: another organisation cannot send or see it', async () => {
    expectForbidden(await ctx().request('POST', testPath(), { token: ctx().orgB.token }));
    const log = await ctx().request(
      'GET',
      `/v1/organisations/${ctx().orgB.id}/webhook-deliveries`,
      { token: ctx().orgB.token },
    );
    expect(log.body.results).toEqual([]);
  });

  it('is retried on the schedule when the receiver fails, then marked failed', async () => {
    const failing = await startWebhookReceiver(() => 500);
    try {
      await setCallback(failing.url);
      const sent = await ctx().request('POST', testPath());
      await deliverAll();
      const row = await ctx()
        .db.selectFrom('webhook_deliveries')
        .selectAll()
        .where('id', '=', sent.body.id)
        .executeTakeFirstOrThrow();
      expect(row).toMatchObject({
        status: 'failed',
        attempts: 3,
        last_status_code: 500,
        job_id: null,
      });
      expect(failing.calls).toHaveLength(3);
    } finally {
      await failing.close();
      await setCallback(receiver.url);
    }
  });
});
