import type { MiddlewareHandler } from 'hono';
import { ApiError } from '../errors.js';
import type { AppEnv } from '../types.js';

const NUL_MESSAGE = 'Must not contain NUL (U+0000) characters';

function findNul(value: unknown, path: string): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path || 'body' : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findNul(value[i], `${path}.${i}`.replace(/^\./, ''));
      if (found) return found;
    }
    return null;
  }
  if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const field = path ? `${path}.${key}` : key;
      if (key.includes('\u0000')) return field;
      const found = findNul(item, field);
      if (found) return found;
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
      const param = Object.entries(queries).find(([key, values]) => key.includes('\u0000') || values.some((v) => v.includes('\u0000')));
      throw ApiError.field(param ? param[0] : 'path', NUL_MESSAGE);
    }
    if (c.req.method !== 'GET' && /json/i.test(c.req.header('content-type') ?? '')) {
      let body: unknown;
      try {
        body = await c.req.json();
      } catch {
        return next(); // malformed JSON is the validator's to report
      }
      const field = findNul(body, '');
      if (field) throw ApiError.field(field, NUL_MESSAGE);
    }
    await next();
  };
}
