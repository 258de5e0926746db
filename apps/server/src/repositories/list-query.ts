import { type Expression, type SelectQueryBuilder, type SqlBool, sql } from 'kysely';

import type {
  FieldType,
  FieldTypes,
  FilterCondition,
  FilterOperator,
  SortOrder,
} from '@voxkey/contract';

export interface FieldSpec {
  column: string;
  type: FieldType;
}
export type FieldMap = Record<string, FieldSpec>;

/** The contract's list fields are named after their columns. */
export function columnsOf(fields: FieldTypes): FieldMap {
  return Object.fromEntries(
    Object.entries(fields).map(([name, type]) => [name, { column: name, type }]),
  );
}

export interface ListQuery {
  conditions: FilterCondition[];
  sort: SortOrder;
  page: number;
  perPage: number;
}

export interface ListResult<T> {
  rows: T[];
  total: number;
  totalPages: number;
}

const SQL_OPERATOR: Record<FilterOperator, string> = {
  eq: '=',
  gt: '>',
  gte: '>=',
  lt: '<',
  lte: '<=',
  like: 'like',
};

/** `like` patterns use only `%` as a wildcard: `_` and the escape character itself match literally. */
function likePattern(value: string): string {
  return value.replace(/[\\_]/g, (c) => `\\${c}`);
}

// Text columns compare byte-wise in both dialects (SQLite's BINARY; COLLATE "C" on PostgreSQL, set by a migration).
function column(spec: FieldSpec): Expression<unknown> {
  return sql.ref(spec.column);
}

function condition(spec: FieldSpec, filter: FilterCondition): Expression<SqlBool> {
  if (filter.operator === 'like')
    return sql<SqlBool>`${column(spec)} like ${likePattern(String(filter.value))} escape '\\'`;
  return sql<SqlBool>`${column(spec)} ${sql.raw(SQL_OPERATOR[filter.operator])} ${filter.value}`;
}

/** Applies validated filter, sort and page to a query already scoped to one organisation. */
export async function listRows<T>(
  base: SelectQueryBuilder<any, any, T>,
  query: ListQuery,
  fields: FieldMap,
): Promise<ListResult<T>> {
  let filtered = base;
  for (const filter of query.conditions) {
    const spec = fields[filter.field];
    if (!spec) throw new Error(`unvalidated filter field ${filter.field}`);
    filtered = filtered.where(condition(spec, filter));
  }

  const sortSpec: FieldSpec = fields[query.sort.field] ?? { column: 'id', type: 'integer' };
  let ordered = filtered.orderBy(sql`${column(sortSpec)} ${sql.raw(query.sort.direction)}`);
  if (sortSpec.column !== 'id') ordered = ordered.orderBy(sql.ref('id'), 'asc');
  const offset = (query.page - 1) * query.perPage;
  const rows = await ordered.limit(query.perPage).offset(offset).execute();

  // A page that is not full is the last one: the total follows from it (an empty page past the end does not tell).
  let total = offset + rows.length;
  if (rows.length === query.perPage || (rows.length === 0 && query.page > 1)) {
    const countRow = await filtered
      .clearSelect()
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .executeTakeFirstOrThrow();
    total = Number((countRow as { total: number | string }).total);
  }

  return { rows, total, totalPages: Math.ceil(total / query.perPage) };
}
