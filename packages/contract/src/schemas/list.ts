import { z } from '../zod.js';
import { type FieldTypes, filterProblems, parseSort } from '../list-query.js';
import { jsonResponse } from './common.js';

export const MAX_PER_PAGE = 300;
export const DEFAULT_PER_PAGE = 100;

const FILTER_DESCRIPTION =
  'Condition `<field>=<value>` or `<field>=<operator>:<value>`; operators `eq`, `gt`, `gte`, `lt`, `lte`, `like` (`%` wildcard, case-sensitive). ' +
  'Repeat the parameter for several conditions; all must hold (AND). Prefix a value with `eq:` to match a value that itself looks like an operator.';

export const listQuerySchema = (filterFields: FieldTypes, sortFields: readonly string[]) =>
  z.object({
    filter: z
      .union([z.string(), z.array(z.string())])
      .optional()
      .superRefine((value, ctx) => {
        // One entry per faulty condition, each naming what is wrong with it.
        for (const message of filterProblems(value, filterFields))
          ctx.addIssue({ code: 'custom', message, params: { code: 'invalid_filter' } });
      })
      .openapi({
        param: { name: 'filter', in: 'query', style: 'form', explode: true },
        description: `${FILTER_DESCRIPTION} Fields: ${Object.keys(filterFields)
          .map((f) => `\`${f}\``)
          .join(', ')}.`,
        example: 'id=gte:10',
      }),
    sort: z
      .string()
      .optional()
      .superRefine((value, ctx) => {
        const sort = parseSort(value, sortFields);
        if ('error' in sort)
          ctx.addIssue({ code: 'custom', message: sort.error, params: { code: 'invalid_sort' } });
      })
      .openapi({
        param: { name: 'sort', in: 'query' },
        description: `\`<field>:asc\` or \`<field>:desc\`. Fields: ${sortFields.map((f) => `\`${f}\``).join(', ')}. Default \`id:asc\`.`,
        example: 'created_at:desc',
      }),
    per_page: z.coerce
      .number({ error: 'Must be an integer' })
      .int('Must be an integer')
      .min(1, 'Must be at least 1')
      .max(MAX_PER_PAGE, `Must be at most ${MAX_PER_PAGE}`)
      .default(DEFAULT_PER_PAGE)
      .openapi({
        param: { name: 'per_page', in: 'query' },
        description: `Page size, 1 to ${MAX_PER_PAGE}.`,
        example: DEFAULT_PER_PAGE,
      }),
    page: z.coerce
      .number({ error: 'Must be an integer' })
      .int()
      .min(1, 'Must be at least 1')
      .default(1)
      .openapi({
        param: { name: 'page', in: 'query' },
        description: 'Page number, from 1. A page past the end is empty.',
        example: 1,
      }),
  });

export const listResponse = <T extends z.ZodType>(item: T, name: string, description: string) => ({
  ...jsonResponse(z.object({ results: z.array(item) }).openapi(name), description),
  headers: {
    'X-Total-Pages': {
      description: 'Total number of pages for this query and page size (0 when nothing matches).',
      schema: { type: 'integer' as const },
    },
    'X-Total-Count': {
      description: 'Total number of matching records.',
      schema: { type: 'integer' as const },
    },
  },
});
