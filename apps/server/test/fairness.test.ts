import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimJob } from '../src/repositories/jobs.js';
import { claimDelivery, insertDelivery } from '../src/repositories/webhooks.js';
import { issueToken } from '../src/services/organisations.js';
import { createJobRunner } from '../src/workers/job-runner.js';
import { createWebhookDispatcher } from '../src/workers/webhook-dispatcher.js';
import { createTestContext, type TestContext } from './support/context.js';
import { TEST_DIALECT } from './support/database.js';
import { fakeAnalyzer } from './support/fake-engine.js';
import { moveToPlan, orgPath, seedJob, silentWav } from './support/fixtures.js';
import { startWebhookReceiver } from './support/webhook-receiver.js';

const VOICE = silentWav();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function p95(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)]!;
}

describe(`fair claim order between organisations (${TEST_DIALECT})`, () => {
  it('serves organisations in turn, oldest job first within each', async () => {
    const ctx = await createTestContext();
    try {
      const queue = (orgId: number, i: number) =>
        seedJob(ctx, {
          org_id: orgId,
          kind: 'enrollment',
          status: 'queued',
          attempts: 0,
          external_id: `${orgId}-${i}`,
        });
      // A queues six jobs before B queues two: first-in-first-out would serve all of A's first.
      for (let i = 0; i < 6; i++) await queue(ctx.orgA.id, i);
      for (let i = 0; i < 2; i++) await queue(ctx.orgB.id, i);
      const order: string[] = [];
      for (let i = 0; i < 8; i++) {
        const claimed = await claimJob(ctx.db, ctx.database.dialect, 'test', 60_000);
        order.push(claimed!.external_id);
        await sleep(2);
      }
      const a = (i: number) => `${ctx.orgA.id}-${i}`;
      const b = (i: number) => `${ctx.orgB.id}-${i}`;
      expect(order).toEqual([a(0), b(0), a(1), b(1), a(2), a(3), a(4), a(5)]);
      expect(await claimJob(ctx.db, ctx.database.dialect, 'test', 60_000)).toBeUndefined();
    } finally {
      await ctx.cleanup();
    }
  });
});

describe.skipIf(TEST_DIALECT !== 'postgres')(
  'a claim passes over work another process holds (postgres)',
  () => {
    // A's work is first in line, but another connection holds its row: the claim takes B's, and the turn it
    // records is B's (the claim, the fallback and the turn are one statement).
    const turns = (ctx: TestContext) =>
      ctx.db.selectFrom('queue_turns').selectAll().orderBy('org_id').execute();

    it('a job', async () => {
      const ctx = await createTestContext();
      try {
        const seed = (orgId: number) =>
          seedJob(ctx, {
            org_id: orgId,
            kind: 'enrollment',
            status: 'queued',
            attempts: 0,
            external_id: `held-${orgId}`,
          });
        const held = await seed(ctx.orgA.id);
        await seed(ctx.orgB.id);
        await ctx.db.transaction().execute(async (trx) => {
          await trx.selectFrom('jobs').select('id').where('id', '=', held.id).forUpdate().execute();
          const claimed = await claimJob(ctx.db, ctx.database.dialect, 'test', 60_000);
          expect(claimed?.org_id).toBe(ctx.orgB.id);
          expect(claimed?.status).toBe('processing');
          expect(await turns(ctx)).toEqual([
            { org_id: ctx.orgB.id, job_claimed_at: claimed!.updated_at, delivery_claimed_at: null },
          ]);
          expect(await claimJob(ctx.db, ctx.database.dialect, 'test', 60_000)).toBeUndefined();
        });
        expect((await claimJob(ctx.db, ctx.database.dialect, 'test', 60_000))?.id).toBe(held.id);
      } finally {
        await ctx.cleanup();
      }
    });

    it('a claim that gets the fair pick holds no other row', async () => {
      const ctx = await createTestContext();
      try {
        const seed = (orgId: number) =>
          seedJob(ctx, { org_id: orgId, kind: 'enrollment', status: 'queued', attempts: 0 });
        const fair = await seed(ctx.orgA.id);
        const other = await seed(ctx.orgB.id);
        await ctx.db.transaction().execute(async (trx) => {
          expect((await claimJob(trx, ctx.database.dialect, 'test', 60_000))?.id).toBe(fair.id);
          // from another connection, while the claim's transaction is still open
          const locked = await ctx.db
            .selectFrom('jobs')
            .select('id')
            .where('id', '=', other.id)
            .forUpdate()
            .noWait()
            .execute();
          expect(locked).toEqual([{ id: other.id }]);
        });
      } finally {
        await ctx.cleanup();
      }
    });

    it('a webhook delivery', async () => {
      const ctx = await createTestContext();
      try {
        const seed = (orgId: number) =>
          insertDelivery(ctx.db, {
            orgId,
            jobId: null,
            webhookId: `msg_${randomUUID()}`,
            eventType: 'verification.completed',
            requestUuid: randomUUID(),
            payload: '{}',
          });
        const held = await seed(ctx.orgA.id);
        const other = await seed(ctx.orgB.id);
        // A's is due first, so it is the fair pick
        for (const [delivery, due] of [
          [held, '2000-01-01T00:00:00.000Z'],
          [other, '2000-01-01T00:00:01.000Z'],
        ] as const)
          await ctx.db
            .updateTable('webhook_deliveries')
            .set({ next_attempt_at: due })
            .where('id', '=', delivery.id)
            .execute();
        await ctx.db.transaction().execute(async (trx) => {
          await trx
            .selectFrom('webhook_deliveries')
            .select('id')
            .where('id', '=', held.id)
            .forUpdate()
            .execute();
          const claimed = await claimDelivery(ctx.db, ctx.database.dialect, 'test', 60_000);
          expect(claimed?.org_id).toBe(ctx.orgB.id);
          expect(claimed?.lease_owner).toBe('test');
          expect(await turns(ctx)).toEqual([
            { org_id: ctx.orgB.id, job_claimed_at: null, delivery_claimed_at: claimed!.updated_at },
          ]);
          expect(await claimDelivery(ctx.db, ctx.database.dialect, 'test', 60_000)).toBeUndefined();
        });
        expect((await claimDelivery(ctx.db, ctx.database.dialect, 'test', 60_000))?.id).toBe(
          held.id,
        );
      } finally {
        await ctx.cleanup();
      }
    });
  },
);

