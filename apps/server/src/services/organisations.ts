import type { Kysely } from 'kysely';
import type { AppConfig } from '../config.js';
import type { Executor } from '../db/connection.js';
import type { DB, TokenKind } from '../db/types.js';
import { ApiError } from '../errors.js';
import {
  findPlan,
  findPlanByName,
  insertSubscription,
  listAllPlans,
  toSubscription,
} from '../repositories/billing.js';
import {
  insertOrganisation,
  insertSettings,
  type NewOrganisationValues,
  toOrganisation,
  toSettings,
} from '../repositories/organisations.js';
import { insertToken, toApiToken } from '../repositories/tokens.js';
import { callbackPolicy, callbackUrlProblem } from '../security/callback-url.js';
import type { Sealer } from '../security/sealing.js';
import { generateBearer, hashBearer } from '../security/token-secrets.js';
import { createWebhookSecret } from '../security/webhook-secrets.js';

export const DEFAULT_PLAN_NAME = 'Sandbox';
const DAY_MS = 24 * 60 * 60 * 1000;

export class UnknownPlanError extends Error {}

export async function issueToken(
  db: Executor,
  values: {
    orgId: number;
    friendlyName: string;
    kind: TokenKind;
    enabled?: boolean;
    expiresAt?: string | null;
  },
) {
  const bearer = generateBearer(values.kind);
  const row = await insertToken(db, {
    orgId: values.orgId,
    friendlyName: values.friendlyName,
    tokenHash: hashBearer(bearer),
    kind: values.kind,
    enabled: values.enabled ?? true,
    expiresAt: values.expiresAt ?? null,
  });
  return { bearer, token: toApiToken(row) };
}

/**
 * Signs an organisation up: the organisation, its settings, a subscription to the plan
 * a trial token that expires after the plan's trial length (15 days to 3 months) and a webhook signing secret.
 */
export async function signUpOrganisation(
  db: Kysely<DB>,
  values: NewOrganisationValues & {
    /** A plan's id, or its name (`Starter`); the Sandbox plan when absent. */
    plan?: number | string;
    callbackUrl?: string | null;
  },
  options: { sealer?: Sealer } = {},
) {
  return db.transaction().execute(async (trx) => {
    const wanted = values.plan ?? DEFAULT_PLAN_NAME;
    const plan =
      typeof wanted === 'number' ? await findPlan(trx, wanted) : await findPlanByName(trx, wanted);
    if (!plan) {
      const known = (await listAllPlans(trx)).map((p) => `${p.id} ${p.name}`).join(', ');
      throw new UnknownPlanError(
        `No plan ${typeof wanted === 'number' ? `with id ${wanted}` : `named ${wanted}`} (plans: ${known})`,
      );
    }
    const org = await insertOrganisation(trx, values);
    const settings = await insertSettings(trx, org.id, { callbackUrl: values.callbackUrl ?? null });
    const now = new Date();
    const subscription = await insertSubscription(trx, {
      orgId: org.id,
      planId: plan.id,
      startDate: now.toISOString().slice(0, 10),
    });
    const trial = await issueToken(trx, {
      orgId: org.id,
      friendlyName: 'trial',
      kind: 'trial',
      expiresAt: new Date(now.getTime() + plan.trial_days * DAY_MS).toISOString(),
    });
    // Without a sealer (tests of unrelated features) the secret is created on first delivery instead.
    const webhookSecret = options.sealer
      ? await createWebhookSecret(trx, options.sealer, org.id)
      : null;
    return {
      organisation: {
        ...toOrganisation(org),
        settings: toSettings(settings),
        subscription: toSubscription(subscription),
      },
      token: trial,
      webhook_secret: webhookSecret,
    };
  });
}

/** A callback URL the organisation sets must pass the SSRF policy (a 400 on `settings.callback_url` otherwise). */
export async function assertCallbackUrlAllowed(rawUrl: string, config: AppConfig): Promise<void> {
  const problem = await callbackUrlProblem(rawUrl, callbackPolicy(config));
  if (problem) throw ApiError.field('settings.callback_url', 'callback_url_not_allowed', problem);
}
