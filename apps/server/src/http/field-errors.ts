import { type FieldErrorCode, fieldErrorCodeNames, REQUIRED_MESSAGE } from '@voxkey/contract';
import type { ZodError } from 'zod';
import type { FieldError } from '../errors.js';

type Issue = ZodError['issues'][number];

const KNOWN_CODES = new Set<string>(fieldErrorCodeNames);

const byLength = (origin: string | undefined, lengthCode: FieldErrorCode): FieldErrorCode =>
  origin === 'string' || origin === 'array' || origin === 'set' ? lengthCode : 'out_of_range';

/** The contract's code for one zod issue. */
export function fieldErrorCode(issue: Issue): FieldErrorCode {
  switch (issue.code) {
    case 'invalid_type':
      // zod leaves the input out of issues; the contract's error map gives a missing value this message.
      return issue.message === REQUIRED_MESSAGE ? 'required' : 'invalid_type';
    case 'unrecognized_keys':
      return 'unknown_field';
    case 'too_small':
      return byLength(issue.origin, 'too_short');
    case 'too_big':
      return byLength(issue.origin, 'too_long');
    case 'invalid_format':
      return issue.format === 'uuid' ? 'invalid_uuid' : 'invalid_format';
    case 'custom': {
      const code = (issue.params as { code?: unknown } | undefined)?.code;
      return typeof code === 'string' && KNOWN_CODES.has(code)
        ? (code as FieldErrorCode)
        : 'invalid_value';
    }
    default:
      return 'invalid_value';
  }
}

function fieldName(issue: Issue, target: string): string {
  const path = issue.path.map(String).join('.');
  if (path) return path;
  return target === 'json' ? 'body' : target;
}

/** One entry per faulty field, in the spec's `{field, message}` shape plus the contract's `code`. */
export function toFieldErrors(error: ZodError, target: string): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      const prefix = issue.path.length ? `${issue.path.join('.')}.` : '';
      for (const key of issue.keys)
        errors.push({ field: `${prefix}${key}`, code: 'unknown_field', message: 'Unknown field' });
      continue;
    }
    const field = fieldName(issue, target);
    // One entry per field, except that each faulty `filter` condition (a custom check) is named on its own.
    const key =
      issue.code === 'custom' && field === 'filter' ? `${field}\u0000${issue.message}` : field;
    if (seen.has(key)) continue;
    seen.add(key);
    errors.push({ field, code: fieldErrorCode(issue), message: issue.message });
  }
  return errors;
}
