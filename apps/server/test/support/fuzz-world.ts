/**
 * The records the fuzzer points at: organisation A (the caller) with a few of everything, and
 * organisation B seeded with recognisable values (`ORG-B-SECRET-...`) so any leak into a response
 * to A can be spotted by scanning the body.
 */
import { randomUUID } from 'node:crypto';
import { deleteJobRecording, insertJob } from '../../src/repositories/jobs.js';
import { insertText } from '../../src/repositories/predefined-texts.js';
import { insertDelivery } from '../../src/repositories/webhooks.js';
import { issueToken } from '../../src/services/organisations.js';
import type { TestContext } from './context.js';
import { jobRequest, seedDevice, seedInvoice, seedUser } from './fixtures.js';

export const MARKER = 'ORG-B-SECRET';

export type PoolKey =
  | 'org_id'
  | 'token_id'
  | 'user_id'
  | 'device_id'
  | 'text_id'
  | 'plan_id'
  | 'subscription_id'
  | 'invoice_id'
  | 'request_uuid:enrollment'
  | 'request_uuid:verification'
  | 'delivery_id';

export interface FuzzWorld {
  ctx: TestContext;
  /** Organisation A's bearer the fuzzer sends (its trial token; never a target of the fuzzed routes). */
  mainBearer: string;
  mainTokenId: number;
  /** The main, disabled and expired tokens: never the target of a token route. */
  protectedTokenIds: number[];
  otherBearer: string;
  disabledBearer: string;
  expiredBearer: string;
  /** Real records of A, by path parameter. */
  own: Record<PoolKey, Array<string | number>>;
  /** One real record of B per path parameter. */
  other: Partial<Record<PoolKey, string | number>>;
  /** B's record ids by component schema name, to spot them in A's responses. */
  otherIds: Record<string, Set<number>>;
  /** Strings that only B's data contains. */
  otherStrings: string[];
  replenish(key: PoolKey): Promise<void>;
}

let seq = 0;
const next = () => `${Date.now().toString(36)}-${++seq}`;

async function seedJob(
  ctx: TestContext,
  orgId: number,
  kind: 'enrollment' | 'verification',
  externalId: string,
  completed: boolean,
) {
  const requestUuid = randomUUID();
  const job = await insertJob(
    ctx.db,
    ctx.database.dialect,
    jobRequest({
      orgId,
      kind,
      externalId,
      requestUuid,
      bodyHash: `hash-${requestUuid}`,
      audio: new Uint8Array([0, 0, 0]),
      durationSeconds: 4,
    }),
  );
  if (completed) {
    const now = new Date().toISOString();
    await ctx.db
      .updateTable('jobs')
      .set(
        kind === 'verification'
          ? {
              status: 'completed',
              result: 'verified',
              match_score: 0.93,
              deepfake_detected: 0,
              quality_score: 0.8,
              device_mismatch: 0,
              latency_ms: 120,
              completed_at: now,
            }
          : {
              status: 'completed',
              quality_score: 0.8,
              latency_ms: 150,
              completed_at: now,
            },
      )
      .where('id', '=', job.id)
      .execute();
    await deleteJobRecording(ctx.db, job.id);
  }
  const delivery = await insertDelivery(ctx.db, {
    orgId,
    jobId: job.id,
    webhookId: `msg_${randomUUID()}`,
    eventType: kind === 'verification' ? 'verification.completed' : 'enrollment.completed',
    requestUuid,
    payload: JSON.stringify({
      event_type: `${kind}.completed`,
      request_uuid: requestUuid,
      external_id: externalId,
    }),
  });
  return { job, delivery, requestUuid };
}

