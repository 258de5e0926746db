import { OpenAPIHono } from '@hono/zod-openapi';
import type { ZodError } from 'zod';
import { ApiError, type FieldError } from '../errors.js';
import type { AppEnv } from './types.js';

type Issue = ZodError['issues'][number];

function fieldName(issue: Issue, target: string): string {
  const path = issue.path.map(String).join('.');
  if (path) return path;
  return target === 'json' ? 'body' : target;
}

/** One entry per faulty field, in the spec's `{field, message}` shape. */
export function toFieldErrors(error: ZodError, target: string): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      const prefix = issue.path.length ? `${issue.path.join('.')}.` : '';
      for (const key of issue.keys) errors.push({ field: `${prefix}${key}`, message: 'Unknown field' });
      continue;
    }
    const field = fieldName(issue, target);
    // One entry per field, except that each faulty `filter` condition (a custom check) is named on its own.
    const key = issue.code === 'custom' && field === 'filter' ? `${field}\u0000${issue.message}` : field;
    if (seen.has(key)) continue;
    seen.add(key);
    errors.push({ field, message: issue.message });
  }
  return errors;
}

/** Every router is made here so validation errors always have the spec's 400 shape. */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({
    strict: true,
    defaultHook: (result) => {
      if (!result.success) throw ApiError.validation(toFieldErrors(result.error as ZodError, result.target));
    },
  });
}
