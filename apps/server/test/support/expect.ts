import {
  ApiTokenSchema,
  ERROR_CODES,
  type ErrorCode,
  FIELD_ERROR_CODES,
  type FieldErrorCode,
  CreatedApiTokenSchema,
  DeviceSchema,
  InvoiceSchema,
  OrganisationSchema,
  PlanSchema,
  PredefinedTextSchema,
  SettingsSchema,
  SubscriptionSchema,
  UserSchema,
} from '@voxkey/contract';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { contractViolation } from './conformance.js';
import { createTestContext, type TestContext, type TestResponse } from './context.js';
import { TEST_DIALECT } from './database.js';

/** ISO 8601 UTC date-time, as the spec asks for every timestamp. */
export const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;
/** Calendar date (subscriptions). */
export const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

export const INVALID_CREDENTIALS = 'Invalid or expired authentication credentials';
export const REQUIRED = 'This field is required';
export const UNKNOWN_FIELD = 'Unknown field';

/**
 * Field lists of each resource, from the spec's "Resources and their fields" tables.
 * `extra` lists fields the implementation adds beyond the spec's table (decided, documented in the contract).
 */
export const RESOURCE_FIELDS = {
  token: ['id', 'friendly_name', 'enabled', 'expires_at', 'created_at', 'updated_at'],
  organisation: [
    'id',
    'name',
    'address',
    'email',
    'phone_number',
    'vat',
    'vies',
    'created_at',
    'updated_at',
  ],
  settings: ['id', 'org_id', 'settings', 'created_at', 'updated_at'],
  user: ['id', 'org_id', 'external_id', 'is_active', 'created_at', 'updated_at'],
  device: ['id', 'user_id', 'fingerprint', 'type', 'last_used', 'created_at', 'updated_at'],
  text: ['id', 'org_id', 'language', 'text_code', 'text', 'created_at', 'updated_at'],
  plan: ['id', 'details', 'created_at', 'updated_at'],
  subscription: ['id', 'org_id', 'plan_id', 'start_date', 'end_date', 'created_at', 'updated_at'],
  invoice: [
    'id',
    'org_id',
    'sub_id',
    'invoice_sequence',
    'quotas',
    'file_ref',
    'created_at',
    'updated_at',
  ],
} as const;

export type ResourceKind = keyof typeof RESOURCE_FIELDS;

const SCHEMAS = {
  token: ApiTokenSchema,
  organisation: OrganisationSchema,
  settings: SettingsSchema,
  user: UserSchema,
  device: DeviceSchema,
  text: PredefinedTextSchema,
  plan: PlanSchema,
  subscription: SubscriptionSchema,
  invoice: InvoiceSchema,
} as const;

const TIMESTAMP_FIELDS = ['created_at', 'updated_at', 'last_used'] as const;

/** Exact keys (spec list), the contract schema (strict, so no extra keys), integer ids and ISO UTC timestamps. */
export function expectResource(body: any, kind: ResourceKind): void {
  expect(body, `${kind} body`).toBeTypeOf('object');
  expect(Object.keys(body).sort()).toEqual([...RESOURCE_FIELDS[kind]].sort());
  const parsed = (SCHEMAS[kind] as any).strict().safeParse(body);
  expect(parsed.success ? [] : parsed.error.issues, `${kind} matches the contract schema`).toEqual(
    [],
  );
  expect(Number.isInteger(body.id) && body.id > 0).toBe(true);
  for (const f of TIMESTAMP_FIELDS) if (f in body) expect(body[f], `${kind}.${f}`).toMatch(ISO_UTC);
  if (kind === 'token') {
    expect(body).not.toHaveProperty('bearer');
    if (body.expires_at !== null) expect(body.expires_at).toMatch(ISO_UTC);
  }
  if (kind === 'settings')
    expect(Object.keys(body.settings).sort()).toEqual([
      'alert_on_failure',
      'callback_url',
      'challenge_ttl_seconds',
      'deepfake_threshold',
      'enrollment_deepfake_threshold',
      'match_threshold',
      'reject_deepfake_enrollments',
      'require_phrase',
    ]);
  if (kind === 'plan')
    expect(Object.keys(body.details).sort()).toEqual([
      'monthly_calls_included',
      'name',
      'overage_rate_gbp',
    ]);
  if (kind === 'invoice')
    expect(Object.keys(body.quotas).sort()).toEqual(['monthly_verifications', 'overage_calls']);
  if (kind === 'subscription') {
    expect(body.start_date).toMatch(ISO_DATE);
    if (body.end_date !== null) expect(body.end_date).toMatch(ISO_DATE);
  }
}

