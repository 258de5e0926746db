import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findDeliveryTarget } from '../src/repositories/webhooks.js';
import { openSigningSecrets, rotateWebhookSecret } from '../src/security/webhook-secrets.js';
import { createTestContext, type TestContext } from './support/context.js';
import { TEST_DIALECT } from './support/database.js';

describe(`where a webhook goes and what signs it, in one lookup (${TEST_DIALECT})`, () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(() => ctx.cleanup());

  const target = (orgId: number) => findDeliveryTarget(ctx.db, orgId);
  const secretsOf = async (orgId: number) =>
    openSigningSecrets(ctx.db, ctx.deps.sealer, orgId, (await target(orgId)).sealedSecrets);

  it('no callback URL yet: none, and the sign-up secret', async () => {
    expect((await target(ctx.orgA.id)).callbackUrl).toBeNull();
    expect(await secretsOf(ctx.orgA.id)).toEqual([ctx.orgA.webhookSecret]);
  });

  it('during a rotation both secrets sign, newest first; after the grace period only the new one', async () => {
    await ctx.db
      .updateTable('organisation_settings')
      .set({ callback_url: 'https://hooks.example.com/voxkey' })
      .where('org_id', '=', ctx.orgA.id)
      .execute();
    const { secret } = await rotateWebhookSecret(ctx.db, ctx.deps.sealer, ctx.orgA.id);
    expect((await target(ctx.orgA.id)).callbackUrl).toBe('https://hooks.example.com/voxkey');
    expect(await secretsOf(ctx.orgA.id)).toEqual([secret, ctx.orgA.webhookSecret]);
    await ctx.db
      .updateTable('webhook_secrets')
      .set({ expires_at: '2000-01-01T00:00:00.000Z' })
      .where('org_id', '=', ctx.orgA.id)
      .where('expires_at', 'is not', null)
      .execute();
    expect(await secretsOf(ctx.orgA.id)).toEqual([secret]);
    // another organisation's secrets never sign this one's webhooks
    expect(await secretsOf(ctx.orgB.id)).toEqual([ctx.orgB.webhookSecret]);
  });

  it('an organisation left without a secret gets one, which signs from then on', async () => {
    await ctx.db.deleteFrom('webhook_secrets').where('org_id', '=', ctx.orgB.id).execute();
    expect((await target(ctx.orgB.id)).sealedSecrets).toEqual([]);
    const [created] = await secretsOf(ctx.orgB.id);
    expect(created).toMatch(/^whsec_/);
    expect(await secretsOf(ctx.orgB.id)).toEqual([created]);
  });

  it('no settings row: no callback URL and no secret read', async () => {
    await ctx.db.deleteFrom('organisation_settings').where('org_id', '=', ctx.orgB.id).execute();
    expect(await target(ctx.orgB.id)).toEqual({ callbackUrl: null, sealedSecrets: [] });
  });
});
