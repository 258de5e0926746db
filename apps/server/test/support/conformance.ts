import { apiRoutes } from '@voxkey/contract';
import { listOperations } from './openapi-cases.js';

/**
 * Every answer the suite receives from a documented operation is checked against the contract:
 * its status must be one the operation declares, and its JSON body must parse with the declared
 * zod schema. Requests to undocumented paths (unknown routes, path tricks) are not checked here.
 */
const operations = listOperations().map((op) => ({
  ...op,
  regex: new RegExp(`^/v1${op.path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
  route: (apiRoutes as Record<string, any>)[op.operationId],
}));

export function contractViolation(
  method: string,
  path: string,
  status: number,
  body: unknown,
): string | null {
  const pathname = path.split('?')[0]!;
  const op = operations.find((o) => o.method === method.toUpperCase() && o.regex.test(pathname));
  if (!op?.route) return null;
  const declared = op.route.responses?.[status];
  if (!declared)
    return `${method} ${op.path} answered ${status}, which the contract does not declare (${JSON.stringify(body)})`;
  const schema = declared.content?.['application/json']?.schema;
  if (schema && typeof schema.safeParse === 'function') {
    const parsed = schema.safeParse(body);
    if (!parsed.success)
      return `${method} ${op.path} ${status}: body does not match the contract: ${JSON.stringify(parsed.error.issues)}`;
  }
  return null;
}
