import type { Context } from 'hono';
import type { FieldMap, FilterCondition, FilterOperator, ListQuery, ListResult } from '../repositories/list-query.js';
import { ApiError, type FieldError } from './errors.js';

const OPERATORS: readonly FilterOperator[] = ['eq', 'gt', 'gte', 'lt', 'lte', 'like'];
const ORDERING_OPERATORS: readonly FilterOperator[] = ['gt', 'gte', 'lt', 'lte'];
/** Enough for any real query; SQLite refuses expressions deeper than 1000 terms. */
export const MAX_FILTER_CONDITIONS = 20;
const INT32_MIN = -2_147_483_648;
const INT32_MAX = 2_147_483_647;
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?$/;

export interface RawListQuery {
  filter?: string | string[];
  sort?: string;
  per_page: number;
  page: number;
}

function parseCondition(raw: string, fields: FieldMap): FilterCondition | string {
  const eq = raw.indexOf('=');
  if (eq <= 0) return `Malformed condition '${raw}': expected <field>=<value> or <field>=<operator>:<value>`;
  const field = raw.slice(0, eq);
  const spec = fields[field];
  if (!spec) return `Unknown filter field '${field}'; allowed: ${Object.keys(fields).join(', ')}`;

  let operator: FilterOperator = 'eq';
  let value = raw.slice(eq + 1);
  const opMatch = /^([a-z]+):/.exec(value);
  if (opMatch) {
    const candidate = opMatch[1] as FilterOperator;
    if (!OPERATORS.includes(candidate)) return `Unknown filter operator '${opMatch[1]}'; allowed: ${OPERATORS.join(', ')}`;
    operator = candidate;
    value = value.slice(opMatch[0].length);
  }

  if (operator === 'like' && spec.type !== 'string') return `Operator 'like' applies only to text fields, not '${field}'`;
  if (ORDERING_OPERATORS.includes(operator) && spec.type === 'boolean') return `Operator '${operator}' does not apply to '${field}'`;

  switch (spec.type) {
    case 'integer': {
      if (!/^-?\d{1,10}$/.test(value) || Number(value) < INT32_MIN || Number(value) > INT32_MAX) {
        return `Filter '${field}' needs an integer value between ${INT32_MIN} and ${INT32_MAX}`;
      }
      return { field, operator, value: Number(value) };
    }
    case 'boolean': {
      if (value !== 'true' && value !== 'false') return `Filter '${field}' needs true or false`;
      return { field, operator, value: value === 'true' ? 1 : 0 };
    }
    case 'timestamp': {
      if (!ISO_TIMESTAMP.test(value)) return `Filter '${field}' needs an ISO 8601 date or date-time`;
      // A date or date-time without an offset means UTC, whatever the server's time zone.
      const utc = value.length === 10 ? `${value}T00:00:00Z` : /(Z|[+-]\d{2}:\d{2})$/.test(value) ? value : `${value}Z`;
      const parsed = new Date(utc);
      if (Number.isNaN(parsed.getTime()) || (!/[+-]\d{2}:\d{2}$/.test(utc) && parsed.toISOString().slice(0, 10) !== utc.slice(0, 10))) {
        return `Filter '${field}' needs a valid calendar date`;
      }
      return { field, operator, value: parsed.toISOString() };
    }
    default:
      return { field, operator, value };
  }
}

/** Turns the validated `filter`/`sort`/`page`/`per_page` query into a repository query, or a 400 naming what is wrong. */
export function parseListQuery(raw: RawListQuery, filterFields: FieldMap, sortFields: readonly string[]): ListQuery {
  const errors: FieldError[] = [];
  const conditions: FilterCondition[] = [];
  const filters = raw.filter === undefined ? [] : Array.isArray(raw.filter) ? raw.filter : [raw.filter];
  if (filters.length > MAX_FILTER_CONDITIONS) {
    throw ApiError.field('filter', `At most ${MAX_FILTER_CONDITIONS} filter conditions are allowed, got ${filters.length}`);
  }
  for (const filter of filters) {
    const parsed = parseCondition(filter, filterFields);
    if (typeof parsed === 'string') errors.push({ field: 'filter', message: parsed });
    else conditions.push(parsed);
  }

  let sort: ListQuery['sort'] = { field: 'id', direction: 'asc' };
  if (raw.sort !== undefined) {
    const match = /^([a-z_]+):(asc|desc)$/.exec(raw.sort);
    if (!match) errors.push({ field: 'sort', message: `Malformed sort '${raw.sort}': expected <field>:asc or <field>:desc` });
    else if (!sortFields.includes(match[1]!)) {
      errors.push({ field: 'sort', message: `Unknown sort field '${match[1]}'; allowed: ${sortFields.join(', ')}` });
    } else sort = { field: match[1]!, direction: match[2] as 'asc' | 'desc' };
  }

  if (errors.length) throw ApiError.validation(errors);
  return { conditions, sort, page: raw.page, perPage: raw.per_page };
}

export function setPaginationHeaders(c: Context, result: ListResult<unknown>): void {
  c.header('X-Total-Pages', String(result.totalPages));
  c.header('X-Total-Count', String(result.total));
}
