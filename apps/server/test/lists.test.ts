/**
 * Pagination, filtering and sorting of every list endpoint that the brief names (users, plans,
 * API tokens, predefined texts), checked against an oracle: the whole list is fetched once, and
 * every filtered / sorted / paged answer must equal what the same rule gives when applied in JS.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { TestContext, TestOrg } from './support/context.js';
import { TEST_DIALECT } from './support/database.js';
import {
  expectList,
  expectValidation,
  itKnownBug,
  type ResourceKind,
  useContext,
  WITHOUT_RATE_LIMITS,
  withQuery,
} from './support/expect.js';
import { createText, createToken, orgPath, seedUser, setTimestamps } from './support/fixtures.js';

type Row = Record<string, any>;

interface ListSpec {
  name: string;
  kind: ResourceKind;
  /** Filter fields by type, as the contract declares them. */
  textField: string;
  intField: string;
  boolField?: string;
  sortFields: string[];
  /** Reads a (possibly nested) value of a record for a filter/sort field. */
  value(row: Row, field: string): any;
  path(org: TestOrg): string;
  /** Seeds rows and returns the table name (for timestamps). */
  seed(
    ctx: TestContext,
    org: TestOrg,
  ): Promise<'users' | 'api_tokens' | 'predefined_texts' | 'plans'>;
  /** Like patterns: [pattern, description]. Values are chosen so each matches a proper subset. */
  likes: [string, string][];
}

/** Text values shared by the seeds: prefixes, suffixes, a middle, case and an underscore. */
const WORDS = [
  'alpha-1',
  'alpha-2',
  'Alpha-3',
  'beta-1',
  'beta_x',
  'betax1',
  'gamma-2',
  'alphabet',
  'delta-alpha',
  'omega-9',
  'alpha-10',
  'zeta',
];

const LIKES: [string, string][] = [
  ['alpha%', 'prefix'],
  ['%-1', 'suffix'],
  ['%alpha%', 'anywhere'],
  ['a%1', 'middle'],
  ['Alpha%', 'case-sensitive prefix'],
  ['zeta', 'no wildcard: exact'],
  ['%', 'everything'],
  ['nothing%', 'no match'],
];

const SPECS: ListSpec[] = [
  {
    name: 'users',
    kind: 'user',
    textField: 'external_id',
    intField: 'id',
    boolField: 'is_active',
    sortFields: ['id', 'external_id', 'created_at', 'updated_at'],
    value: (r, f) => r[f],
    path: (org) => orgPath(org.id, '/users'),
    async seed(ctx, org) {
      for (const [i, w] of WORDS.entries()) {
        const u = await seedUser(ctx, org.id, w);
        if (i % 3 === 0)
          await ctx.db.updateTable('users').set({ is_active: 0 }).where('id', '=', u.id).execute();
      }
      return 'users';
    },
    likes: LIKES,
  },
  {
    name: 'API tokens',
    kind: 'token',
    textField: 'friendly_name',
    intField: 'id',
    boolField: 'enabled',
    sortFields: ['id', 'friendly_name', 'created_at'],
    value: (r, f) => r[f],
    path: (org) => orgPath(org.id, '/api-tokens'),
    async seed(ctx, org) {
      for (const [i, w] of WORDS.entries())
        await createToken(
          ctx,
          { friendly_name: w, enabled: i % 3 !== 0 },
          { orgId: org.id, token: org.token },
        );
      return 'api_tokens';
    },
    likes: LIKES,
  },
  {
    name: 'predefined texts',
    kind: 'text',
    textField: 'language',
    intField: 'text_code',
    sortFields: ['id', 'language', 'text_code', 'created_at'],
    value: (r, f) => r[f],
    path: (org) => orgPath(org.id, '/predefined-texts'),
    async seed(ctx, org) {
      const langs = ['en-UK', 'en-US', 'fr-FR', 'de-DE', 'es-ES', 'en-IE'];
      let n = 0;
      for (const language of langs) {
        for (const code of [1, 2]) {
          n += 1;
          await createText(
            ctx,
            { language, text_code: code * 10 + (n % 3), text: `Prompt ${n}` },
            { orgId: org.id, token: org.token },
          );
        }
      }
      return 'predefined_texts';
    },
    likes: [
      ['en-%', 'prefix'],
      ['%-FR', 'suffix'],
      ['%n%', 'anywhere'],
      ['e%E', 'middle'],
      ['EN-%', 'case-sensitive (no match)'],
      ['fr-FR', 'no wildcard: exact'],
      ['%', 'everything'],
    ],
  },
  {
    name: 'plans',
    kind: 'plan',
    textField: 'name',
    intField: 'monthly_calls_included',
    sortFields: ['id', 'name', 'monthly_calls_included', 'created_at'],
    value: (r, f) => (f === 'name' || f === 'monthly_calls_included' ? r.details[f] : r[f]),
    path: () => '/v1/plans',
    async seed(ctx) {
      // Plans have no create endpoint; add a few beside the four seeded ones.
      const now = new Date().toISOString();
      const extra = [
        ['Starter Plus', 7_500],
        ['starter-lite', 1_000],
        ['Growth_2', 75_000],
        ['Pro', 5_000],
      ] as const;
      await ctx.db
        .insertInto('plans')
        .values(
          extra.map(([name, calls]) => ({
            name,
            monthly_calls_included: calls,
            overage_rate_gbp: 0.01,
            trial_days: 30,
            created_at: now,
            updated_at: now,
          })),
        )
        .execute();
      return 'plans';
    },
    likes: [
      ['Starter%', 'prefix'],
      ['%th', 'suffix'],
      ['%r%', 'anywhere'],
      ['S%r', 'middle'],
      ['starter%', 'case-sensitive prefix'],
      ['Pro', 'no wildcard: exact'],
      ['%', 'everything'],
    ],
  },
];

