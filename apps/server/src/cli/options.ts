import { z } from 'zod';
import { UsageError } from './output.js';

/** Validates a command's options (as commander parsed them); every problem becomes one usage-error line. */
export function parseOptions<T extends z.ZodType>(schema: T, options: unknown): z.infer<T> {
  const parsed = schema.safeParse(options);
  if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => i.message).join('\n'));
  return parsed.data;
}

export const OrgIdOption = z.coerce
  .number({ error: '--org must be an organisation id' })
  .int('--org must be an organisation id')
  .positive('--org must be an organisation id');
export const TokenIdOption = z.coerce
  .number({ error: '--token must be a token id' })
  .int('--token must be a token id')
  .positive('--token must be a token id');
export const JsonOption = z.boolean().optional();
