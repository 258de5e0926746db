import { createVoxkeyClient, type VoxkeyClientOptions } from '../src/index.js';

export interface Recorded {
  method: string;
  url: URL;
  headers: Headers;
  body: unknown;
  signal: AbortSignal;
}

export type Reply = Response | Error | ((request: Request) => Response | Promise<Response>);

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  });
}

/** A fetch that answers from a queue (the last reply repeats) and records every request. */
export function mockFetch(...replies: Reply[]) {
  const calls: Recorded[] = [];
  let i = 0;
  const fetch = async (request: Request): Promise<Response> => {
    const text = await request.clone().text();
    calls.push({
      method: request.method,
      url: new URL(request.url),
      headers: request.headers,
      body: text ? JSON.parse(text) : undefined,
      signal: request.signal,
    });
    const reply = replies[Math.min(i++, replies.length - 1)]!;
    if (reply instanceof Error) throw reply;
    if (typeof reply === 'function') return reply(request);
    return reply.clone();
  };
  return { fetch, calls };
}

export function client(
  fetch: (r: Request) => Promise<Response>,
  options: Partial<VoxkeyClientOptions> = {},
) {
  return createVoxkeyClient({
    baseUrl: 'http://voxkey.test/v1',
    token: 'vk_test_token',
    orgId: 7,
    fetch,
    retries: { retries: 2, baseDelayMs: 1, maxDelayMs: 5 },
    ...options,
  });
}

export const user = (id: number) => ({
  id,
  org_id: 7,
  external_id: `customer-${id}`,
  is_active: true,
  created_at: '2026-11-21T10:00:00.000Z',
  updated_at: '2026-11-21T10:00:00.000Z',
});
