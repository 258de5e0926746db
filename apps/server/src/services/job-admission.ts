import type { Executor } from '../db/connection.js';
import type { JobRow } from '../db/types.js';
import type { AppDeps, AuthContext } from '../deps.js';
import { ApiError } from '../errors.js';
import { findCurrentPlan, findPlanByName } from '../repositories/billing.js';
import * as jobs from '../repositories/jobs.js';
import { DEFAULT_PLAN_NAME } from './organisations.js';

const QUEUE_FULL_RETRY_AFTER_S = 5;
const FALLBACK_SANDBOX_QUOTA = 100;

function monthBounds(now: Date) {
  return {
    start: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)),
    next: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)),
  };
}

/**
 * The monthly cap on enrolments and verifications, or null when there is none. A Sandbox
 * organisation is held to its plan's `monthly_calls_included` whatever token it uses (an
 * organisation with no active subscription counts as Sandbox); a trial token of any plan is held
 * to the Sandbox plan's allowance.
 */
async function monthlyQuota(
  db: Executor,
  orgId: number,
  tokenKind: AuthContext['tokenKind'],
  now: Date,
): Promise<{ quota: number; why: string } | null> {
  const plan = await findCurrentPlan(db, orgId, now.toISOString().slice(0, 10));
  if (!plan || plan.name === DEFAULT_PLAN_NAME) {
    const quota =
      plan?.monthly_calls_included ??
      (await findPlanByName(db, DEFAULT_PLAN_NAME))?.monthly_calls_included ??
      FALLBACK_SANDBOX_QUOTA;
    return {
      quota,
      why: `The Sandbox plan is limited to the sandbox quota of ${quota} enrolments and verifications a month; subscribe to a paid plan for more`,
    };
  }
  if (tokenKind !== 'trial') return null;
  const quota =
    (await findPlanByName(db, DEFAULT_PLAN_NAME))?.monthly_calls_included ?? FALLBACK_SANDBOX_QUOTA;
  return {
    quota,
    why: `Trial tokens are limited to the sandbox quota of ${quota} enrolments and verifications a month; use a production token: the operator creates one that never expires (voxkey token create), and one created through the API with this trial token must expire no later than the trial token`,
  };
}

async function checkMonthlyQuota(
  db: Executor,
  auth: Pick<AuthContext, 'orgId' | 'tokenKind'>,
): Promise<void> {
  const now = new Date();
  const limit = await monthlyQuota(db, auth.orgId, auth.tokenKind, now);
  if (!limit) return;
  const { start, next } = monthBounds(now);
  if ((await jobs.countJobsSince(db, auth.orgId, start.toISOString())) >= limit.quota) {
    throw new ApiError('quota_exceeded', limit.why, {
      headers: { 'Retry-After': String(Math.ceil((next.getTime() - now.getTime()) / 1000)) },
    });
  }
}

async function checkQueueCaps(deps: AppDeps, db: Executor, orgId: number): Promise<void> {
  const full = (message: string) =>
    new ApiError('queue_full', message, {
      headers: { 'Retry-After': String(QUEUE_FULL_RETRY_AFTER_S) },
    });
  const unfinished = await jobs.countUnfinishedJobs(db, orgId);
  if (unfinished.organisation >= deps.config.JOB_MAX_QUEUE_PER_ORG) {
    throw full(
      `This organisation already has ${deps.config.JOB_MAX_QUEUE_PER_ORG} requests waiting to be processed; retry later`,
    );
  }
  if (unfinished.all >= deps.config.JOB_MAX_QUEUE)
    throw full('The processing queue is full; retry later');
}

/**
 * Inserts the job if the organisation's monthly quota, its share of the queue and the whole
 * queue all have room. Checks and insert run under one lock, so concurrent requests cannot
 * overshoot a limit between the count and the insert. `settlePhrase` runs in the same transaction
 * (it consumes the request's challenge), so a challenge is used exactly when its request is stored.
 */
export function admitJob(
  deps: AppDeps,
  auth: Pick<AuthContext, 'orgId' | 'tokenKind'>,
  settlePhrase: (trx: Executor) => Promise<jobs.NewJob['phrase']>,
  job: Omit<jobs.NewJob, 'phrase'>,
): Promise<JobRow> {
  return deps.database.db.transaction().execute(async (trx) => {
    await jobs.lockJobAdmissions(trx, deps.database.dialect, auth.orgId);
    await checkMonthlyQuota(trx, auth);
    await checkQueueCaps(deps, trx, auth.orgId);
    const phrase = await settlePhrase(trx);
    return jobs.insertJob(trx, deps.database.dialect, { ...job, phrase });
  });
}

/**
 * The quota and queue checks alone, without a lock or an insert: a verification stream is refused
 * before its upgrade when it could not be admitted now. admitJob checks again when it ends.
 */
export async function checkJobRoom(
  deps: AppDeps,
  auth: Pick<AuthContext, 'orgId' | 'tokenKind'>,
): Promise<void> {
  await checkMonthlyQuota(deps.database.db, auth);
  await checkQueueCaps(deps, deps.database.db, auth.orgId);
}