describe(`one organisation cannot starve another (${TEST_DIALECT})`, () => {
  // Long enough next to scheduling noise on a busy machine that the queueing effect dominates: with fair
  // claiming B waits for the first of 4 busy lanes, p95 about 0.53 x JOB_MS, so the 2x bound keeps a
  // margin of about half a job against the server's own overheads growing under load.
  // A's enrolments take 450-750 ms (a fixed pseudo-random sequence), as real recordings vary: with one
  // fixed duration, A's first burst starts the 4 lanes together and they stay in step for good, so B
  // waits for all four at once (up to a whole job, p95 right at 2x) instead of the first to free up.
  // B's verifications take exactly JOB_MS, idle and loaded alike.
  const JOB_MS = 600;
  const floodJobMs = (call: number) => 450 + ((call * 7919) % 301);
  const CAP = 16;
  let ctx: TestContext;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let stopWorkers: () => Promise<void>;
  let tokenA: string;
  let tokenB: string;

  beforeAll(async () => {
    ctx = await createTestContext({
      JOB_MAX_QUEUE: '40',
      JOB_MAX_QUEUE_PER_ORG: String(CAP),
      JOB_POLL_MS: '50',
      WEBHOOK_CONCURRENCY: '4',
    });
    receiver = await startWebhookReceiver();
    for (const org of [ctx.orgA, ctx.orgB]) {
      await ctx.db
        .updateTable('organisation_settings')
        .set({ callback_url: receiver.url })
        .where('org_id', '=', org.id)
        .execute();
      await moveToPlan(ctx, org.id, 'Starter');
    }
    tokenA = (await issueToken(ctx.db, { orgId: ctx.orgA.id, friendlyName: 'flood', kind: 'live' }))
      .bearer;
    tokenB = (
      await issueToken(ctx.db, { orgId: ctx.orgB.id, friendlyName: 'steady', kind: 'live' })
    ).bearer;
    const runner = createJobRunner(
      ctx.deps,
      fakeAnalyzer({ delayMs: JOB_MS, enrolDelayMs: floodJobMs }),
      4,
    );
    const dispatcher = createWebhookDispatcher(ctx.deps);
    ctx.deps.signals = { jobQueued: () => runner.wake(), deliveryQueued: () => dispatcher.wake() };
    runner.start();
    dispatcher.start();
    stopWorkers = async () => {
      await runner.stop();
      await dispatcher.stop();
    };
  });

  afterAll(async () => {
    await stopWorkers?.();
    await receiver?.close();
    await ctx?.cleanup();
  });

  async function countUnfinished(c: TestContext, orgId: number) {
    const row = await c.db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('org_id', '=', orgId)
      .where('status', 'in', ['queued', 'processing'])
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async function send(
    orgId: number,
    token: string,
    kind: 'enrollments' | 'verifications',
    externalId: string,
  ) {
    const requestUuid = randomUUID();
    const sentAt = Date.now();
    const res = await ctx.request('POST', orgPath(orgId, `/${kind}`), {
      token,
      body: {
        voice_data: VOICE,
        request_uuid: requestUuid,
        external_id: externalId,
        language: 'en-UK',
      },
    });
    return { status: res.status, requestUuid, sentAt };
  }

  async function requestToWebhookMs(
    count: number,
    intervalMs: number,
  ): Promise<{ statuses: number[]; latencies: number[] }> {
    const statuses: number[] = [];
    const latencies: number[] = [];
    for (let i = 0; i < count; i++) {
      const started = Date.now();
      const sent = await send(ctx.orgB.id, tokenB, 'verifications', 'bea');
      statuses.push(sent.status);
      if (sent.status === 202) {
        const calls = await receiver.waitFor(
          (all) => all.some((c) => c.body.request_uuid === sent.requestUuid),
          10_000,
        );
        latencies.push(
          calls.find((c) => c.body.request_uuid === sent.requestUuid)!.receivedAt - sent.sentAt,
        );
      }
      await sleep(Math.max(0, intervalMs - (Date.now() - started)));
    }
    return { statuses, latencies };
  }

  it('B gets no 429 and its request-to-webhook p95 stays within 2x of idle while A keeps its queue full', async () => {
    const enrolled = await send(ctx.orgB.id, tokenB, 'enrollments', 'bea');
    expect(enrolled.status).toBe(202);
    await receiver.waitFor((all) => all.some((c) => c.body.request_uuid === enrolled.requestUuid));
    const idle = await requestToWebhookMs(8, 800);
    expect(idle.statuses.every((s) => s === 202)).toBe(true);

    let flooding = true;
    const floodStatuses: number[] = [];
    let n = 0;
    // A tops its queue up to the cap as jobs finish (and keeps poking at the cap, getting 429s), so it
    // is always full without the test's own requests eating the CPU the server needs.
    const flood = (async () => {
      let lastPoke = 0;
      while (flooding) {
        const deficit = CAP - (await countUnfinished(ctx, ctx.orgA.id));
        const sends = Array.from({ length: Math.max(0, deficit) }, () =>
          send(ctx.orgA.id, tokenA, 'enrollments', `flood-${n++}`),
        );
        if (Date.now() - lastPoke > 300) {
          lastPoke = Date.now();
          sends.push(send(ctx.orgA.id, tokenA, 'enrollments', `flood-${n++}`));
        }
        for (const { status } of await Promise.all(sends)) floodStatuses.push(status);
        await sleep(20);
      }
    })();
    // Let A fill its share of the queue first.
    const deadline = Date.now() + 10_000;
    while (!floodStatuses.includes(429) && Date.now() < deadline) await sleep(20);
    const loaded = await requestToWebhookMs(10, 1000);
    flooding = false;
    await flood;

    expect(floodStatuses).toContain(429);
    expect(loaded.statuses).toEqual(Array(10).fill(202));
    // A really was held at its cap the whole time.
    expect(await countUnfinished(ctx, ctx.orgA.id)).toBeGreaterThan(0);
    const idleP95 = p95(idle.latencies);
    const loadedP95 = p95(loaded.latencies);
    console.log(
      `request-to-webhook p95: idle ${idleP95} ms, A flooding ${loadedP95} ms (job ${JOB_MS} ms, 4 lanes)`,
    );
    expect(loadedP95).toBeLessThanOrEqual(2 * idleP95);
    expect(ctx.reportedErrors).toEqual([]);
  }, 60_000);
});