/** SQL LIKE with `%` as the only wildcard, case-sensitive. */
function likeToRegExp(pattern: string): RegExp {
  const escaped = pattern.split('%').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${escaped.join('.*')}$`, 's');
}

const cmp = (a: any, b: any) => (a < b ? -1 : a > b ? 1 : 0);

describe(`lists (${TEST_DIALECT})`, () => {
  // One database for the whole file: each list gets its own organisation (plans are global, and only the plans list reads them).
  const ctx = useContext(WITHOUT_RATE_LIMITS);

  for (const spec of SPECS) {
    describe(`${spec.name} list`, () => {
      let org: TestOrg;
      let all: Row[];
      let timestamps: string[];

      const get = (params: [string, string | number][]) =>
        ctx().request('GET', withQuery(spec.path(org), params), { token: org.token });
      const ids = (rows: Row[]) => rows.map((r) => r.id);
      const byId = (rows: Row[]) => [...rows].sort((a, b) => a.id - b.id);

      beforeAll(async () => {
        const c = ctx();
        org = await c.makeOrg(`Lists${spec.kind}`);
        const table = await spec.seed(c, org);
        // Spread created_at over distinct, known instants (oldest first, by id).
        const rows = expectList(await get([['per_page', 300]]), spec.kind);
        timestamps = rows.map((_, i) => new Date(Date.UTC(2026, 0, 1 + i, 12, 0, 0)).toISOString());
        for (const [i, row] of byId(rows).entries()) {
          await setTimestamps(
            c,
            table,
            row.id,
            timestamps[i]!,
            new Date(Date.UTC(2026, 5, 30 - i, 8, 0, 0)).toISOString(),
          );
        }
        all = byId(expectList(await get([['per_page', 300]]), spec.kind));
        expect(all.length).toBeGreaterThanOrEqual(8);
      });

      it('default: every row, id ascending, X-Total-Count and X-Total-Pages', async () => {
        const res = await get([]);
        const rows = expectList(res, spec.kind, { total: all.length });
        expect(ids(rows)).toEqual(ids(all));
        expect(rows).toEqual(all);
      });

      it('pages of 3 cover everything once, in order; X-Total-Pages = ceil(total/per_page)', async () => {
        const pages = Math.ceil(all.length / 3);
        const seen: number[] = [];
        for (let page = 1; page <= pages; page++) {
          const res = await get([
            ['per_page', 3],
            ['page', page],
          ]);
          const rows = expectList(res, spec.kind, { total: all.length, perPage: 3 });
          expect(rows.length).toBe(page < pages ? 3 : all.length - 3 * (pages - 1));
          seen.push(...ids(rows));
        }
        expect(seen).toEqual(ids(all));
      });

      it('a page past the end is an empty list, headers still give the totals', async () => {
        const res = await get([
          ['per_page', 3],
          ['page', Math.ceil(all.length / 3) + 1],
        ]);
        expect(expectList(res, spec.kind, { total: all.length, perPage: 3 })).toEqual([]);
        const far = await get([['page', 1000]]);
        expect(expectList(far, spec.kind, { total: all.length })).toEqual([]);
      });

      it('per_page 1 and 300 are accepted', async () => {
        expect(
          ids(
            expectList(await get([['per_page', 1]]), spec.kind, { total: all.length, perPage: 1 }),
          ),
        ).toEqual([all[0]!.id]);
        expect(
          expectList(await get([['per_page', 300]]), spec.kind, {
            total: all.length,
            perPage: 300,
          }),
        ).toHaveLength(all.length);
      });

      it.each([
        ['per_page', '301'],
        ['per_page', '0'],
        ['per_page', '-1'],
        ['per_page', 'abc'],
        ['per_page', '2.5'],
        ['page', '0'],
        ['page', '-2'],
        ['page', 'abc'],
        ['page', '1.5'],
      ])('%s=%s → 400 on that field', async (param, value) => {
        expectValidation(await get([[param, value]]), [param]);
      });

      it('per_page and page both wrong → one entry each', async () => {
        expectValidation(
          await get([
            ['per_page', '301'],
            ['page', '0'],
          ]),
          ['per_page', 'page'],
        );
      });

      for (const [pattern, what] of spec.likes) {
        it(`like ${JSON.stringify(pattern)} (${what}) on ${spec.textField}`, async () => {
          const re = likeToRegExp(pattern);
          const expected = all.filter((r) => re.test(spec.value(r, spec.textField)));
          const res = await get([['filter', `${spec.textField}=like:${pattern}`]]);
          expect(ids(expectList(res, spec.kind, { total: expected.length }))).toEqual(
            ids(expected),
          );
        });
      }

      it(`eq on ${spec.textField} (implicit and explicit eq:)`, async () => {
        const target = spec.value(all[1]!, spec.textField);
        const expected = all.filter((r) => spec.value(r, spec.textField) === target);
        expect(
          ids(
            expectList(await get([['filter', `${spec.textField}=${target}`]]), spec.kind, {
              total: expected.length,
            }),
          ),
        ).toEqual(ids(expected));
        expect(
          ids(expectList(await get([['filter', `${spec.textField}=eq:${target}`]]), spec.kind)),
        ).toEqual(ids(expected));
      });

      it(`eq on ${spec.textField} is case-sensitive in both dialects`, async () => {
        for (const row of all.slice(0, 4)) {
          const value: string = spec.value(row, spec.textField);
          for (const variant of [value.toUpperCase(), value.toLowerCase()]) {
            const expected = all.filter((r) => spec.value(r, spec.textField) === variant);
            expect(
              ids(expectList(await get([['filter', `${spec.textField}=${variant}`]]), spec.kind)),
              variant,
            ).toEqual(ids(expected));
          }
        }
      });

      it.each(['gte', 'gt', 'lt', 'lte', 'eq'] as const)('%s on id', async (op) => {
        const pivot = all[Math.floor(all.length / 2)]!.id;
        const test = {
          gte: (v: number) => v >= pivot,
          gt: (v: number) => v > pivot,
          lt: (v: number) => v < pivot,
          lte: (v: number) => v <= pivot,
          eq: (v: number) => v === pivot,
        }[op];
        const expected = all.filter((r) => test(r.id));
        const res = await get([['filter', `id=${op}:${pivot}`]]);
        expect(ids(expectList(res, spec.kind, { total: expected.length }))).toEqual(ids(expected));
      });

      it(`gte and lt on the integer field ${spec.intField}`, async () => {
        const values = all.map((r) => spec.value(r, spec.intField)).sort((a, b) => a - b);
        const pivot = values[Math.floor(values.length / 2)];
        const expected = all.filter((r) => spec.value(r, spec.intField) >= pivot);
        expect(
          ids(expectList(await get([['filter', `${spec.intField}=gte:${pivot}`]]), spec.kind)),
        ).toEqual(ids(expected));
        const below = all.filter((r) => spec.value(r, spec.intField) < pivot);
        expect(
          ids(expectList(await get([['filter', `${spec.intField}=lt:${pivot}`]]), spec.kind)),
        ).toEqual(ids(below));
      });

      it('gte on created_at with a full date-time, a date, and an offset date-time', async () => {
        const pivot = timestamps[4]!;
        const expected = all.filter((r) => r.created_at >= pivot);
        expect(
          ids(
            expectList(await get([['filter', `created_at=gte:${pivot}`]]), spec.kind, {
              total: expected.length,
            }),
          ),
        ).toEqual(ids(expected));
        // A date alone means midnight UTC of that day.
        const day = pivot.slice(0, 10);
        const fromDay = all.filter((r) => r.created_at >= `${day}T00:00:00.000Z`);
        expect(
          ids(expectList(await get([['filter', `created_at=gte:${day}`]]), spec.kind)),
        ).toEqual(ids(fromDay));
        // 14:00+02:00 is 12:00Z, the instant of the pivot row.
        const offset = `${pivot.slice(0, 10)}T14:00:00+02:00`;
        expect(
          ids(expectList(await get([['filter', `created_at=gte:${offset}`]]), spec.kind)),
        ).toEqual(ids(expected));
        const before = all.filter((r) => r.created_at < pivot);
        expect(
          ids(expectList(await get([['filter', `created_at=lt:${pivot}`]]), spec.kind)),
        ).toEqual(ids(before));
      });

      if (spec.boolField) {
        const field = spec.boolField;
        it.each([true, false])(`${field}=%s`, async (value) => {
          const expected = all.filter((r) => r[field] === value);
          expect(expected.length).toBeGreaterThan(0);
          expect(expected.length).toBeLessThan(all.length);
          expect(
            ids(
              expectList(await get([['filter', `${field}=${value}`]]), spec.kind, {
                total: expected.length,
              }),
            ),
          ).toEqual(ids(expected));
          expect(
            ids(expectList(await get([['filter', `${field}=eq:${value}`]]), spec.kind)),
          ).toEqual(ids(expected));
        });

        it(`${field} accepts only true or false, and no ordering operator`, async () => {
          expectValidation(await get([['filter', `${field}=1`]]), ['filter']);
          expectValidation(await get([['filter', `${field}=yes`]]), ['filter']);
          expectValidation(await get([['filter', `${field}=gte:true`]]), ['filter']);
          expectValidation(await get([['filter', `${field}=like:t%`]]), ['filter']);
        });
      }

      it('several conditions are ANDed', async () => {
        const pivot = all[2]!.id;
        const [pattern] = spec.likes[0]!;
        const re = likeToRegExp(pattern);
        const expected = all.filter((r) => r.id >= pivot && re.test(spec.value(r, spec.textField)));
        const res = await get([
          ['filter', `id=gte:${pivot}`],
          ['filter', `${spec.textField}=like:${pattern}`],
        ]);
        expect(ids(expectList(res, spec.kind, { total: expected.length }))).toEqual(ids(expected));
        // Three conditions, one of them excluding everything.
        const none = await get([
          ['filter', `id=gte:${pivot}`],
          ['filter', `${spec.textField}=like:${pattern}`],
          ['filter', `id=lt:${pivot}`],
        ]);
        expect(expectList(none, spec.kind, { total: 0 })).toEqual([]);
      });

      it('no match: empty results, X-Total-Pages 0 and X-Total-Count 0', async () => {
        const res = await get([['filter', 'id=gt:987654']]);
        expect(expectList(res, spec.kind)).toEqual([]);
        expect(res.headers.get('x-total-pages')).toBe('0');
        expect(res.headers.get('x-total-count')).toBe('0');
      });

      it('filters combine with paging (X-Total-Pages counts the filtered rows)', async () => {
        const re = likeToRegExp('%');
        const expected = all.filter(
          (r) => r.id > all[0]!.id && re.test(spec.value(r, spec.textField)),
        );
        const res = await get([
          ['filter', `id=gt:${all[0]!.id}`],
          ['per_page', 2],
          ['page', 2],
        ]);
        expect(ids(expectList(res, spec.kind, { total: expected.length, perPage: 2 }))).toEqual(
          ids(expected.slice(2, 4)),
        );
      });

      it.each([
        ['unknown field', 'nope=1'],
        ['unknown field with operator', 'nope=gte:1'],
        ['unknown operator', 'id=between:1'],
        ['unknown operator on a text field', `${spec.textField}=foo:bar`],
        ['like on a non-text field', 'id=like:1%'],
        ['like on created_at', 'created_at=like:2026%'],
        ['non-integer value for id', 'id=gte:abc'],
        ['non-date value for created_at', 'created_at=gte:yesterday'],
        ['no = sign', 'id'],
        ['empty field name', '=1'],
      ])('%s → 400 on field filter', async (_name, filter) => {
        const res = await get([['filter', filter]]);
        expectValidation(res, ['filter']);
      });

      it('the 400 names the unknown field or operator', async () => {
        const field = await get([['filter', 'favourite_colour=red']]);
        expectValidation(field, ['filter']);
        expect(field.body.errors[0].message).toContain('favourite_colour');
        const op = await get([['filter', 'id=between:1']]);
        expect(op.body.errors[0].message).toContain('between');
      });

      it('two bad filters → two entries on filter', async () => {
        const res = await get([
          ['filter', 'nope=1'],
          ['filter', 'id=foo:1'],
        ]);
        expect(res.status).toBe(400);
        expect(res.body.errors.map((e: any) => e.field)).toEqual(['filter', 'filter']);
      });

      for (const field of spec.sortFields) {
        it.each(['asc', 'desc'] as const)(
          `sort ${field}:%s (ties by id ascending)`,
          async (direction) => {
            const sign = direction === 'asc' ? 1 : -1;
            const expected = [...all].sort(
              (a, b) => sign * cmp(spec.value(a, field), spec.value(b, field)) || a.id - b.id,
            );
            const res = await get([['sort', `${field}:${direction}`]]);
            expect(ids(expectList(res, spec.kind, { total: all.length }))).toEqual(ids(expected));
          },
        );
      }

      it('sort with paging: page 2 of a descending sort', async () => {
        const expected = [...all].sort((a, b) => b.id - a.id).slice(3, 6);
        const res = await get([
          ['sort', 'id:desc'],
          ['per_page', 3],
          ['page', 2],
        ]);
        expect(ids(expectList(res, spec.kind))).toEqual(ids(expected));
      });

      it.each(['nope:asc', 'id', 'id:up', 'id:ASC', ':asc', 'id:asc,created_at:desc'])(
        'sort=%s → 400 on field sort',
        async (sort) => {
          expectValidation(await get([['sort', sort]]), ['sort']);
        },
      );

      it('bad filter and bad sort together → one entry each', async () => {
        expectValidation(
          await get([
            ['filter', 'nope=1'],
            ['sort', 'nope:asc'],
          ]),
          ['filter', 'sort'],
        );
      });

      it('every faulty query parameter is reported at once (per_page, filter and sort → three entries)', async () => {
        expectValidation(
          await get([
            ['per_page', '301'],
            ['filter', 'nope=1'],
            ['sort', 'nope:asc'],
          ]),
          ['per_page', 'filter', 'sort'],
        );
      });

      it.each([
        'id=gte:99999999999',
        'id=lt:-2147483649',
        `${spec.intField}=2147483648`,
        'id=999999999999999',
      ])('integer filter %s beyond 32 bits → 400 on filter (never 500)', async (filter) => {
        expectValidation(await get([['filter', filter]]), ['filter']);
      });

      it('integer filter values at the 32-bit limits are accepted', async () => {
        expectList(await get([['filter', 'id=lte:2147483647']]), spec.kind, { total: all.length });
        expectList(await get([['filter', `${spec.intField}=gte:-2147483648`]]), spec.kind, {
          total: all.length,
        });
      });

      it('at most 20 filter conditions: 20 are answered, 21 are a 400 on filter', async () => {
        const conditions = (n: number): [string, string][] =>
          Array.from({ length: n }, () => ['filter', 'id=gte:1']);
        expectList(await get(conditions(20)), spec.kind, { total: all.length });
        expectValidation(await get(conditions(21)), ['filter']);
      });
    });
  }

  describe('behaviour does not depend on the PostgreSQL cluster locale', () => {
    // The test databases use C.UTF-8 (byte order, like SQLite). Many production clusters are
    // initialised with an en_US locale; text sorts and comparisons must not change with it.
    const WORDS_BY_BYTES = ['Alpha-3', 'Zeta', 'alpha-1', 'alpha_2', 'beta-1', 'beta_x', 'betax1'];
    const run = async () => {
      const { createLocaleDatabase } = await import('./support/locale-database.js');
      const { createApp } = await import('../src/app.js');
      const { signUpOrganisation } = await import('../src/services/organisations.js');
      const { insertUser } = await import('../src/repositories/users.js');
      const locale = await createLocaleDatabase('en-US');
      try {
        const reported: unknown[] = [];
        const app = createApp(
          { ...ctx().deps, database: locale.database },
          { reportError: (err) => reported.push(err) },
        );
        const { organisation, token } = await signUpOrganisation(
          locale.database.db,
          { name: 'Locale', email: 'locale@example.com' },
          { sealer: ctx().deps.sealer },
        );
        for (const w of [...WORDS_BY_BYTES].reverse())
          await insertUser(locale.database.db, organisation.id, w);
        const list = async (params: [string, string][]) => {
          const res = await app.request(withQuery(orgPath(organisation.id, '/users'), params), {
            headers: { authorization: `Bearer ${token.bearer}` },
          });
          expect(res.status).toBe(200);
          return ((await res.json()) as { results: { external_id: string }[] }).results.map(
            (u) => u.external_id,
          );
        };
        expect(reported).toEqual([]);
        expect(await list([['sort', 'external_id:asc']])).toEqual(WORDS_BY_BYTES);
        // Without a sort the list is in id order (inserted in reverse), so compare the set.
        expect((await list([['filter', 'external_id=lt:alpha-1']])).sort()).toEqual([
          'Alpha-3',
          'Zeta',
        ]);
      } finally {
        await locale.cleanup();
      }
    };
    if (TEST_DIALECT === 'postgres')
      it('sort and lt/gt on text fields follow byte order under an en-US (ICU) database', run);
    else
      it.skip(
        'sort and lt/gt on text fields follow byte order under an en-US (ICU) database (PostgreSQL only)',
        run,
      );
  });

  describe('timestamp filter values', () => {
    it('a date-time without an offset means UTC, whatever the server time zone', async () => {
      const c = ctx();
      const org = await c.makeOrg('TimeZone');
      for (const [i, at] of [
        '2026-01-05T11:00:00.000Z',
        '2026-01-05T13:00:00.000Z',
        '2026-01-05T18:00:00.000Z',
      ].entries()) {
        const u = await seedUser(c, org.id, `tz-${i}`);
        await setTimestamps(c, 'users', u.id, at);
      }
      const q = async (value: string) =>
        (
          await c.request(
            'GET',
            withQuery(orgPath(org.id, '/users'), [['filter', `created_at=gte:${value}`]]),
            { token: org.token },
          )
        ).body.results.map((u: any) => u.external_id);
      const original = process.env.TZ;
      process.env.TZ = 'America/New_York';
      try {
        expect(await q('2026-01-05T12:00:00Z')).toEqual(['tz-1', 'tz-2']);
        expect(await q('2026-01-05T12:00:00')).toEqual(['tz-1', 'tz-2']);
      } finally {
        if (original === undefined) delete process.env.TZ;
        else process.env.TZ = original;
      }
    });
  });

  describe('like treats only % as a wildcard', () => {
    it('an underscore in a like pattern matches only an underscore', async () => {
      const c = ctx();
      const org = await c.makeOrg('Underscore');
      for (const id of ['cust_1', 'cust-1', 'custX1', 'cust_10']) await seedUser(c, org.id, id);
      const res = await c.request(
        'GET',
        withQuery(orgPath(org.id, '/users'), [['filter', 'external_id=like:cust_1%']]),
        { token: org.token },
      );
      expect(res.body.results.map((u: any) => u.external_id)).toEqual(['cust_1', 'cust_10']);
    });

    it('a value that itself contains % or : can be matched exactly with eq:', async () => {
      const c = ctx();
      const org = await c.makeOrg('Literal');
      for (const id of ['100%', '100', 'urn:x:1', 'gte:5']) await seedUser(c, org.id, id);
      const q = (f: string) =>
        c.request('GET', withQuery(orgPath(org.id, '/users'), [['filter', f]]), {
          token: org.token,
        });
      expect(
        (await q('external_id=eq:urn:x:1')).body.results.map((u: any) => u.external_id),
      ).toEqual(['urn:x:1']);
      expect((await q('external_id=eq:gte:5')).body.results.map((u: any) => u.external_id)).toEqual(
        ['gte:5'],
      );
      expect((await q('external_id=100%')).body.results.map((u: any) => u.external_id)).toEqual([
        '100%',
      ]);
    });
  });
});
