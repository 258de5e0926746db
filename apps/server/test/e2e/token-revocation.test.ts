import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connection.js';
import { TEST_DIALECT } from '../support/database.js';
import {
  createServerEnvironment,
  runCli,
  type ServerEnvironment,
  type ServerProcess,
  startServerProcess,
} from '../support/server-process.js';

// Issue 17 item 3: however the token check is made cheaper, a disabled or deleted token is refused
// on its very next request, by the process that changed it and by every other process on the
// same database.

describe(`token revocation across server processes (${TEST_DIALECT})`, () => {
  let environment: ServerEnvironment;
  let first: ServerProcess;
  let second: ServerProcess;
  let orgId: number;
  let admin: string;

  beforeAll(async () => {
    environment = await createServerEnvironment({ RUN_WORKERS: 'false' });
    const created = await runCli(environment, [
      'org',
      'create',
      '--name',
      'Revoke',
      '--email',
      'revoke@example.com',
    ]);
    orgId = created.organisation.id;
    admin = created.token.bearer;
    [first, second] = await Promise.all([
      startServerProcess(environment),
      startServerProcess(environment),
    ]);
  });

  afterAll(async () => {
    await Promise.all([first?.stop(), second?.stop()]);
    await environment?.cleanup();
  });

  const call = (
    server: ServerProcess,
    bearer: string,
    method: string,
    path: string,
    body?: unknown,
  ) =>
    fetch(`${server.baseUrl}/organisations/${orgId}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${bearer}`,
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });

  async function newToken(): Promise<{ id: number; bearer: string }> {
    // admin is the trial token: what it creates must expire no later than itself.
    const res = await call(first, admin, 'POST', '/api-tokens', {
      friendly_name: `t-${Math.random()}`,
      enabled: true,
      expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { bearer: string; token: { id: number } };
    return { id: body.token.id, bearer: body.bearer };
  }

  /** Both processes accept the token, repeatedly (whatever they keep warm, they have it). */
  async function warm(bearer: string) {
    for (let i = 0; i < 3; i++) {
      expect((await call(first, bearer, 'GET', '')).status).toBe(200);
      expect((await call(second, bearer, 'GET', '')).status).toBe(200);
    }
  }

  it('a token disabled through one process is refused by both on their very next request', async () => {
    const token = await newToken();
    await warm(token.bearer);
    expect(
      (await call(first, admin, 'PATCH', `/api-tokens/${token.id}`, { enabled: false })).status,
    ).toBe(200);
    expect((await call(second, token.bearer, 'GET', '')).status).toBe(401);
    expect((await call(first, token.bearer, 'GET', '')).status).toBe(401);
    // And enabled again: accepted again at once.
    expect(
      (await call(second, admin, 'PATCH', `/api-tokens/${token.id}`, { enabled: true })).status,
    ).toBe(200);
    expect((await call(first, token.bearer, 'GET', '')).status).toBe(200);
    expect((await call(second, token.bearer, 'GET', '')).status).toBe(200);
  });

  it('a token deleted through one process is refused by both on their very next request', async () => {
    const token = await newToken();
    await warm(token.bearer);
    expect((await call(second, admin, 'DELETE', `/api-tokens/${token.id}`)).status).toBe(200);
    expect((await call(first, token.bearer, 'GET', '')).status).toBe(401);
    expect((await call(second, token.bearer, 'GET', '')).status).toBe(401);
  });

  it("a token disabled from outside both processes (an operator's SQL) is refused at once", async () => {
    const token = await newToken();
    await warm(token.bearer);
    const database = openDatabase(environment.env.DATABASE_URL!);
    await database.db
      .updateTable('api_tokens')
      .set({ enabled: 0 })
      .where('id', '=', token.id)
      .execute();
    await database.close();
    expect((await call(first, token.bearer, 'GET', '')).status).toBe(401);
    expect((await call(second, token.bearer, 'GET', '')).status).toBe(401);
  });
});

describe(`rate limits across server processes (${TEST_DIALECT})`, () => {
  it('two processes on one database draw from the same token bucket', async () => {
    const environment = await createServerEnvironment({ RUN_WORKERS: 'false' });
    const limits = {
      RATE_LIMIT_ENABLED: 'true',
      RATE_LIMIT_TOKEN_BURST: '10',
      RATE_LIMIT_TOKEN_RPS: '0.1',
      RATE_LIMIT_TRIAL_BURST: '10',
      RATE_LIMIT_TRIAL_RPS: '0.1',
      RATE_LIMIT_ORG_BURST: '1000',
      RATE_LIMIT_ORG_RPS: '100',
    };
    const servers: ServerProcess[] = [];
    try {
      const created = await runCli(environment, [
        'org',
        'create',
        '--name',
        'Limits',
        '--email',
        'limits@example.com',
      ]);
      servers.push(
        ...(await Promise.all([
          startServerProcess(environment, limits),
          startServerProcess(environment, limits),
        ])),
      );
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) {
        const res = await fetch(
          `${servers[i % 2]!.baseUrl}/organisations/${created.organisation.id}`,
          { headers: { authorization: `Bearer ${created.token.bearer}` } },
        );
        statuses.push(res.status);
      }
      const allowed = statuses.filter((s) => s === 200).length;
      // A burst of 10 shared by both processes (one more token may refill during the run), never 10 each.
      expect(allowed).toBeGreaterThanOrEqual(10);
      expect(allowed).toBeLessThanOrEqual(11);
      expect(statuses.filter((s) => s === 429).length).toBe(20 - allowed);
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      await environment.cleanup();
    }
  });
});
