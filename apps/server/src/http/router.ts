import { OpenAPIHono } from '@hono/zod-openapi';
import type { ZodError } from 'zod';
import { ApiError } from '../errors.js';
import { toFieldErrors } from './field-errors.js';
import type { AppEnv } from './types.js';

/** Every router is made here so validation errors always have the spec's 400 shape. */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({
    strict: true,
    defaultHook: (result) => {
      if (!result.success)
        throw ApiError.validation(toFieldErrors(result.error as ZodError, result.target));
    },
  });
}
