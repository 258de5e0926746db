import { z } from 'zod';
import type { AppConfig } from '../config.js';
import type { Database } from '../db/connection.js';
import type { Sealer } from '../security/sealing.js';
import { findOrganisation } from '../repositories/organisations.js';
import { callbackPolicy, callbackUrlProblem } from '../security/callback-url.js';
import { issueToken, signUpOrganisation, UnknownPlanError } from '../services/organisations.js';
import { JsonOption, OrgIdOption, parseOptions } from './options.js';
import { type CliIo, NotFoundError, printJson, printLine, UsageError } from './output.js';

const OrgCreateOptions = z.object({
  name: z.string().trim().min(1, '--name is required').max(200),
  email: z.email('--email must be an email address'),
  plan: z
    .string()
    .trim()
    .min(1, '--plan must be a plan id or name')
    .transform((plan) => (/^\d+$/.test(plan) ? Number(plan) : plan))
    .optional(),
  callbackUrl: z.url('--callback-url must be a URL').optional(),
  json: JsonOption,
});

export async function orgCreate(
  options: unknown,
  database: Database,
  config: AppConfig,
  sealer: Sealer,
  io: CliIo,
): Promise<void> {
  const values = parseOptions(OrgCreateOptions, options);
  if (values.callbackUrl) {
    const problem = await callbackUrlProblem(values.callbackUrl, callbackPolicy(config));
    if (problem) throw new UsageError(`--callback-url: ${problem}`);
  }
  try {
    const result = await signUpOrganisation(
      database.db,
      {
        name: values.name,
        email: values.email,
        plan: values.plan,
        callbackUrl: values.callbackUrl ?? null,
      },
      { sealer },
    );
    if (values.json) printJson(io, result);
    else {
      printLine(
        io,
        `Organisation ${result.organisation.id} (${result.organisation.name}) created.`,
      );
      printLine(
        io,
        `Trial token (shown once, expires ${result.token.token.expires_at}):\n  ${result.token.bearer}`,
      );
      printLine(io, `Webhook signing secret (shown once):\n  ${result.webhook_secret}`);
    }
  } catch (err) {
    if (err instanceof UnknownPlanError) throw new UsageError(err.message);
    throw err;
  }
}

const TokenCreateOptions = z.object({
  org: OrgIdOption,
  name: z.string().trim().min(1, '--name is required').max(200),
  expiresAt: z.iso
    .datetime({ offset: true, message: '--expires-at must be an ISO 8601 date-time' })
    .optional(),
  json: JsonOption,
});

export async function tokenCreate(options: unknown, database: Database, io: CliIo): Promise<void> {
  const values = parseOptions(TokenCreateOptions, options);
  const expiresAt = values.expiresAt ? new Date(values.expiresAt) : null;
  if (expiresAt && expiresAt.getTime() <= Date.now())
    throw new UsageError('--expires-at must be in the future');
  if (!(await findOrganisation(database.db, values.org)))
    throw new NotFoundError(`No organisation with id ${values.org}`);
  const created = await issueToken(database.db, {
    orgId: values.org,
    friendlyName: values.name,
    kind: 'live',
    expiresAt: expiresAt?.toISOString() ?? null,
  });
  if (values.json) printJson(io, created);
  else printLine(io, `Token ${created.token.id} created (shown once):\n  ${created.bearer}`);
}