export function expectCreatedToken(body: any): void {
  expect(Object.keys(body).sort()).toEqual(['bearer', 'token']);
  const parsed = (CreatedApiTokenSchema as any).strict().safeParse(body);
  expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
  expect(body.bearer).toMatch(/^vk_live_[A-Za-z0-9_-]{43}$/);
  expectResource(body.token, 'token');
}

/** A list answer: `{results: [...]}` only, each item of the kind, and the pagination headers. */
export function expectList(
  res: TestResponse,
  kind: ResourceKind,
  expected?: { total: number; perPage?: number },
): any[] {
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(Object.keys(res.body)).toEqual(['results']);
  expect(Array.isArray(res.body.results)).toBe(true);
  for (const item of res.body.results) expectResource(item, kind);
  if (expected) {
    const perPage = expected.perPage ?? 100;
    expect(res.headers.get('x-total-count')).toBe(String(expected.total));
    expect(res.headers.get('x-total-pages')).toBe(String(Math.ceil(expected.total / perPage)));
  }
  return res.body.results;
}

/** `{code, error, message}` and nothing else; `error` is one of the contract's codes for this status (`expected` when given). */
export function expectError(
  res: TestResponse,
  status: number,
  message?: string | RegExp,
  expected?: ErrorCode,
): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get('content-type') ?? '').toMatch(/^application\/json/);
  expect(Object.keys(res.body ?? {}).sort()).toEqual(['code', 'error', 'message']);
  expect(res.body.code).toBe(status);
  expectErrorCode(res.body, status, expected);
  expect(typeof res.body.message).toBe('string');
  expect(res.body.message.length).toBeGreaterThan(0);
  if (typeof message === 'string') expect(res.body.message).toBe(message);
  else if (message) expect(res.body.message).toMatch(message);
}

/** `error` names a code the contract gives this status (and is `expected` when given). */
export function expectErrorCode(
  body: { error?: unknown },
  status: number,
  expected?: ErrorCode,
): void {
  expect(body.error, JSON.stringify(body)).toBeTypeOf('string');
  expect(
    ERROR_CODES[body.error as ErrorCode]?.status,
    `${String(body.error)} is a ${status} code`,
  ).toBe(status);
  if (expected) expect(body.error).toBe(expected);
}

export function expectUnauthorized(res: TestResponse): void {
  expectError(res, 401, INVALID_CREDENTIALS);
  expect(res.body).toEqual({ code: 401, error: 'unauthorized', message: INVALID_CREDENTIALS });
}

export const FORBIDDEN_MESSAGE = 'This token is not allowed to access this organisation';

export function expectForbidden(res: TestResponse): void {
  expectError(res, 403, FORBIDDEN_MESSAGE, 'forbidden');
}

/** `{code: 404, message: "<Thing> not found"}` (decisions). */
export function expectNotFound(res: TestResponse): void {
  expectError(res, 404, /^\S.* not found$/, 'not_found');
}

/** An id beyond the 32-bit columns: a 400 naming the path parameter (decisions: path ids are 1 to 2147483647), never a 500. */
export function expectInvalidId(res: TestResponse, param: string): void {
  expectValidation(res, [param]);
}

type FieldExpectation =
  string | { field: string; message?: string | RegExp; code?: FieldErrorCode };

/**
 * A 400 with `{code:400, error:'validation_failed', message, errors}` and exactly one entry per
 * faulty field, in any order, each `{field, code, message}` with one of the contract's field codes.
 */
