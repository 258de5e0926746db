import type { MiddlewareHandler } from 'hono';
import { type BucketLimit, takeToken, type TakeResult } from '../../repositories/rate-limits.js';
import { ApiError } from '../../errors.js';
import type { AppEnv } from '../types.js';

/**
 * Per-token and per-organisation token buckets (trial tokens get the sandbox rate). The tighter
 * bucket sets the `RateLimit-*` headers; a refusal is a 429 with `Retry-After`.
 */
export function rateLimit(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { config, database, observability } = c.get('deps');
    if (!config.RATE_LIMIT_ENABLED) return next();
    const { tokenId, orgId, tokenKind } = c.get('auth');
    const tokenLimit: BucketLimit =
      tokenKind === 'trial'
        ? { ratePerSecond: config.RATE_LIMIT_TRIAL_RPS, burst: config.RATE_LIMIT_TRIAL_BURST }
        : { ratePerSecond: config.RATE_LIMIT_TOKEN_RPS, burst: config.RATE_LIMIT_TOKEN_BURST };
    const orgLimit: BucketLimit = {
      ratePerSecond: config.RATE_LIMIT_ORG_RPS,
      burst: config.RATE_LIMIT_ORG_BURST,
    };

    const checks: Array<[string, BucketLimit, TakeResult]> = [];
    for (const [scope, key, limit] of [
      ['token', `token:${tokenId}`, tokenLimit],
      ['organisation', `org:${orgId}`, orgLimit],
    ] as const) {
      const result = await takeToken(database.db, database.dialect, key, limit);
      checks.push([scope, limit, result]);
      if (!result.allowed) {
        observability.metrics.rateLimited.inc({ scope });
        throw new ApiError(
          'rate_limited',
          `Rate limit exceeded for this ${scope}; retry after ${result.retryAfterSeconds} s`,
          {
            headers: {
              'Retry-After': String(result.retryAfterSeconds),
              'RateLimit-Limit': String(limit.burst),
              'RateLimit-Remaining': '0',
              'RateLimit-Reset': String(result.retryAfterSeconds),
            },
          },
        );
      }
    }
    const [, limit, tightest] = checks.reduce((a, b) =>
      b[2].remaining / b[1].burst < a[2].remaining / a[1].burst ? b : a,
    );
    c.header('RateLimit-Limit', String(limit.burst));
    c.header('RateLimit-Remaining', String(tightest.remaining));
    c.header('RateLimit-Reset', String(tightest.resetSeconds));
    await next();
  };
}
