import type { Executor } from '../db/connection.js';
import type { JobRow } from '../db/types.js';
import type { AppDeps, AuthContext } from '../deps.js';
import { ApiError } from '../errors.js';
import { type AdmissionFigures, readAdmissionFigures } from '../repositories/admission.js';
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
function monthlyQuota(
  figures: AdmissionFigures,
  tokenKind: AuthContext['tokenKind'],
): { quota: number; why: string } | null {
  const { plan } = figures;
  const sandboxQuota = figures.sandboxMonthlyCalls ?? FALLBACK_SANDBOX_QUOTA;
  if (!plan || plan.name === DEFAULT_PLAN_NAME) {
    const quota = plan?.monthlyCalls ?? sandboxQuota;
    return {
      quota,
      why: `The Sandbox plan is limited to the sandbox quota of ${quota} enrolments and verifications a month; subscribe to a paid plan for more`,
    };
  }
  if (tokenKind !== 'trial') return null;
  return {
    quota: sandboxQuota,
    why: `Trial tokens are limited to the sandbox quota of ${sandboxQuota} enrolments and verifications a month; use a production token: the operator creates one that never expires (voxkey token create), and one created through the API with this trial token must expire no later than the trial token`,
  };
}

async function checkMonthlyQuota(
  db: Executor,
  auth: Pick<AuthContext, 'orgId' | 'tokenKind'>,
  figures: AdmissionFigures,
  now: Date,
): Promise<void> {
  const limit = monthlyQuota(figures, auth.tokenKind);
  if (!limit) return;
  const { start, next } = monthBounds(now);
  if ((await jobs.countJobsSince(db, auth.orgId, start.toISOString())) >= limit.quota) {
    throw new ApiError('quota_exceeded', limit.why, {
      headers: { 'Retry-After': String(Math.ceil((next.getTime() - now.getTime()) / 1000)) },
    });
  }
}

function checkQueueCaps(deps: AppDeps, { unfinished }: AdmissionFigures): void {
  const full = (message: string) =>
    new ApiError('queue_full', message, {
      headers: { 'Retry-After': String(QUEUE_FULL_RETRY_AFTER_S) },
    });
  if (unfinished.organisation >= deps.config.JOB_MAX_QUEUE_PER_ORG) {
    throw full(
      `This organisation already has ${deps.config.JOB_MAX_QUEUE_PER_ORG} requests waiting to be processed; retry later`,
    );
  }
  if (unfinished.all >= deps.config.JOB_MAX_QUEUE)
    throw full('The processing queue is full; retry later');
}

/** The monthly quota, then the queue caps: what a job must have room in. */
async function checkRoom(
  deps: AppDeps,
  db: Executor,
  auth: Pick<AuthContext, 'orgId' | 'tokenKind'>,
): Promise<void> {
  const now = new Date();
  const day = now.toISOString().slice(0, 10);
  const figures = await readAdmissionFigures(db, auth.orgId, day, DEFAULT_PLAN_NAME);
  await checkMonthlyQuota(db, auth, figures, now);
  checkQueueCaps(deps, figures);
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
    await checkRoom(deps, trx, auth);
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
  await checkRoom(deps, deps.database.db, auth);
}
