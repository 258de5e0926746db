import { sql } from 'kysely';
import type { Executor } from '../db/connection.js';
import { currentSubscriptionPlans } from './billing.js';
import { compiledOnce } from './compiled-once.js';
import { UNFINISHED } from './jobs.js';

/** What admitting a job checks its limits against. */
export interface AdmissionFigures {
  /** The plan of the organisation's current subscription; null without one. */
  plan: { name: string; monthlyCalls: number } | null;
  /** The allowance of the plan named as the sandbox plan; null when no such plan exists. */
  sandboxMonthlyCalls: number | null;
  /** Queued or processing jobs of all organisations and of this one. */
  unfinished: { all: number; organisation: number };
}

// Read to admit every voice request, under the admission lock: one statement, built and compiled once.
const selectAdmissionFigures = compiledOnce(
  (db, orgId: number, day: string, sandboxPlanName: string) =>
    db
      .selectFrom(
        db
          .selectFrom('jobs')
          .select((eb) => [
            eb.fn.countAll<number | string>().as('all'),
            eb.fn
              .count<number | string>(eb.case().when('org_id', '=', orgId).then(1).end())
              .as('organisation'),
          ])
          .where(
            'status',
            'in',
            UNFINISHED.map((status) => sql.lit(status)),
          )
          .as('unfinished'),
      )
      .leftJoin(
        currentSubscriptionPlans(db, orgId, day)
          .select(['plans.name', 'plans.monthly_calls_included'])
          .as('plan'),
        (join) => join.onTrue(),
      )
      .select([
        'unfinished.all as unfinished_all',
        'unfinished.organisation as unfinished_organisation',
        'plan.name as plan_name',
        'plan.monthly_calls_included as plan_monthly_calls',
        db
          .selectFrom('plans')
          .select('monthly_calls_included')
          .where('name', '=', sandboxPlanName)
          .as('sandbox_monthly_calls'),
      ]),
);

/** The organisation's plan on `day` (YYYY-MM-DD), the sandbox plan's allowance and the queue's unfinished jobs, in one statement. */
export async function readAdmissionFigures(
  db: Executor,
  orgId: number,
  day: string,
  sandboxPlanName: string,
): Promise<AdmissionFigures> {
  const [row] = await selectAdmissionFigures(db, orgId, day, sandboxPlanName);
  const figures = row!;
  return {
    plan:
      figures.plan_name == null
        ? null
        : { name: figures.plan_name, monthlyCalls: Number(figures.plan_monthly_calls) },
    sandboxMonthlyCalls:
      figures.sandbox_monthly_calls == null ? null : Number(figures.sandbox_monthly_calls),
    unfinished: {
      all: Number(figures.unfinished_all),
      organisation: Number(figures.unfinished_organisation),
    },
  };
}
