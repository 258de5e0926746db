import { randomBytes } from 'node:crypto';
import { createApp } from '../../src/app.js';
import type { AppDeps } from '../../src/deps.js';
import { createLogger } from '../../src/observability/logger.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { createSealer } from '../../src/security/sealing.js';
import { type AppConfig, loadConfig } from '../../src/config.js';
import { signUpOrganisation } from '../../src/services/organisations.js';
import { createTestDatabase, type TestDatabase } from './database.js';

export interface TestOrg {
  id: number;
  token: string;
  subscriptionId: number;
}

export interface RequestOptions {
  token?: string | null;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface TestResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export function testConfig(overrides: Record<string, string> = {}): AppConfig {
  return loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: 'sqlite::memory:',
    BOOTSTRAP_DEMO_ORG: 'false',
    // Suites send bursts with one token; rate limiting has its own tests.
    RATE_LIMIT_TOKEN_RPS: '100000',
    RATE_LIMIT_TOKEN_BURST: '100000',
    RATE_LIMIT_ORG_RPS: '100000',
    RATE_LIMIT_ORG_BURST: '100000',
    RATE_LIMIT_TRIAL_RPS: '100000',
    RATE_LIMIT_TRIAL_BURST: '100000',
    LOG_LEVEL: 'silent',
    ...overrides,
  });
}

/** An in-process app on a fresh database with two organisations, A and B, each with a token. */
export async function createTestContext(configOverrides: Record<string, string> = {}) {
  const testDb: TestDatabase = await createTestDatabase();
  const config = testConfig(configOverrides);
  const errors: unknown[] = [];
  const signalled = { jobs: 0, deliveries: 0 };
  const deps: AppDeps = {
    database: testDb.database,
    config,
    sealer: createSealer(randomBytes(32)),
    signals: {
      jobQueued: () => void signalled.jobs++,
      deliveryQueued: () => void signalled.deliveries++,
    },
    observability: { logger: createLogger('silent'), metrics: createMetrics() },
    // What the bundled speech recogniser checks (a test may remove it: a server without one).
    phraseLanguages: async () => ['en'],
  };
  const app = createApp(deps, { reportError: (err) => errors.push(err) });

  async function makeOrg(name: string): Promise<TestOrg & { webhookSecret: string }> {
    const { organisation, token, webhook_secret } = await signUpOrganisation(
      testDb.database.db,
      { name, email: `${name.toLowerCase()}@example.com` },
      { sealer: deps.sealer },
    );
    return {
      id: organisation.id,
      token: token.bearer,
      subscriptionId: organisation.subscription.id,
      webhookSecret: webhook_secret!,
    };
  }
  const orgA = await makeOrg('OrgA');
  const orgB = await makeOrg('OrgB');

  async function request<T = any>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<TestResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    const token = options.token === undefined ? orgA.token : options.token;
    if (token) headers.authorization = `Bearer ${token}`;
    let body: string | undefined = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    if (body !== undefined) headers['content-length'] ??= String(Buffer.byteLength(body));
    const res = await app.request(path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // leave non-JSON bodies as text
    }
    return { status: res.status, body: parsed as T, headers: res.headers };
  }

  return {
    app,
    config,
    deps,
    signalled,
    database: testDb.database,
    db: testDb.database.db,
    orgA,
    orgB,
    makeOrg,
    request,
    /** Errors the app reported as 500s; tests assert it stays empty. */
    reportedErrors: errors,
    cleanup: () => testDb.cleanup(),
  };
}

export type TestContext = Awaited<ReturnType<typeof createTestContext>>;
