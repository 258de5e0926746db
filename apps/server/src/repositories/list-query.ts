import type { SelectQueryBuilder } from 'kysely';

export type FieldType = 'integer' | 'string' | 'boolean' | 'timestamp';
export interface FieldSpec {
  column: string;
  type: FieldType;
}
export type FieldMap = Record<string, FieldSpec>;

export type FilterOperator = 'eq' | 'gt' | 'gte' | 'lt' | 'lte' | 'like';
export interface FilterCondition {
  field: string;
  operator: FilterOperator;
  value: string | number;
}

export interface ListQuery {
  conditions: FilterCondition[];
  sort: { field: string; direction: 'asc' | 'desc' };
  page: number;
  perPage: number;
}

export interface ListResult<T> {
  rows: T[];
  total: number;
  totalPages: number;
}

const SQL_OPERATOR: Record<FilterOperator, string> = { eq: '=', gt: '>', gte: '>=', lt: '<', lte: '<=', like: 'like' };

/** Applies validated filter, sort and page to a query already scoped to one organisation. */
export async function listRows<T>(
  base: SelectQueryBuilder<any, any, T>,
  query: ListQuery,
  fields: FieldMap,
): Promise<ListResult<T>> {
  let filtered = base;
  for (const condition of query.conditions) {
    const spec = fields[condition.field];
    if (!spec) throw new Error(`unvalidated filter field ${condition.field}`);
    filtered = filtered.where(spec.column as any, SQL_OPERATOR[condition.operator] as any, condition.value);
  }

  const countRow = await filtered
    .clearSelect()
    .select((eb) => eb.fn.countAll<number>().as('total'))
    .executeTakeFirstOrThrow();
  const total = Number((countRow as { total: number | string }).total);

  const sortColumn = fields[query.sort.field]?.column ?? 'id';
  let ordered = filtered.orderBy(sortColumn as any, query.sort.direction);
  if (sortColumn !== 'id') ordered = ordered.orderBy('id' as any, 'asc');
  const rows = await ordered
    .limit(query.perPage)
    .offset((query.page - 1) * query.perPage)
    .execute();

  return { rows, total, totalPages: Math.ceil(total / query.perPage) };
}
