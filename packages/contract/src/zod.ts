import { z } from '@hono/zod-openapi';

export const REQUIRED_MESSAGE = 'This field is required';

// One error map for the whole contract, so every missing field reads the same way.
z.config({
  customError: (issue) => {
    if (issue.code === 'invalid_type' && issue.input === undefined) return REQUIRED_MESSAGE;
    return undefined;
  },
});

export { z };
