import { parseArgs } from 'node:util';
import { z } from 'zod';
import type { AppConfig } from '../config.js';
import type { Database } from '../db/connection.js';
import type { Sealer } from '../security/sealing.js';
import { findOrganisation } from '../repositories/organisations.js';
import { callbackPolicy, callbackUrlProblem } from '../security/callback-url.js';
import { issueToken, signUpOrganisation, UnknownPlanError } from '../services/organisations.js';
import { printJson, UsageError } from './output.js';

const OrgCreateArgs = z.object({
  name: z.string().trim().min(1, '--name is required').max(200),
  email: z.email('--email must be an email address'),
  plan: z.coerce.number().int().positive('--plan must be a plan id').optional(),
  'callback-url': z.url('--callback-url must be a URL').optional(),
});

export async function orgCreate(args: string[], database: Database, config: AppConfig, sealer: Sealer): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { name: { type: 'string' }, email: { type: 'string' }, plan: { type: 'string' }, 'callback-url': { type: 'string' }, json: { type: 'boolean' } },
  });
  const parsed = OrgCreateArgs.safeParse(values);
  if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => i.message).join('\n'));
  const callbackUrl = parsed.data['callback-url'];
  if (callbackUrl) {
    const problem = await callbackUrlProblem(callbackUrl, callbackPolicy(config));
    if (problem) throw new UsageError(`--callback-url: ${problem}`);
  }
  try {
    const result = await signUpOrganisation(
      database.db,
      { name: parsed.data.name, email: parsed.data.email, planId: parsed.data.plan, callbackUrl: callbackUrl ?? null },
      { sealer },
    );
    if (values.json) printJson(result);
    else {
      console.log(`Organisation ${result.organisation.id} (${result.organisation.name}) created.`);
      console.log(`Trial token (shown once, expires ${result.token.token.expires_at}):\n  ${result.token.bearer}`);
      console.log(`Webhook signing secret (shown once):\n  ${result.webhook_secret}`);
    }
  } catch (err) {
    if (err instanceof UnknownPlanError) throw new UsageError(err.message);
    throw err;
  }
}

const TokenCreateArgs = z.object({
  org: z.coerce.number().int().positive('--org must be an organisation id'),
  name: z.string().trim().min(1, '--name is required').max(200),
  'expires-at': z.iso.datetime({ offset: true, message: '--expires-at must be an ISO 8601 date-time' }).optional(),
});

export async function tokenCreate(args: string[], database: Database): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { org: { type: 'string' }, name: { type: 'string' }, 'expires-at': { type: 'string' }, json: { type: 'boolean' } },
  });
  const parsed = TokenCreateArgs.safeParse(values);
  if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => i.message).join('\n'));
  const expiresAt = parsed.data['expires-at'] ? new Date(parsed.data['expires-at']) : null;
  if (expiresAt && expiresAt.getTime() <= Date.now()) throw new UsageError('--expires-at must be in the future');
  if (!(await findOrganisation(database.db, parsed.data.org))) throw new UsageError(`No organisation with id ${parsed.data.org}`);
  const created = await issueToken(database.db, {
    orgId: parsed.data.org,
    friendlyName: parsed.data.name,
    kind: 'live',
    expiresAt: expiresAt?.toISOString() ?? null,
  });
  if (values.json) printJson(created);
  else console.log(`Token ${created.token.id} created (shown once):\n  ${created.bearer}`);
}
