/**
 * The semantics of `filter` and `sort` on list endpoints, shared by the contract (which validates
 * them, so every faulty query parameter is reported at once) and the server (which applies them).
 */
export type FieldType = 'integer' | 'string' | 'boolean' | 'timestamp';
export type FieldTypes = Readonly<Record<string, FieldType>>;
export type FilterOperator = 'eq' | 'gt' | 'gte' | 'lt' | 'lte' | 'like';

export interface FilterCondition {
  field: string;
  operator: FilterOperator;
  /** Integers as numbers, booleans as 1/0, timestamps as UTC ISO strings. */
  value: string | number;
}

export interface SortOrder {
  field: string;
  direction: 'asc' | 'desc';
}

export const FILTER_OPERATORS: readonly FilterOperator[] = ['eq', 'gt', 'gte', 'lt', 'lte', 'like'];
const ORDERING_OPERATORS: readonly FilterOperator[] = ['gt', 'gte', 'lt', 'lte'];
/** Enough for any real query; SQLite refuses expressions deeper than 1000 terms. */
export const MAX_FILTER_CONDITIONS = 20;
const INT32_MIN = -2_147_483_648;
const INT32_MAX = 2_147_483_647;
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?$/;

function parseValue(
  field: string,
  type: FieldType,
  value: string,
): string | number | { error: string } {
  switch (type) {
    case 'integer':
      if (!/^-?\d{1,10}$/.test(value) || Number(value) < INT32_MIN || Number(value) > INT32_MAX) {
        return {
          error: `Filter '${field}' needs an integer value between ${INT32_MIN} and ${INT32_MAX}`,
        };
      }
      return Number(value);
    case 'boolean':
      if (value !== 'true' && value !== 'false')
        return { error: `Filter '${field}' needs true or false` };
      return value === 'true' ? 1 : 0;
    case 'timestamp': {
      if (!ISO_TIMESTAMP.test(value))
        return { error: `Filter '${field}' needs an ISO 8601 date or date-time` };
      // A date or date-time without an offset means UTC, whatever the server's time zone.
      const utc =
        value.length === 10
          ? `${value}T00:00:00Z`
          : /(Z|[+-]\d{2}:\d{2})$/.test(value)
            ? value
            : `${value}Z`;
      const parsed = new Date(utc);
      if (Number.isNaN(parsed.getTime()))
        return { error: `Filter '${field}' needs a valid calendar date` };
      const calendarOk =
        /[+-]\d{2}:\d{2}$/.test(utc) || parsed.toISOString().slice(0, 10) === utc.slice(0, 10);
      if (!calendarOk) return { error: `Filter '${field}' needs a valid calendar date` };
      return parsed.toISOString();
    }
    default:
      return value;
  }
}

/** One `filter` condition, or the reason it is not one. */
export function parseFilter(raw: string, fields: FieldTypes): FilterCondition | { error: string } {
  const eq = raw.indexOf('=');
  if (eq <= 0)
    return {
      error: `Malformed condition '${raw}': expected <field>=<value> or <field>=<operator>:<value>`,
    };
  const field = raw.slice(0, eq);
  const type = Object.hasOwn(fields, field) ? fields[field] : undefined;
  if (!type)
    return { error: `Unknown filter field '${field}'; allowed: ${Object.keys(fields).join(', ')}` };

  let operator: FilterOperator = 'eq';
  let text = raw.slice(eq + 1);
  const opMatch = /^([a-z]+):/.exec(text);
  if (opMatch) {
    const candidate = opMatch[1] as FilterOperator;
    if (!FILTER_OPERATORS.includes(candidate))
      return {
        error: `Unknown filter operator '${opMatch[1]}'; allowed: ${FILTER_OPERATORS.join(', ')}`,
      };
    operator = candidate;
    text = text.slice(opMatch[0].length);
  }
  if (operator === 'like' && type !== 'string')
    return { error: `Operator 'like' applies only to text fields, not '${field}'` };
  if (ORDERING_OPERATORS.includes(operator) && type === 'boolean')
    return { error: `Operator '${operator}' does not apply to '${field}'` };

  const value = parseValue(field, type, text);
  return typeof value === 'object' ? value : { field, operator, value };
}

export function filterList(filter: string | string[] | undefined): string[] {
  return filter === undefined ? [] : Array.isArray(filter) ? filter : [filter];
}

/** Every problem with the `filter` parameter(s), or an empty list. */
export function filterProblems(
  filter: string | string[] | undefined,
  fields: FieldTypes,
): string[] {
  const filters = filterList(filter);
  if (filters.length > MAX_FILTER_CONDITIONS)
    return [
      `At most ${MAX_FILTER_CONDITIONS} filter conditions are allowed, got ${filters.length}`,
    ];
  return filters.map((f) => parseFilter(f, fields)).flatMap((c) => ('error' in c ? [c.error] : []));
}

export function parseSort(
  raw: string | undefined,
  sortFields: readonly string[],
): SortOrder | { error: string } {
  if (raw === undefined) return { field: 'id', direction: 'asc' };
  const match = /^([a-z_]+):(asc|desc)$/.exec(raw);
  if (!match) return { error: `Malformed sort '${raw}': expected <field>:asc or <field>:desc` };
  if (!sortFields.includes(match[1]!))
    return { error: `Unknown sort field '${match[1]}'; allowed: ${sortFields.join(', ')}` };
  return { field: match[1]!, direction: match[2] as 'asc' | 'desc' };
}
