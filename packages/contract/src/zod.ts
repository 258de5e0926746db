import { z } from '@hono/zod-openapi';

export const REQUIRED_MESSAGE = 'This field is required';
/** An empty string where one is required: present, so not `required` but `too_short` (docs/decisions.md). */
export const EMPTY_MESSAGE = 'Must not be empty';

// One error map for the whole contract, so every missing field, and every empty one, reads the same way.
z.config({
  customError: (issue) => {
    if (issue.code === 'invalid_type' && issue.input === undefined) return REQUIRED_MESSAGE;
    if (issue.code === 'too_small' && issue.origin === 'string' && issue.minimum === 1)
      return EMPTY_MESSAGE;
    return undefined;
  },
});

export { z };
