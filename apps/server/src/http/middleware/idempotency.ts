import { createHash } from 'node:crypto';
import { API_BASE_PATH, apiRoutes, IDEMPOTENCY_KEY_PATTERN } from '@voxkey/contract';
import type { MiddlewareHandler } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ApiError } from '../../errors.js';
import {
  claimKey,
  completeKey,
  deleteStaleKey,
  findKey,
  IDEMPOTENCY_KEY_TTL_MS,
  releaseKey,
} from '../../repositories/idempotency-keys.js';
import type { IdempotencyKeyRow } from '../../db/types.js';
import type { AppEnv } from '../types.js';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
/** A claim still in progress after this long belongs to a process that died; the key may be claimed again. */
export const CLAIM_ABANDONED_AFTER_MS = 60_000;

/** Paths (as regular expressions under the API base path) of the POSTs the contract marks `x-voxkey-retry: idempotency-key`. */
export function keyedOperationPatterns(): RegExp[] {
  return Object.values(apiRoutes)
    .filter(
      (route) =>
        route.method === 'post' &&
        (route as { 'x-voxkey-retry'?: string })['x-voxkey-retry'] === 'idempotency-key',
    )
    .map((route) => new RegExp(`^${API_BASE_PATH}${route.path.replace(/\{[^/}]+\}/g, '[^/]+')}$`));
}

/** What must match for a replay: method, path and the exact body bytes. */
export function requestFingerprint(method: string, path: string, body: string): string {
  return createHash('sha256').update(`${method} ${path}\n`).update(body).digest('hex');
}

const stillInProgress = () =>
  new ApiError(
    'idempotency_key_in_progress',
    `A request with this ${IDEMPOTENCY_HEADER} is still being processed; retry shortly`,
    {
      headers: { 'Retry-After': '1' },
    },
  );

const sealingContext = (row: Pick<IdempotencyKeyRow, 'org_id' | 'idempotency_key'>) =>
  `idempotency:${row.org_id}:${row.idempotency_key}`;

/**
 * Honours `Idempotency-Key` on the keyed POSTs: the first request with a key claims it (a unique
 * row, so a concurrent duplicate cannot run too), runs, and its successful response is stored
 * sealed; a repeat within 24 h with the same method, path and body gets that response again with
 * `Idempotent-Replayed: true`. Another request with the key is a 409. Failed requests (non-2xx)
 * took no effect: their claim is released and the key may be used again.
 * Runs after authentication, so keys are scoped to the caller's organisation.
 */
export function honourIdempotencyKeys(): MiddlewareHandler<AppEnv> {
  const patterns = keyedOperationPatterns();
  return async (c, next) => {
    const key = c.req.header(IDEMPOTENCY_HEADER);
    if (key === undefined || c.req.method !== 'POST' || !patterns.some((p) => p.test(c.req.path)))
      return next();
    if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
      throw ApiError.field(
        IDEMPOTENCY_HEADER,
        'invalid_format',
        'Must be 1 to 255 printable ASCII characters',
      );
    }
    const { database, sealer } = c.var.deps;
    const db = database.db;
    const orgId = c.var.auth.orgId;
    const fingerprint = requestFingerprint(c.req.method, c.req.path, await c.req.text());

    let claim = await claimKey(db, { orgId, key, fingerprint });
    for (let attempt = 0; !claim && attempt < 2; attempt++) {
      const existing = await findKey(db, orgId, key);
      if (existing) {
        const expiredBefore = new Date(Date.now() - IDEMPOTENCY_KEY_TTL_MS).toISOString();
        const abandonedBefore = new Date(Date.now() - CLAIM_ABANDONED_AFTER_MS).toISOString();
        if (!(await deleteStaleKey(db, existing.id, expiredBefore, abandonedBefore))) {
          if (existing.request_fingerprint !== fingerprint) {
            throw new ApiError(
              'idempotency_key_reused',
              `This ${IDEMPOTENCY_HEADER} was already used with a different request in the last 24 hours; send a new key for a new request`,
            );
          }
          if (existing.status === 'in_progress') throw stillInProgress();
          const body = sealer
            .open(existing.sealed_response!, sealingContext(existing))
            .toString('utf8');
          return c.body(body, existing.response_status as ContentfulStatusCode, {
            'Content-Type': 'application/json',
            [REPLAYED_HEADER]: 'true',
          });
        }
      }
      claim = await claimKey(db, { orgId, key, fingerprint });
    }
    // Lost the race for a stale row twice in a row: another request with this key is running.
    if (!claim) throw stillInProgress();

    try {
      await next();
    } catch (err) {
      await releaseKey(db, claim.id);
      throw err;
    }
    const status = c.res.status;
    if (status >= 200 && status < 300) {
      const body = await c.res.clone().text();
      await completeKey(
        db,
        claim.id,
        status,
        sealer.seal(Buffer.from(body, 'utf8'), sealingContext(claim)),
      );
    } else {
      await releaseKey(db, claim.id);
    }
  };
}
