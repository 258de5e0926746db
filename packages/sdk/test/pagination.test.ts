import { describe, expect, it } from 'vitest';
import { paginate, type Page } from '../src/index.js';
import { client, json, mockFetch, user } from './helpers.js';

describe('pagination', () => {
  it('iterates over every page until X-Total-Pages', async () => {
    const { fetch, calls } = mockFetch(
      json({ results: [user(1), user(2)] }, 200, { 'X-Total-Pages': '3', 'X-Total-Count': '5' }),
      json({ results: [user(3), user(4)] }, 200, { 'X-Total-Pages': '3', 'X-Total-Count': '5' }),
      json({ results: [user(5)] }, 200, { 'X-Total-Pages': '3', 'X-Total-Count': '5' }),
    );
    const ids: number[] = [];
    for await (const u of client(fetch).users.iterate({ perPage: 2, filter: 'is_active=true' }))
      ids.push(u.id);
    expect(ids).toEqual([1, 2, 3, 4, 5]);
    expect(calls.map((c) => c.url.searchParams.get('page'))).toEqual(['1', '2', '3']);
    expect(
      calls.every(
        (c) =>
          c.url.searchParams.get('per_page') === '2' &&
          c.url.searchParams.get('filter') === 'is_active=true',
      ),
    ).toBe(true);
  });

  it('stops fetching when the loop breaks', async () => {
    const { fetch, calls } = mockFetch(
      json({ results: [user(1), user(2)] }, 200, { 'X-Total-Pages': '50' }),
    );
    for await (const u of client(fetch).users.iterate({ perPage: 2 })) {
      if (u.id === 1) break;
    }
    expect(calls).toHaveLength(1);
  });

  it('fetches nothing more for an empty list (X-Total-Pages: 0)', async () => {
    const { fetch, calls } = mockFetch(
      json({ results: [] }, 200, { 'X-Total-Pages': '0', 'X-Total-Count': '0' }),
    );
    const all = [];
    for await (const t of client(fetch).predefinedTexts.iterate()) all.push(t);
    expect(all).toEqual([]);
    expect(calls).toHaveLength(1);
  });

  it('starts from the given page', async () => {
    const { fetch, calls } = mockFetch(json({ results: [user(9)] }, 200, { 'X-Total-Pages': '3' }));
    const all = [];
    for await (const u of client(fetch).users.iterate({ page: 3 })) all.push(u);
    expect(all).toHaveLength(1);
    expect(calls[0]!.url.searchParams.get('page')).toBe('3');
  });

  it('without X-Total-Pages, stops at a short page', async () => {
    const pages: Page<number>[] = [
      { results: [1, 2], page: 1, totalPages: undefined, totalCount: undefined },
      { results: [3], page: 2, totalPages: undefined, totalCount: undefined },
    ];
    const seen: number[] = [];
    const items: number[] = [];
    for await (const n of paginate(async (p) => (seen.push(p.page!), pages[p.page! - 1]!), {
      perPage: 2,
    }))
      items.push(n);
    expect(items).toEqual([1, 2, 3]);
    expect(seen).toEqual([1, 2]);
  });

  it('an error on a later page is thrown from the iterator', async () => {
    const { fetch } = mockFetch(
      json({ results: [user(1)] }, 200, { 'X-Total-Pages': '2' }),
      json({ code: 403, message: 'Forbidden' }, 403),
    );
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const u of client(fetch).users.iterate()) seen.push(u.id);
      })(),
    ).rejects.toMatchObject({ status: 403 });
    expect(seen).toEqual([1]);
  });

  it('every list has iterate: tokens, plans, subscriptions, invoices, deliveries', async () => {
    const { fetch, calls } = mockFetch(json({ results: [] }, 200, { 'X-Total-Pages': '0' }));
    const vk = client(fetch);
    for await (const _ of vk.tokens.iterate()) void _;
    for await (const _ of vk.plans.iterate()) void _;
    for await (const _ of vk.subscriptions.iterate()) void _;
    for await (const _ of vk.invoices.iterate()) void _;
    for await (const _ of vk.webhooks.iterateDeliveries({ filter: 'status=failed' })) void _;
    expect(calls.map((c) => c.url.pathname)).toEqual([
      '/v1/organisations/7/api-tokens',
      '/v1/plans',
      '/v1/organisations/7/subscriptions',
      '/v1/organisations/7/invoices',
      '/v1/organisations/7/webhook-deliveries',
    ]);
  });
});