export function expectValidation(res: TestResponse, fields: FieldExpectation[]): void {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(Object.keys(res.body).sort()).toEqual(['code', 'error', 'errors', 'message']);
  expect(res.body.code).toBe(400);
  expect(res.body.error).toBe('validation_failed');
  expect(typeof res.body.message).toBe('string');
  const errors: { field: string; code: FieldErrorCode; message: string }[] = res.body.errors;
  for (const e of errors) {
    expect(Object.keys(e).sort()).toEqual(['code', 'field', 'message']);
    expect(Object.keys(FIELD_ERROR_CODES), JSON.stringify(e)).toContain(e.code);
    expect(typeof e.message).toBe('string');
    expect(e.message.length).toBeGreaterThan(0);
  }
  const wanted = fields.map((f) => (typeof f === 'string' ? { field: f } : f));
  expect(errors.map((e) => e.field).sort(), JSON.stringify(errors)).toEqual(
    wanted.map((w) => w.field).sort(),
  );
  for (const w of wanted) {
    const got = errors.find((e) => e.field === w.field)!;
    if (w.code !== undefined) expect(got.code, JSON.stringify(got)).toBe(w.code);
    if (w.message === undefined) continue;
    if (typeof w.message === 'string') expect(got.message).toBe(w.message);
    else expect(got.message).toMatch(w.message);
  }
}

/**
 * Config for files about resource semantics: the rate limiter is orthogonal to them and costs two
 * committed upserts per request (most of the PostgreSQL time). The files about authentication,
 * tenancy, errors, tokens and concurrency keep it on, as production does.
 */
export const WITHOUT_RATE_LIMITS = { RATE_LIMIT_ENABLED: 'false' } as const;

/**
 * One context for the whole file, created in beforeAll; after every test the app must not have
 * reported any error (a 500). Returns a getter because the context exists only once beforeAll ran.
 */
export function useContext(overrides: Record<string, string> = {}): () => TestContext {
  let ctx: TestContext | undefined;
  const violations: string[] = [];
  beforeAll(async () => {
    ctx = await createTestContext(overrides);
    // Every answer from a documented operation is checked against the contract (status and body).
    const request = ctx.request;
    ctx.request = (async (
      method: string,
      path: string,
      options?: Parameters<TestContext['request']>[2],
    ) => {
      const res = await request(method, path, options);
      const violation = contractViolation(method, path, res.status, res.body);
      if (violation) violations.push(violation);
      return res;
    }) as TestContext['request'];
  });
  afterEach(() => {
    if (!ctx) return;
    const reported = ctx.reportedErrors.splice(0);
    expect(reported.map(String), 'the app reported internal errors (500s)').toEqual([]);
    expect(violations.splice(0), 'answers that do not match the contract').toEqual([]);
  });
  afterAll(async () => {
    await ctx?.cleanup();
  });
  return () => {
    if (!ctx) throw new Error('context not ready');
    return ctx;
  };
}

/**
 * A test for a known server bug: `it.fails` on the dialects where the bug shows (so the suite stays
 * green until it is fixed, then turns red to say "flip me"), a plain `it` elsewhere.
 * The body should assert the CORRECT behaviour. Errors the app reported during it are discarded
 * (they are the bug being documented).
 */
export function itKnownBug(
  name: string,
  dialects: readonly ('sqlite' | 'postgres')[],
  getCtx: () => TestContext,
  fn: () => Promise<void>,
): void {
  // VOXKEY_SHOW_KNOWN_BUGS=1 runs them as plain tests, to see the failures.
  const affected = dialects.includes(TEST_DIALECT) && !process.env.VOXKEY_SHOW_KNOWN_BUGS;
  const body = async () => {
    try {
      await fn();
    } finally {
      if (affected) getCtx().reportedErrors.splice(0);
    }
  };
  if (affected) it.fails(`[KNOWN BUG] ${name}`, body);
  else it(name, body);
}

/** Builds `path?query` from pairs, so repeated keys (filter) and `%` are encoded properly. */
export function withQuery(path: string, params: [string, string | number][]): string {
  const qs = new URLSearchParams(
    params.map(([k, v]): [string, string] => [k, String(v)]),
  ).toString();
  return qs ? `${path}?${qs}` : path;
}
