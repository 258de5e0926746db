import { DELIVERY_FILTER_FIELDS } from '@voxkey/contract';
import { type ExpressionBuilder, type OperandValueExpressionOrList, sql } from 'kysely';
import type { Dialect, Executor } from '../db/connection.js';
import type {
  DB,
  DeliveryStatus,
  WebhookDeliveryRow,
  WebhookEventType,
  WebhookSecretRow,
} from '../db/types.js';
import { nowIso } from './clock.js';
import { compiledOnce } from './compiled-once.js';
import { claimInTurn, claimTakingTurn } from './queue-turns.js';
import { columnsOf, type ListQuery, type ListResult, listRows } from './list-query.js';

export function toDelivery(row: WebhookDeliveryRow) {
  return {
    id: row.id,
    webhook_id: row.webhook_id,
    event_type: row.event_type,
    request_uuid: row.request_uuid,
    status: row.status,
    attempts: row.attempts,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    next_attempt_at: row.next_attempt_at,
    delivered_at: row.delivered_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

const DELIVERY_FIELDS = columnsOf(DELIVERY_FILTER_FIELDS);

/** The newest stored webhook secrets of any organisations (sealed). */
export function newestSecrets(db: Executor, limit: number) {
  return db
    .selectFrom('webhook_secrets')
    .select(['org_id', 'sealed_secret'])
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export async function insertSecret(
  db: Executor,
  orgId: number,
  sealedSecret: string,
): Promise<WebhookSecretRow> {
  const now = nowIso();
  return db
    .insertInto('webhook_secrets')
    .values({
      org_id: orgId,
      sealed_secret: sealedSecret,
      expires_at: null,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Secrets that sign now: the current one and any rotated-out one still within its grace period, newest first. */
const selectActiveSecrets = compiledOnce((db, orgId: number, now: string) =>
  db
    .selectFrom('webhook_secrets')
    .selectAll()
    .where('org_id', '=', orgId)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .orderBy('id', 'desc'),
);

export function activeSecrets(db: Executor, orgId: number): Promise<WebhookSecretRow[]> {
  return selectActiveSecrets(db, orgId, nowIso());
}

const selectDeliveryTarget = compiledOnce((db, orgId: number, now: string) =>
  db
    .selectFrom('organisation_settings')
    .leftJoin('webhook_secrets', (join) =>
      join
        .onRef('webhook_secrets.org_id', '=', 'organisation_settings.org_id')
        .on((eb) =>
          eb.or([
            eb('webhook_secrets.expires_at', 'is', null),
            eb('webhook_secrets.expires_at', '>', now),
          ]),
        ),
    )
    .select(['organisation_settings.callback_url', 'webhook_secrets.sealed_secret'])
    .where('organisation_settings.org_id', '=', orgId)
    .orderBy('webhook_secrets.id', 'desc'),
);

/** Where an organisation's webhooks go and the sealed secrets that sign them now (newest first), in one lookup. */
export async function findDeliveryTarget(
  db: Executor,
  orgId: number,
): Promise<{ callbackUrl: string | null; sealedSecrets: string[] }> {
  const rows = await selectDeliveryTarget(db, orgId, nowIso());
  return {
    callbackUrl: rows[0]?.callback_url ?? null,
    sealedSecrets: rows.flatMap((row) => (row.sealed_secret === null ? [] : [row.sealed_secret])),
  };
}

export async function expireCurrentSecrets(
  db: Executor,
  orgId: number,
  expiresAt: string,
): Promise<void> {
  await db
    .updateTable('webhook_secrets')
    .set({ expires_at: expiresAt, updated_at: nowIso() })
    .where('org_id', '=', orgId)
    .where('expires_at', 'is', null)
    .execute();
  await db
    .deleteFrom('webhook_secrets')
    .where('org_id', '=', orgId)
    .where('expires_at', '<=', nowIso())
    .execute();
}

/** A webhook to deliver: the event a job (or a test) announces, signed and sent by the dispatcher. */
export interface NewDelivery {
  orgId: number;
  jobId: number | null;
  webhookId: string;
  eventType: WebhookEventType;
  requestUuid: string;
  payload: string;
}

/** A new delivery's columns besides its organisation, job, request and attempts: pending and due now. */
export function pendingDeliveryColumns(
  values: Pick<NewDelivery, 'webhookId' | 'eventType' | 'payload'>,
) {
  const now = nowIso();
  return {
    webhook_id: values.webhookId,
    event_type: values.eventType,
    payload: values.payload,
    status: 'pending' as const,
    next_attempt_at: now,
    created_at: now,
    updated_at: now,
  };
}

export async function insertDelivery(
  db: Executor,
  values: NewDelivery,
): Promise<WebhookDeliveryRow> {
  return db
    .insertInto('webhook_deliveries')
    .values({
      org_id: values.orgId,
      job_id: values.jobId,
      request_uuid: values.requestUuid,
      attempts: 0,
      ...pendingDeliveryColumns(values),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function listDeliveries(
  db: Executor,
  orgId: number,
  query: ListQuery,
): Promise<ListResult<WebhookDeliveryRow>> {
  return listRows(
    db.selectFrom('webhook_deliveries').selectAll().where('org_id', '=', orgId),
    query,
    DELIVERY_FIELDS,
  );
}

/**
 * Queues a delivery again as if it were new (same webhook-id and payload): its attempts start from
 * zero, so one whose retries ran out is sent again and a failure retries on the schedule's first step.
 */
export function requeueDelivery(
  db: Executor,
  orgId: number,
  id: number,
): Promise<WebhookDeliveryRow | undefined> {
  const now = nowIso();
  return db
    .updateTable('webhook_deliveries')
    .set({
      status: 'pending',
      attempts: 0,
      last_status_code: null,
      last_error: null,
      delivered_at: null,
      next_attempt_at: now,
      lease_owner: null,
      lease_expires_at: null,
      updated_at: now,
    })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Claims one due delivery (pending and due, or leased by a process that died), serving
 * organisations in turn like the job runner: the organisation whose last delivery claim is the
 * oldest goes next, its earliest-due delivery first. A flood of one organisation's webhooks (or a
 * slow receiver) then delays another organisation's by at most one delivery per lane. On
 * PostgreSQL, when the chosen organisation's deliveries are all locked, the earliest-due unlocked
 * delivery of any organisation is taken, and the claim, that fallback and the turn are one statement.
 */
export function claimDelivery(
  db: Executor,
  dialect: Dialect,
  owner: string,
  leaseMs: number,
): Promise<WebhookDeliveryRow | undefined> {
  return claimInTurn(db, dialect, 'delivery_claimed_at', claimStatements, owner, leaseMs);
}

// Run for every delivery and after it (a lane looks again at once): built and compiled once.
const claimStatements = {
  sqlite: compiledOnce((db, owner: string, leaseExpiresAt: string, now: string) =>
    claimUpdate(
      db,
      owner,
      leaseExpiresAt,
      now,
      candidateDelivery(db, 'sqlite', now, 'next-organisation'),
    ),
  ),
  postgres: compiledOnce((db, owner: string, leaseExpiresAt: string, now: string) =>
    claimTakingTurn(
      db,
      'delivery_claimed_at',
      claimUpdate(db, owner, leaseExpiresAt, now, (eb) =>
        eb.fn.coalesce(
          candidateDelivery(db, 'postgres', now, 'next-organisation'),
          candidateDelivery(db, 'postgres', now, 'any-organisation'),
        ),
      ),
    ),
  ),
};

type ClaimFrom = 'next-organisation' | 'any-organisation';

function dueDelivery(now: string) {
  return (eb: ExpressionBuilder<DB, 'webhook_deliveries'>) =>
    eb.and([
      eb('status', '=', sql.lit('pending')),
      eb('next_attempt_at', '<=', now),
      eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]),
    ]);
}

/** The id of the delivery to claim: the earliest due, of the organisation whose turn it is or of any. */
function candidateDelivery(db: Executor, dialect: Dialect, now: string, from: ClaimFrom) {
  const nextOrganisation = db
    .selectFrom('webhook_deliveries')
    .leftJoin('queue_turns', 'queue_turns.org_id', 'webhook_deliveries.org_id')
    .select('webhook_deliveries.org_id')
    .where(dueDelivery(now))
    .groupBy('webhook_deliveries.org_id')
    .orderBy((eb) => eb.fn.coalesce(eb.fn.max('queue_turns.delivery_claimed_at'), sql<string>`''`))
    .orderBy((eb) => eb.fn.min('webhook_deliveries.next_attempt_at'))
    .limit(sql.lit(1));
  let candidate = db.selectFrom('webhook_deliveries').select('id').where(dueDelivery(now));
  if (from === 'next-organisation') candidate = candidate.where('org_id', '=', nextOrganisation);
  candidate = candidate.orderBy('next_attempt_at').orderBy('id').limit(sql.lit(1));
  if (dialect === 'postgres') candidate = candidate.forUpdate().skipLocked();
  return candidate;
}

function claimUpdate(
  db: Executor,
  owner: string,
  leaseExpiresAt: string,
  now: string,
  id: OperandValueExpressionOrList<DB, 'webhook_deliveries', 'id'>,
) {
  return db
    .updateTable('webhook_deliveries')
    .set({
      lease_owner: owner,
      lease_expires_at: leaseExpiresAt,
      attempts: sql`attempts + 1`,
      updated_at: now,
    })
    .where('id', '=', id)
    .returningAll();
}

export async function recordAttempt(
  db: Executor,
  id: number,
  owner: string,
  outcome: {
    status: DeliveryStatus;
    statusCode: number | null;
    error: string | null;
    nextAttemptAt: string | null;
  },
): Promise<void> {
  const now = nowIso();
  await db
    .updateTable('webhook_deliveries')
    .set({
      status: outcome.status,
      last_status_code: outcome.statusCode,
      last_error: outcome.error,
      next_attempt_at: outcome.nextAttemptAt,
      delivered_at: outcome.status === 'delivered' ? now : null,
      lease_owner: null,
      lease_expires_at: null,
      updated_at: now,
    })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .execute();
}

/** The payload of the webhook a completed job queued (what a verification stream sends as its result). */
export async function findJobEventPayload(
  db: Executor,
  orgId: number,
  jobId: number,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select('payload')
    .where('org_id', '=', orgId)
    .where('job_id', '=', jobId)
    .orderBy('id')
    .executeTakeFirst();
  return row?.payload;
}
