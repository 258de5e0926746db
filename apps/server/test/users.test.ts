import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { claimJob } from '../src/repositories/jobs.js';
import { insertUser } from '../src/repositories/users.js';
import { insertSample, insertVoiceprint } from '../src/repositories/voiceprints.js';
import { processJob } from '../src/workers/job-processor.js';
import { TEST_DIALECT } from './support/database.js';
import { fakeAnalyzer } from './support/fake-engine.js';
import {
  expectError,
  expectInvalidId,
  expectList,
  expectNotFound,
  expectResource,
  expectValidation,
  UNKNOWN_FIELD,
  useContext,
  WITHOUT_RATE_LIMITS,
  withQuery,
} from './support/expect.js';
import { orgPath, seedDevice, seedUser, silentWav, UNKNOWN_ID } from './support/fixtures.js';

describe(`users and devices (${TEST_DIALECT})`, () => {
  const ctx = useContext(WITHOUT_RATE_LIMITS);

  describe('users', () => {
    const usersPath = (rest = '') => orgPath(ctx().orgA.id, `/users${rest}`);

    describe('GET /organisations/{org_id}/users', () => {
      it('{results: [...]} with X-Total-Pages, only this organisation', async () => {
        const c = ctx();
        const org = await c.makeOrg('UsersList');
        const a = await seedUser(c, org.id, 'customer-1');
        const b = await seedUser(c, org.id, 'customer-2');
        await seedUser(c, c.orgB.id, 'customer-1');
        const res = await c.request('GET', orgPath(org.id, '/users'), { token: org.token });
        const rows = expectList(res, 'user', { total: 2 });
        expect(rows.map((u) => u.id)).toEqual([a.id, b.id]);
        expect(rows[0]).toEqual({
          id: a.id,
          org_id: org.id,
          external_id: 'customer-1',
          is_active: true,
          created_at: a.created_at,
          updated_at: a.updated_at,
        });
      });

      it('each item of the list (written as JSON by the database) is the user GET returns, inactive and odd external ids included', async () => {
        const c = ctx();
        const org = await c.makeOrg('UsersListShape');
        const seeded = [];
        for (const externalId of [
          'plain',
          'quote " backslash \\ tab \t',
          'émoji 🎙 and ünïcode',
          '%_like_chars_%',
        ]) {
          seeded.push(await seedUser(c, org.id, externalId));
        }
        const inactive = await c.request('PATCH', orgPath(org.id, `/users/${seeded[1]!.id}`), {
          token: org.token,
          body: { is_active: false },
        });
        expect(inactive.status).toBe(200);
        const rows = expectList(
          await c.request('GET', orgPath(org.id, '/users'), { token: org.token }),
          'user',
          { total: seeded.length },
        );
        expect(rows.map((u) => u.is_active)).toEqual([true, false, true, true]);
        for (const row of rows) {
          const single = await c.request('GET', orgPath(org.id, `/users/${row.id}`), {
            token: org.token,
          });
          expect(single.status).toBe(200);
          expect(row).toEqual(single.body);
        }
        const sorted = expectList(
          await c.request(
            'GET',
            withQuery(orgPath(org.id, '/users'), [
              ['sort', 'external_id:desc'],
              ['per_page', 3],
              ['page', 1],
            ]),
            { token: org.token },
          ),
          'user',
          {
            total: seeded.length,
            perPage: 3,
          },
        );
        expect(sorted.map((u) => u.external_id)).toEqual(
          seeded
            .map((u) => u.external_id)
            .sort()
            .reverse()
            .slice(0, 3),
        );
      });

      it('per_page defaults to 100: 101 users make two pages', async () => {
        const c = ctx();

        const org = await c.makeOrg('HundredAndOne');

        const now = new Date().toISOString();

        await c.db

          .insertInto('users')

          .values(
            Array.from({ length: 101 }, (_, i) => ({
              org_id: org.id,
              external_id: `bulk-${i}`,
              is_active: 1,
              created_at: now,
              updated_at: now,
            })),
          )

          .execute();

        const first = await c.request('GET', orgPath(org.id, '/users'), { token: org.token });

        expect(expectList(first, 'user', { total: 101, perPage: 100 })).toHaveLength(100);

        expect(first.headers.get('x-total-pages')).toBe('2');

        const second = await c.request('GET', orgPath(org.id, '/users?page=2'), {
          token: org.token,
        });

        expect(expectList(second, 'user', { total: 101, perPage: 100 })).toHaveLength(1);

        const all = await c.request('GET', orgPath(org.id, '/users?per_page=300'), {
          token: org.token,
        });

        expect(expectList(all, 'user', { total: 101, perPage: 300 })).toHaveLength(101);

        expect(all.headers.get('x-total-pages')).toBe('1');
      });

      it('an organisation with no users: empty list, X-Total-Pages 0', async () => {
        const c = ctx();
        const org = await c.makeOrg('NoUsers');
        const res = await c.request('GET', orgPath(org.id, '/users'), { token: org.token });
        expect(expectList(res, 'user', { total: 0 })).toEqual([]);
        expect(res.headers.get('x-total-pages')).toBe('0');
      });

      it('find a user by external_id (filter external_id=<value>), stored exactly as given', async () => {
        const c = ctx();
        const odd = ' Ünïcode / spaces & symbols ?=#% ';
        const u = await seedUser(c, c.orgA.id, odd);
        const res = await c.request(
          'GET',
          withQuery(usersPath(), [['filter', `external_id=${odd}`]]),
        );
        expect(expectList(res, 'user', { total: 1 }).map((r) => r.id)).toEqual([u.id]);
        expect(res.body.results[0].external_id).toBe(odd);
      });
    });

    describe('GET /organisations/{org_id}/users/{user_id}', () => {
      it('the user record', async () => {
        const u = await seedUser(ctx(), ctx().orgA.id, 'get-me');
        const res = await ctx().request('GET', usersPath(`/${u.id}`));
        expect(res.status).toBe(200);
        expectResource(res.body, 'user');
        expect(res.body).toMatchObject({
          id: u.id,
          org_id: ctx().orgA.id,
          external_id: 'get-me',
          is_active: true,
        });
      });

      it("404 {code, message} for an unknown id; another organisation's user is 404 too", async () => {
        expectNotFound(await ctx().request('GET', usersPath(`/${UNKNOWN_ID}`)));
        const other = await seedUser(ctx(), ctx().orgB.id, 'b-user');
        const res = await ctx().request('GET', usersPath(`/${other.id}`));
        expectNotFound(res);
        expect(JSON.stringify(res.body)).not.toContain('b-user');
      });

      it('the path id is the service id, not external_id', async () => {
        await seedUser(ctx(), ctx().orgA.id, 'by-external');
        expectValidation(await ctx().request('GET', usersPath('/by-external')), ['user_id']);
      });

      it.each(['abc', '0', '-3', '1.0', '0x10'])('user_id %s → 400 on user_id', async (bad) => {
        expectValidation(await ctx().request('GET', usersPath(`/${bad}`)), ['user_id']);
      });

      it('ids beyond the 32-bit columns (2^31, 15 digits) → 400 on user_id, never 500', async () => {
        for (const id of ['2147483648', '999999999999999'])
          expectInvalidId(await ctx().request('GET', usersPath(`/${id}`)), 'user_id');
        expectNotFound(await ctx().request('GET', usersPath('/2147483647')));
      });
    });

    describe('PATCH /organisations/{org_id}/users/{user_id}', () => {
      it('is_active false, then true; the record is returned each time', async () => {
        const c = ctx();
        const u = await seedUser(c, c.orgA.id, 'toggle');
        await new Promise((r) => setTimeout(r, 5));
        const off = await c.request('PATCH', usersPath(`/${u.id}`), { body: { is_active: false } });
        expect(off.status).toBe(200);
        expectResource(off.body, 'user');
        expect(off.body).toMatchObject({
          id: u.id,
          external_id: 'toggle',
          is_active: false,
          created_at: u.created_at,
        });
        expect(Date.parse(off.body.updated_at)).toBeGreaterThan(Date.parse(u.updated_at));
        expect((await c.request('GET', usersPath(`/${u.id}`))).body.is_active).toBe(false);
        expect(
          expectList(
            await c.request(
              'GET',
              withQuery(usersPath(), [
                ['filter', 'external_id=toggle'],
                ['filter', 'is_active=false'],
              ]),
            ),
            'user',
          ),
        ).toHaveLength(1);

        const on = await c.request('PATCH', usersPath(`/${u.id}`), { body: { is_active: true } });
        expect(on.status).toBe(200);
        expect(on.body.is_active).toBe(true);
        expect((await c.request('GET', usersPath(`/${u.id}`))).body.is_active).toBe(true);
      });

      it('is_active defaults to true when omitted', async () => {
        const c = ctx();
        const u = await seedUser(c, c.orgA.id, 'default-true');
        await c.request('PATCH', usersPath(`/${u.id}`), { body: { is_active: false } });
        const res = await c.request('PATCH', usersPath(`/${u.id}`), { body: {} });
        expect(res.status).toBe(200);
        expect(res.body.is_active).toBe(true);
      });

      it('setting the same value again is fine (idempotent)', async () => {
        const u = await seedUser(ctx(), ctx().orgA.id, 'idem');
        for (let i = 0; i < 2; i++) {
          const res = await ctx().request('PATCH', usersPath(`/${u.id}`), {
            body: { is_active: false },
          });
          expect(res.status).toBe(200);
          expect(res.body.is_active).toBe(false);
        }
      });

      it('wrong types and unknown fields', async () => {
        const u = await seedUser(ctx(), ctx().orgA.id, 'bad-patch');
        for (const value of ['false', 0, 1, null, 'yes']) {
          expectValidation(
            await ctx().request('PATCH', usersPath(`/${u.id}`), { body: { is_active: value } }),
            ['is_active'],
          );
        }
        expectValidation(
          await ctx().request('PATCH', usersPath(`/${u.id}`), {
            body: { is_active: true, external_id: 'renamed' },
          }),
          [{ field: 'external_id', message: UNKNOWN_FIELD }],
        );
        // Nothing changed.
        expect((await ctx().request('GET', usersPath(`/${u.id}`))).body).toMatchObject({
          external_id: 'bad-patch',
          is_active: true,
        });
      });

      it("404 for an unknown user, and for another organisation's user (which stays active)", async () => {
        expectNotFound(
          await ctx().request('PATCH', usersPath(`/${UNKNOWN_ID}`), { body: { is_active: false } }),
        );
        const other = await seedUser(ctx(), ctx().orgB.id, 'b-active');
        expectNotFound(
          await ctx().request('PATCH', usersPath(`/${other.id}`), { body: { is_active: false } }),
        );
        const b = await ctx().request('GET', orgPath(ctx().orgB.id, `/users/${other.id}`), {
          token: ctx().orgB.token,
        });
        expect(b.body.is_active).toBe(true);
      });
    });

    describe('DELETE /organisations/{org_id}/users/{user_id}', () => {
      it('200 with the record as it was, devices go with it, external_id can be used again', async () => {
        const c = ctx();
        const u = await seedUser(c, c.orgA.id, 'delete-me');
        await c.request('PATCH', usersPath(`/${u.id}`), { body: { is_active: false } });
        const before = (await c.request('GET', usersPath(`/${u.id}`))).body;
        const d1 = await seedDevice(c, {
          orgId: c.orgA.id,
          userId: u.id,
          fingerprint: 'phone',
          type: 1,
        });
        const d2 = await seedDevice(c, {
          orgId: c.orgA.id,
          userId: u.id,
          fingerprint: 'laptop',
          type: 2,
        });
        const voiceprint = await insertVoiceprint(c.db, {
          orgId: c.orgA.id,
          userId: u.id,
          modelId: 'test-model',
          enrolmentFingerprint: 'phone',
          qualityScore: 0.9,
        });
        for (let i = 0; i < 3; i++)
          await insertSample(c.db, voiceprint, {
            modelId: 'test-model',
            sealedEmbedding: `sealed-${i}`,
            sealVersion: 2,
            qualityScore: 0.9,
          });
        const keep = await seedUser(c, c.orgA.id, 'keep-me');
        const d3 = await seedDevice(c, { orgId: c.orgA.id, userId: keep.id, fingerprint: 'phone' });
        expect((await c.request('GET', orgPath(c.orgA.id, `/devices/${d1.id}`))).status).toBe(200);

        const res = await c.request('DELETE', usersPath(`/${u.id}`));
        expect(res.status).toBe(200);
        expectResource(res.body, 'user');
        expect(res.body).toEqual(before);
        expect(res.body.is_active).toBe(false);

        expectNotFound(await c.request('GET', usersPath(`/${u.id}`)));
        expectNotFound(await c.request('DELETE', usersPath(`/${u.id}`)));
        expectNotFound(
          await c.request('PATCH', usersPath(`/${u.id}`), { body: { is_active: true } }),
        );
        for (const d of [d1, d2])
          expectNotFound(await c.request('GET', orgPath(c.orgA.id, `/devices/${d.id}`)));
        const left = await c.db
          .selectFrom('devices')
          .select('id')
          .where('user_id', '=', u.id)
          .execute();
        expect(left).toEqual([]);
        // The voiceprint is erased with the user.
        expect(
          await c.db.selectFrom('voiceprints').select('id').where('user_id', '=', u.id).execute(),
        ).toEqual([]);
        expect(
          await c.db
            .selectFrom('voiceprint_samples')
            .select('id')
            .where('user_id', '=', u.id)
            .execute(),
        ).toEqual([]);
        // Other users and their devices are untouched.
        expect((await c.request('GET', usersPath(`/${keep.id}`))).status).toBe(200);
        expect((await c.request('GET', orgPath(c.orgA.id, `/devices/${d3.id}`))).status).toBe(200);
        // The external_id may be enrolled again as a new user.
        const again = await insertUser(c.db, c.orgA.id, 'delete-me');
        expect(again.id).not.toBe(u.id);
        expect(
          expectList(
            await c.request('GET', withQuery(usersPath(), [['filter', 'external_id=delete-me']])),
            'user',
          ).map((x) => x.id),
        ).toEqual([again.id]);
      });

      it("404 for an unknown id and for another organisation's user (which survives)", async () => {
        const c = ctx();
        expectNotFound(await c.request('DELETE', usersPath(`/${UNKNOWN_ID}`)));
        const other = await seedUser(c, c.orgB.id, 'b-survivor');
        expectNotFound(await c.request('DELETE', usersPath(`/${other.id}`)));
        expect(
          (
            await c.request('GET', orgPath(c.orgB.id, `/users/${other.id}`), {
              token: c.orgB.token,
            })
          ).status,
        ).toBe(200);
      });
    });
  });

  describe('devices', () => {
    it('GET /organisations/{org_id}/devices/{device_id}: the device record', async () => {
      const c = ctx();
      const u = await seedUser(c, c.orgA.id, 'device-owner');
      const usedAt = '2026-11-20T10:11:12.123Z';
      const d = await seedDevice(c, {
        orgId: c.orgA.id,
        userId: u.id,
        fingerprint: 'a1b2c3d4',
        type: 3,
        usedAt,
      });
      const res = await c.request('GET', orgPath(c.orgA.id, `/devices/${d.id}`));
      expect(res.status).toBe(200);
      expectResource(res.body, 'device');
      expect(res.body).toEqual({
        id: d.id,
        user_id: u.id,
        fingerprint: 'a1b2c3d4',
        type: 3,
        last_used: usedAt,
        created_at: usedAt,
        updated_at: usedAt,
      });
    });

    it.each([0, 1, 2, 3])('device type %i is returned as an integer', async (type) => {
      const c = ctx();
      const u = await seedUser(c, c.orgA.id, `type-${type}`);
      const d = await seedDevice(c, { orgId: c.orgA.id, userId: u.id, type });
      const res = await c.request('GET', orgPath(c.orgA.id, `/devices/${d.id}`));
      expect(res.body.type).toBe(type);
    });

    it("a request without device_type keeps a known device's type (a new device gets 0); one with device_type changes it", async () => {
      const c = ctx();
      await c.db
        .updateTable('organisation_settings')
        .set({ callback_url: 'https://hooks.example.com/v' })
        .where('org_id', '=', c.orgA.id)
        .execute();
      const externalId = `device-type-${randomUUID()}`;
      const fingerprint = `fp-${randomUUID()}`;
      /** Sends the request, runs its job and answers the type of the device it recorded. */
      const submit = async (
        kind: 'enrollments' | 'verifications',
        device: { device_fingerprint: string; device_type?: number },
      ) => {
        const res = await c.request('POST', orgPath(c.orgA.id, `/${kind}`), {
          body: {
            voice_data: silentWav(),
            request_uuid: randomUUID(),
            external_id: externalId,
            ...device,
          },
        });
        expect(res.status).toBe(202);
        const job = await claimJob(c.db, c.database.dialect, 'w', 60_000);
        expect((await processJob(c.deps, fakeAnalyzer(), job!, 'w')).result).toBe('completed');
        const row = await c.db
          .selectFrom('devices')
          .select('type')
          .where('fingerprint', '=', device.device_fingerprint)
          .executeTakeFirstOrThrow();
        return row.type;
      };

      expect(await submit('enrollments', { device_fingerprint: fingerprint, device_type: 1 })).toBe(
        1,
      );
      expect(await submit('verifications', { device_fingerprint: fingerprint })).toBe(1);
      expect(
        await submit('verifications', { device_fingerprint: fingerprint, device_type: 2 }),
      ).toBe(2);
      expect(await submit('verifications', { device_fingerprint: fingerprint })).toBe(2);
      expect(await submit('verifications', { device_fingerprint: `fp-${randomUUID()}` })).toBe(0);
    });

    it("404 for an unknown device and for another organisation's device", async () => {
      const c = ctx();
      expectNotFound(await c.request('GET', orgPath(c.orgA.id, `/devices/${UNKNOWN_ID}`)));
      const bu = await seedUser(c, c.orgB.id, 'b-device-owner');
      const bd = await seedDevice(c, {
        orgId: c.orgB.id,
        userId: bu.id,
        fingerprint: 'secret-b-fp',
      });
      const res = await c.request('GET', orgPath(c.orgA.id, `/devices/${bd.id}`));
      expectNotFound(res);
      expect(JSON.stringify(res.body)).not.toContain('secret-b-fp');
    });

    it('non-numeric device id → 400', async () => {
      expectValidation(await ctx().request('GET', orgPath(ctx().orgA.id, '/devices/abc')), [
        'device_id',
      ]);
    });

    it('there is no device list, create, change or delete route', async () => {
      const c = ctx();
      const u = await seedUser(c, c.orgA.id, 'no-routes');
      const d = await seedDevice(c, { orgId: c.orgA.id, userId: u.id });
      expectError(await c.request('GET', orgPath(c.orgA.id, '/devices')), 404);
      expectError(
        await c.request('POST', orgPath(c.orgA.id, '/devices'), {
          body: { user_id: u.id, fingerprint: 'x', type: 1 },
        }),
        404,
      );
      expectError(await c.request('DELETE', orgPath(c.orgA.id, `/devices/${d.id}`)), 404);
      expectError(
        await c.request('PATCH', orgPath(c.orgA.id, `/devices/${d.id}`), { body: { type: 2 } }),
        404,
      );
      expect((await c.request('GET', orgPath(c.orgA.id, `/devices/${d.id}`))).status).toBe(200);
    });
  });
});
