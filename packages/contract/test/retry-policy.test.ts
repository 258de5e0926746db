import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../src/index.js';

/**
 * `x-voxkey-retry` on every operation tells clients (the SDK generates its retry table from it)
 * whether repeating a request after a lost answer or a gateway error is safe:
 * - `safe`: repeating it has no further effect (reads, DELETE, the POSTs de-duplicated by `request_uuid`, and the
 *   audio pre-check, which stores nothing);
 * - `idempotency-key`: safe only when the request carries an `Idempotency-Key` header (POSTs without a natural key);
 * - `never`: not repeated (PATCH: a repeat could overwrite a change made in between).
 */
describe('x-voxkey-retry', () => {
  const operations = Object.entries(buildOpenApiDocument().paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item as Record<string, { operationId: string; 'x-voxkey-retry'?: unknown }>).map(
      ([method, operation]) => ({ path, method, operation }),
    ),
  );

  it('is on every operation, with a known value', () => {
    for (const { operation } of operations) {
      expect(['safe', 'idempotency-key', 'never'], operation.operationId).toContain(
        operation['x-voxkey-retry'],
      );
    }
  });

  it('marks reads and deletes safe, PATCH never, and POSTs by whether they have a natural key', () => {
    for (const { method, operation } of operations) {
      const policy = operation['x-voxkey-retry'];
      if (method === 'get' || method === 'put' || method === 'delete')
        expect(policy, operation.operationId).toBe('safe');
      if (method === 'patch') expect(policy, operation.operationId).toBe('never');
      if (method === 'post') {
        const repeatable = ['createEnrollment', 'createVerification', 'createAudioCheck'].includes(
          operation.operationId,
        );
        expect(policy, operation.operationId).toBe(repeatable ? 'safe' : 'idempotency-key');
      }
    }
  });
});
