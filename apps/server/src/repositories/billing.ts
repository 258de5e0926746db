import {
  INVOICE_FILTER_FIELDS,
  PLAN_FILTER_FIELDS,
  SUBSCRIPTION_FILTER_FIELDS,
} from '@voxkey/contract';
import { sql } from 'kysely';
import type { Executor } from '../db/connection.js';
import type { InvoiceRow, PlanRow, SubscriptionRow } from '../db/types.js';
import { nowIso } from './clock.js';
import { columnsOf, type ListQuery, type ListResult, listRows } from './list-query.js';

export function toPlan(row: PlanRow) {
  return {
    id: row.id,
    details: {
      name: row.name,
      monthly_calls_included: row.monthly_calls_included,
      overage_rate_gbp: Number(row.overage_rate_gbp),
    },
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function toSubscription(row: SubscriptionRow) {
  return {
    id: row.id,
    org_id: row.org_id,
    plan_id: row.plan_id,
    start_date: row.start_date,
    end_date: row.end_date,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function toInvoice(row: InvoiceRow) {
  return {
    id: row.id,
    org_id: row.org_id,
    sub_id: row.sub_id,
    invoice_sequence: row.invoice_sequence,
    quotas: { monthly_verifications: row.monthly_verifications, overage_calls: row.overage_calls },
    file_ref: row.file_ref,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

const PLAN_FIELDS = columnsOf(PLAN_FILTER_FIELDS);
const SUBSCRIPTION_FIELDS = columnsOf(SUBSCRIPTION_FILTER_FIELDS);
const INVOICE_FIELDS = columnsOf(INVOICE_FILTER_FIELDS);

export function listPlans(db: Executor, query: ListQuery): Promise<ListResult<PlanRow>> {
  return listRows(db.selectFrom('plans').selectAll(), query, PLAN_FIELDS);
}

export function findPlan(db: Executor, planId: number): Promise<PlanRow | undefined> {
  return db.selectFrom('plans').selectAll().where('id', '=', planId).executeTakeFirst();
}

/** Every plan, by id. */
export function listAllPlans(db: Executor): Promise<PlanRow[]> {
  return db.selectFrom('plans').selectAll().orderBy('id').execute();
}

export function findPlanByName(db: Executor, name: string): Promise<PlanRow | undefined> {
  return db.selectFrom('plans').selectAll().where('name', '=', name).executeTakeFirst();
}

/** The organisation's subscriptions active on `day` (YYYY-MM-DD) with their plans, the latest-started first. */
export function currentSubscriptionPlans(db: Executor, orgId: number, day: string) {
  return db
    .selectFrom('subscriptions')
    .innerJoin('plans', 'plans.id', 'subscriptions.plan_id')
    .where('subscriptions.org_id', '=', orgId)
    .where('subscriptions.start_date', '<=', day)
    .where((eb) =>
      eb.or([eb('subscriptions.end_date', 'is', null), eb('subscriptions.end_date', '>=', day)]),
    )
    .orderBy('subscriptions.start_date', 'desc')
    .orderBy('subscriptions.id', 'desc')
    .limit(sql.lit(1));
}

export async function insertSubscription(
  db: Executor,
  values: { orgId: number; planId: number; startDate: string },
): Promise<SubscriptionRow> {
  const now = nowIso();
  return db
    .insertInto('subscriptions')
    .values({
      org_id: values.orgId,
      plan_id: values.planId,
      start_date: values.startDate,
      end_date: null,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** One page of the organisation's subscriptions; never another organisation's. */
export function listSubscriptions(
  db: Executor,
  orgId: number,
  query: ListQuery,
): Promise<ListResult<SubscriptionRow>> {
  return listRows(
    db.selectFrom('subscriptions').selectAll().where('org_id', '=', orgId),
    query,
    SUBSCRIPTION_FIELDS,
  );
}

export function findSubscription(
  db: Executor,
  orgId: number,
  id: number,
): Promise<SubscriptionRow | undefined> {
  return db
    .selectFrom('subscriptions')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** One page of the organisation's invoices; never another organisation's. */
export function listInvoices(
  db: Executor,
  orgId: number,
  query: ListQuery,
): Promise<ListResult<InvoiceRow>> {
  return listRows(
    db.selectFrom('invoices').selectAll().where('org_id', '=', orgId),
    query,
    INVOICE_FIELDS,
  );
}

export function findInvoice(
  db: Executor,
  orgId: number,
  id: number,
): Promise<InvoiceRow | undefined> {
  return db
    .selectFrom('invoices')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Subscriptions active on at least one day between the two dates (inclusive), with their plan's terms. */
export function subscriptionsActiveBetween(db: Executor, firstDay: string, lastDay: string) {
  return db
    .selectFrom('subscriptions')
    .innerJoin('plans', 'plans.id', 'subscriptions.plan_id')
    .select([
      'subscriptions.id as sub_id',
      'subscriptions.org_id',
      'plans.name as plan_name',
      'plans.monthly_calls_included',
      'plans.overage_rate_gbp',
    ])
    .where('subscriptions.start_date', '<=', lastDay)
    .where((eb) =>
      eb.or([
        eb('subscriptions.end_date', 'is', null),
        eb('subscriptions.end_date', '>=', firstDay),
      ]),
    )
    .orderBy('subscriptions.id')
    .execute();
}

export function findInvoiceForPeriod(
  db: Executor,
  subId: number,
  period: string,
): Promise<Pick<InvoiceRow, 'id'> | undefined> {
  return db
    .selectFrom('invoices')
    .select('id')
    .where('sub_id', '=', subId)
    .where('period', '=', period)
    .executeTakeFirst();
}

export async function lastInvoiceSequence(db: Executor, orgId: number): Promise<number> {
  const row = await db
    .selectFrom('invoices')
    .select((eb) => eb.fn.max('invoice_sequence').as('max'))
    .where('org_id', '=', orgId)
    .executeTakeFirst();
  return Number(row?.max ?? 0);
}

export async function insertInvoice(
  db: Executor,
  values: Pick<
    InvoiceRow,
    | 'org_id'
    | 'sub_id'
    | 'invoice_sequence'
    | 'period'
    | 'monthly_verifications'
    | 'overage_calls'
    | 'amount_gbp'
    | 'file_ref'
  >,
): Promise<InvoiceRow> {
  const now = nowIso();
  return db
    .insertInto('invoices')
    .values({ ...values, created_at: now, updated_at: now })
    .returningAll()
    .executeTakeFirstOrThrow();
}
