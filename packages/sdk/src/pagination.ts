/** Query parameters of every list endpoint. */
export interface ListParams {
  /**
   * `<field>=<value>` or `<field>=<operator>:<value>` (operators `eq`, `gt`, `gte`, `lt`, `lte`,
   * `like` with `%`). An array sends several conditions, all of which must hold.
   */
  filter?: string | string[];
  /** `<field>:asc` or `<field>:desc`, e.g. `created_at:desc`. */
  sort?: string;
  /** Page size, 1 to 300 (server default 100). */
  perPage?: number;
  /** Page number from 1 (default 1). */
  page?: number;
}

/** One page of a list: the `results` plus what the pagination headers say. */
export interface Page<T> {
  results: T[];
  /** The page number that was asked for. */
  page: number;
  /** `X-Total-Pages`: pages for this query and page size (0 when nothing matches). */
  totalPages: number | undefined;
  /** `X-Total-Count`: matching records in all pages. */
  totalCount: number | undefined;
}

export function toQuery(params: ListParams | undefined): {
  filter?: string | string[];
  sort?: string;
  per_page?: number;
  page?: number;
} {
  const query: { filter?: string | string[]; sort?: string; per_page?: number; page?: number } = {};
  if (!params) return query;
  if (params.filter !== undefined) query.filter = params.filter;
  if (params.sort !== undefined) query.sort = params.sort;
  if (params.perPage !== undefined) query.per_page = params.perPage;
  if (params.page !== undefined) query.page = params.page;
  return query;
}

export function pageFrom<T>(body: { results: T[] }, response: Response, page: number): Page<T> {
  return {
    results: body.results,
    page,
    totalPages: intHeader(response, 'x-total-pages'),
    totalCount: intHeader(response, 'x-total-count'),
  };
}

function intHeader(response: Response, name: string): number | undefined {
  const value = response.headers.get(name);
  if (value == null || value.trim() === '') return undefined;
  const n = Number(value);
  return Number.isInteger(n) && n >= 0 ? n : undefined;
}

/**
 * Iterates over every item of a paginated list, fetching pages lazily from `params.page`
 * (default 1) until `X-Total-Pages` is reached (or, without that header, until a short or
 * empty page). Breaking out of a `for await` stops fetching.
 */
export async function* paginate<T>(
  fetchPage: (params: ListParams) => Promise<Page<T>>,
  params: ListParams = {},
): AsyncGenerator<T, void, undefined> {
  let page = params.page ?? 1;
  for (;;) {
    const current = await fetchPage({ ...params, page });
    yield* current.results;
    if (current.results.length === 0) return;
    if (current.totalPages !== undefined) {
      if (page >= current.totalPages) return;
    } else if (params.perPage !== undefined && current.results.length < params.perPage) {
      return;
    }
    page++;
  }
}
