import type { MiddlewareHandler } from 'hono';
import { ApiError } from '../../errors.js';
import type { AppEnv } from '../types.js';

const NUL_MESSAGE = 'Must not contain NUL (U+0000) characters';

const MAX_DEPTH = 32;

/** The first field holding a NUL, walked iteratively (a hostile body may nest thousands of levels). */
function findNul(root: unknown): string | null {
  const stack: Array<[unknown, string, number]> = [[root, '', 0]];
  while (stack.length) {
    const [value, path, depth] = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return path || 'body';
      continue;
    }
    if (!value || typeof value !== 'object') continue;
    if (depth >= MAX_DEPTH)
      throw ApiError.field(
        path || 'body',
        'too_deeply_nested',
        `Nested more than ${MAX_DEPTH} levels deep`,
      );
    for (const [key, item] of Object.entries(value)) {
      const field = path ? `${path}.${key}` : key;
      if (key.includes('\u0000')) return field;
      stack.push([item, field, depth + 1]);
    }
  }
  return null;
}

/**
 * Text may not carry U+0000: PostgreSQL cannot store it, and no legitimate field needs it.
 * Refusing it at the edge gives the same 400 on both databases.
 */
export function rejectNulCharacters(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (/%00/.test(c.req.url)) {
      const queries = c.req.queries();
      const param = Object.entries(queries).find(
        ([key, values]) => key.includes('\u0000') || values.some((v) => v.includes('\u0000')),
      );
      throw ApiError.field(param ? param[0] : 'path', 'contains_nul', NUL_MESSAGE);
    }
    if (c.req.method !== 'GET' && /json/i.test(c.req.header('content-type') ?? '')) {
      let body: unknown;
      try {
        body = await c.req.json();
      } catch {
        return next(); // malformed JSON is the validator's to report
      }
      const field = findNul(body);
      if (field) throw ApiError.field(field, 'contains_nul', NUL_MESSAGE);
      // The validator calls c.req.json() again: hand it this parse rather than a second JSON.parse (13 MB for a long recording).
      const parsed = Promise.resolve(body);
      c.req.json = () => parsed as Promise<never>;
    }
    await next();
  };
}
