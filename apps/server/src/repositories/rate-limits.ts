import { sql } from 'kysely';
import type { Dialect, Executor } from '../db/connection.js';

export interface BucketLimit {
  ratePerSecond: number;
  burst: number;
}

export interface TakeResult {
  allowed: boolean;
  remaining: number;
  /** Seconds until one token is available again (0 when allowed). */
  retryAfterSeconds: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
}

/**
 * Token bucket in one atomic upsert, so every process sharing the database draws from the same
 * bucket: refill by elapsed time (capped at the burst), then take one token if there is one.
 */
export async function takeToken(
  db: Executor,
  dialect: Dialect,
  key: string,
  limit: BucketLimit,
  nowMs = Date.now(),
): Promise<TakeResult> {
  const min = dialect === 'postgres' ? sql.raw('least') : sql.raw('min');
  const refilled = sql`${min}(${limit.burst}, rate_limit_buckets.tokens + (${nowMs} - rate_limit_buckets.refilled_at_ms) * ${limit.ratePerSecond / 1000})`;
  const row = await db
    .insertInto('rate_limit_buckets')
    .values({ key, tokens: limit.burst - 1, refilled_at_ms: nowMs, allowed: 1 })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({
        tokens: sql`case when ${refilled} >= 1 then ${refilled} - 1 else ${refilled} end`,
        allowed: sql`case when ${refilled} >= 1 then 1 else 0 end`,
        refilled_at_ms: nowMs,
      }),
    )
    .returning(['tokens', 'allowed'])
    .executeTakeFirstOrThrow();
  const tokens = Number(row.tokens);
  const allowed = Number(row.allowed) === 1;
  return {
    allowed,
    remaining: Math.max(0, Math.floor(tokens)),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / limit.ratePerSecond)),
    resetSeconds: Math.max(0, Math.ceil((limit.burst - tokens) / limit.ratePerSecond)),
  };
}
