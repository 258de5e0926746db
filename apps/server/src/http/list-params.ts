import { type FieldTypes, filterList, parseFilter, parseSort } from '@voxkey/contract';
import type { Context } from 'hono';
import type { ListQuery, ListResult } from '../repositories/list-query.js';
import { ApiError } from '../errors.js';

export interface RawListQuery {
  filter?: string | string[];
  sort?: string;
  per_page: number;
  page: number;
}

/**
 * Turns the list query, already validated by the contract, into a repository query.
 * (A problem here would mean the contract and the server disagree on a field: a 400, never a 500.)
 */
export function parseListQuery(
  raw: RawListQuery,
  filterFields: FieldTypes,
  sortFields: readonly string[],
): ListQuery {
  const conditions = filterList(raw.filter).map((f) => parseFilter(f, filterFields));
  const sort = parseSort(raw.sort, sortFields);
  const badFilter = conditions.find((c) => 'error' in c);
  if (badFilter && 'error' in badFilter)
    throw ApiError.field('filter', 'invalid_filter', badFilter.error);
  if ('error' in sort) throw ApiError.field('sort', 'invalid_sort', sort.error);
  return {
    conditions: conditions.filter((c) => !('error' in c)) as ListQuery['conditions'],
    sort: sort as ListQuery['sort'],
    page: raw.page,
    perPage: raw.per_page,
  };
}

export function setPaginationHeaders(c: Context, result: ListResult<unknown>): void {
  c.header('X-Total-Pages', String(result.totalPages));
  c.header('X-Total-Count', String(result.total));
}