export async function createFuzzWorld(ctx: TestContext): Promise<FuzzWorld> {
  const A = ctx.orgA;
  const B = ctx.orgB;
  const mainTokenId = (
    await ctx.db
      .selectFrom('api_tokens')
      .select('id')
      .where('org_id', '=', A.id)
      .executeTakeFirstOrThrow()
  ).id;

  // --- organisation B, recognisable everywhere ---
  const bName = `${MARKER}-org`;
  await ctx.db
    .updateTable('organisations')
    .set({
      name: bName,
      address: `${MARKER}-address`,
      vat: `${MARKER}-vat`,
      vies: `${MARKER}-vies`,
    })
    .where('id', '=', B.id)
    .execute();
  await ctx.db
    .updateTable('organisation_settings')
    .set({ callback_url: `https://8.8.4.4/${MARKER}-hook` })
    .where('org_id', '=', B.id)
    .execute();
  const bUser = await seedUser(ctx, B.id, `${MARKER}-user`);
  const bDevice = await seedDevice(ctx, {
    orgId: B.id,
    userId: bUser.id,
    fingerprint: `${MARKER}-fp`,
  });
  const bText = await insertText(ctx.db, B.id, {
    language: 'en-UK',
    text_code: 1,
    text: `${MARKER}-text`,
  });
  const bToken = await issueToken(ctx.db, {
    orgId: B.id,
    friendlyName: `${MARKER}-token`,
    kind: 'live',
  });
  const bInvoice = await seedInvoice(ctx, {
    orgId: B.id,
    subId: B.subscriptionId,
    fileRef: `invoices/${MARKER}.json`,
  });
  const bEnrol = await seedJob(ctx, B.id, 'enrollment', `${MARKER}-enrol`, true);
  const bVerify = await seedJob(ctx, B.id, 'verification', `${MARKER}-verify`, true);

  // --- organisation A ---
  await ctx.db
    .updateTable('organisation_settings')
    .set({ callback_url: 'https://8.8.8.8/hook' })
    .where('org_id', '=', A.id)
    .execute();
  const disabled = await issueToken(ctx.db, {
    orgId: A.id,
    friendlyName: 'disabled',
    kind: 'live',
    enabled: false,
  });
  const expired = await issueToken(ctx.db, {
    orgId: A.id,
    friendlyName: 'expired',
    kind: 'live',
    expiresAt: new Date(Date.now() - 60_000).toISOString(),
  });

  const seeders: Partial<Record<PoolKey, () => Promise<string | number>>> = {
    user_id: async () => (await seedUser(ctx, A.id, `user-${next()}`)).id,
    token_id: async () =>
      (
        await issueToken(ctx.db, {
          orgId: A.id,
          friendlyName: `sacrificial-${next()}`,
          kind: 'live',
        })
      ).token.id,
    text_id: async () =>
      (
        await insertText(ctx.db, A.id, {
          language: 'fr-FR',
          text_code: 100_000 + ++seq,
          text: `Dites ${next()}`,
        })
      ).id,
    device_id: async () => {
      const user = await seedUser(ctx, A.id, `device-owner-${next()}`);
      return (await seedDevice(ctx, { orgId: A.id, userId: user.id })).id;
    },
    invoice_id: async () => (await seedInvoice(ctx, { orgId: A.id, subId: A.subscriptionId })).id,
    'request_uuid:enrollment': async () =>
      (await seedJob(ctx, A.id, 'enrollment', `enrol-${next()}`, seq % 2 === 0)).requestUuid,
    'request_uuid:verification': async () =>
      (await seedJob(ctx, A.id, 'verification', `verify-${next()}`, seq % 2 === 0)).requestUuid,
    delivery_id: async () =>
      (await seedJob(ctx, A.id, 'verification', `delivery-${next()}`, true)).delivery.id,
  };
  const plans = (await ctx.db.selectFrom('plans').select('id').orderBy('id').execute()).map(
    (p) => p.id,
  );
  const own: FuzzWorld['own'] = {
    org_id: [A.id],
    plan_id: plans,
    subscription_id: [A.subscriptionId],
    token_id: [],
    user_id: [],
    device_id: [],
    text_id: [],
    invoice_id: [],
    'request_uuid:enrollment': [],
    'request_uuid:verification': [],
    delivery_id: [],
  };
  for (const [key, seed] of Object.entries(seeders) as Array<
    [PoolKey, () => Promise<string | number>]
  >) {
    for (let i = 0; i < 4; i++) own[key].push(await seed());
  }

  return {
    ctx,
    mainBearer: A.token,
    mainTokenId,
    protectedTokenIds: [mainTokenId, disabled.token.id, expired.token.id],
    otherBearer: bToken.bearer,
    disabledBearer: disabled.bearer,
    expiredBearer: expired.bearer,
    own,
    other: {
      org_id: B.id,
      token_id: bToken.token.id,
      user_id: bUser.id,
      device_id: bDevice.id,
      text_id: bText.id,
      subscription_id: B.subscriptionId,
      invoice_id: bInvoice.id,
      'request_uuid:enrollment': bEnrol.requestUuid,
      'request_uuid:verification': bVerify.requestUuid,
      delivery_id: bVerify.delivery.id,
    },
    otherIds: {
      Organisation: new Set([B.id]),
      OrganisationSettings: new Set(
        (
          await ctx.db
            .selectFrom('organisation_settings')
            .select('id')
            .where('org_id', '=', B.id)
            .execute()
        ).map((r) => r.id),
      ),
      ApiToken: new Set(
        (
          await ctx.db.selectFrom('api_tokens').select('id').where('org_id', '=', B.id).execute()
        ).map((r) => r.id),
      ),
      User: new Set([bUser.id]),
      Device: new Set([bDevice.id]),
      PredefinedText: new Set([bText.id]),
      Subscription: new Set([B.subscriptionId]),
      Invoice: new Set([bInvoice.id]),
      WebhookDelivery: new Set([bEnrol.delivery.id, bVerify.delivery.id]),
      users: new Set([bUser.id]),
      subscriptions: new Set([B.subscriptionId]),
    },
    otherStrings: [
      MARKER,
      'orgb@example.com',
      bToken.bearer,
      bEnrol.requestUuid,
      bVerify.requestUuid,
      bEnrol.delivery.webhook_id,
      bVerify.delivery.webhook_id,
    ],
    async replenish(key) {
      const seed = seeders[key];
      if (seed) own[key].push(await seed());
    },
  };
}

/** B's rows, to prove at the end that nothing the fuzzer sent as A changed them. */
export async function snapshotOrganisation(ctx: TestContext, orgId: number) {
  const byOrg = (
    table:
      | 'api_tokens'
      | 'users'
      | 'devices'
      | 'predefined_texts'
      | 'subscriptions'
      | 'invoices'
      | 'organisation_settings'
      | 'jobs'
      | 'webhook_deliveries',
  ) => ctx.db.selectFrom(table).selectAll().where('org_id', '=', orgId).orderBy('id').execute();
  return {
    organisation: await ctx.db
      .selectFrom('organisations')
      .selectAll()
      .where('id', '=', orgId)
      .execute(),
    settings: await byOrg('organisation_settings'),
    tokens: await byOrg('api_tokens'),
    users: await byOrg('users'),
    devices: await byOrg('devices'),
    texts: await byOrg('predefined_texts'),
    subscriptions: await byOrg('subscriptions'),
    invoices: await byOrg('invoices'),
    jobs: await byOrg('jobs'),
    deliveries: await byOrg('webhook_deliveries'),
    secrets: await ctx.db
      .selectFrom('webhook_secrets')
      .selectAll()
      .where('org_id', '=', orgId)
      .orderBy('id')
      .execute(),
  };
}
