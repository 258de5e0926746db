import { beforeAll, describe, expect, it } from 'vitest';
import { TEST_DIALECT } from './support/database.js';
import {
  expectResource,
  expectValidation,
  itKnownBug,
  REQUIRED,
  UNKNOWN_FIELD,
  useContext,
  WITHOUT_RATE_LIMITS,
} from './support/expect.js';
import { orgPath, UNKNOWN_ID } from './support/fixtures.js';

describe(`organisation and settings (${TEST_DIALECT})`, () => {
  const ctx = useContext(WITHOUT_RATE_LIMITS);

  describe('organisation', () => {
    it('GET /organisations/{org_id}: the organisation record', async () => {
      const c = ctx();
      const res = await c.request('GET', orgPath(c.orgA.id));
      expect(res.status).toBe(200);
      expectResource(res.body, 'organisation');
      expect(res.body).toMatchObject({
        id: c.orgA.id,
        name: 'OrgA',
        email: 'orga@example.com',
        address: null,
        phone_number: null,
        vat: null,
        vies: null,
      });
    });

    describe('PATCH /organisations/{org_id}', () => {
      it('updates every field and returns the full record', async () => {
        const c = ctx();
        const org = await c.makeOrg('Patchable');
        const before = (await c.request('GET', orgPath(org.id), { token: org.token })).body;
        await new Promise((r) => setTimeout(r, 5));
        const body = {
          name: 'Acme Ltd',
          address: '1 High Street, London SW1A 1AA, United Kingdom',
          email: 'billing@acme.example',
          phone_number: '+442071234567',
          vat: 'GB123456789',
          vies: 'GB123456789',
        };
        const res = await c.request('PATCH', orgPath(org.id), { token: org.token, body });
        expect(res.status).toBe(200);
        expectResource(res.body, 'organisation');
        expect(res.body).toEqual({
          id: org.id,
          ...body,
          created_at: before.created_at,
          updated_at: res.body.updated_at,
        });
        expect(Date.parse(res.body.updated_at)).toBeGreaterThan(Date.parse(before.updated_at));
        expect((await c.request('GET', orgPath(org.id), { token: org.token })).body).toEqual(
          res.body,
        );
      });

      it('fields left out stay unchanged; null clears an optional field', async () => {
        const c = ctx();
        const org = await c.makeOrg('Partial');
        const patch = (body: unknown) =>
          c.request('PATCH', orgPath(org.id), { token: org.token, body });
        await patch({ address: 'Somewhere 1', vat: 'GB1', phone_number: '+15551234567' });
        const res = await patch({ vat: 'GB2' });
        expect(res.body).toMatchObject({
          name: 'Partial',
          email: 'partial@example.com',
          address: 'Somewhere 1',
          vat: 'GB2',
          phone_number: '+15551234567',
          vies: null,
        });
        const cleared = await patch({ address: null, phone_number: null });
        expect(cleared.status).toBe(200);
        expect(cleared.body).toMatchObject({ address: null, phone_number: null, vat: 'GB2' });
        const empty = await patch({});
        expect(empty.status).toBe(200);
        expect(empty.body).toMatchObject({ name: 'Partial', vat: 'GB2', address: null });
      });

      it.each([
        ['email not an email', { email: 'not-an-email' }, ['email']],
        ['email null (required on the organisation)', { email: null }, ['email']],
        ['email as a number', { email: 5 }, ['email']],
        ['name empty', { name: '' }, ['name']],
        ['name blank', { name: '   ' }, ['name']],
        ['name null', { name: null }, ['name']],
        ['phone without +', { phone_number: '02071234567' }, ['phone_number']],
        ['phone with spaces', { phone_number: '+44 20 7123 4567' }, ['phone_number']],
        ['phone starting +0', { phone_number: '+0441234567' }, ['phone_number']],
        ['phone with 16 digits', { phone_number: '+1234567890123456' }, ['phone_number']],
        ['phone just +', { phone_number: '+' }, ['phone_number']],
        ['phone as a number', { phone_number: 442071234567 }, ['phone_number']],
        ['vat as a number', { vat: 123 }, ['vat']],
        ['address as an object', { address: { line1: 'x' } }, ['address']],
        [
          'several at once',
          { email: 'x', phone_number: 'y', name: '' },
          ['email', 'phone_number', 'name'],
        ],
      ])('%s → 400', async (_name, body, fields) => {
        const c = ctx();
        const res = await c.request('PATCH', orgPath(c.orgA.id), { body });
        expectValidation(res, fields);
        expect((await c.request('GET', orgPath(c.orgA.id))).body).toMatchObject({
          name: 'OrgA',
          email: 'orga@example.com',
        });
      });

      it('length bounds: name 1-200, address up to 500, vat and vies up to 32', async () => {
        const c = ctx();
        const org = await c.makeOrg('Bounds');
        const patch = (body: unknown) =>
          c.request('PATCH', orgPath(org.id), { token: org.token, body });
        const atLimit = {
          name: 'n'.repeat(200),
          address: 'a'.repeat(500),
          vat: 'v'.repeat(32),
          vies: 'w'.repeat(32),
        };
        const ok = await patch(atLimit);
        expect(ok.status, JSON.stringify(ok.body)).toBe(200);
        expect(ok.body).toMatchObject(atLimit);
        expectValidation(
          await patch({
            name: 'n'.repeat(201),
            address: 'a'.repeat(501),
            vat: 'v'.repeat(33),
            vies: 'w'.repeat(33),
          }),
          ['name', 'address', 'vat', 'vies'],
        );
        expect((await c.request('GET', orgPath(org.id), { token: org.token })).body).toMatchObject(
          atLimit,
        );
      });

      it('unknown fields (including read-only ones) → 400, one entry each', async () => {
        const c = ctx();
        const res = await c.request('PATCH', orgPath(c.orgA.id), {
          body: { name: 'X', id: 99, created_at: '2020-01-01T00:00:00Z', website: 'x' },
        });
        expectValidation(res, [
          { field: 'id', message: UNKNOWN_FIELD },
          { field: 'created_at', message: UNKNOWN_FIELD },
          { field: 'website', message: UNKNOWN_FIELD },
        ]);
        expect((await c.request('GET', orgPath(c.orgA.id))).body.name).toBe('OrgA');
      });
    });
  });

  describe('organisation settings', () => {
    const settingsPath = () => orgPath(ctx().orgA.id, '/settings');
    const patch = (settings: unknown, orgId = ctx().orgA.id) =>
      ctx().request('PATCH', settingsPath(), { body: { org_id: orgId, settings } });

    it('GET: the settings record', async () => {
      const res = await ctx().request('GET', settingsPath());
      expect(res.status).toBe(200);
      expectResource(res.body, 'settings');
      expect(res.body).toMatchObject({
        org_id: ctx().orgA.id,
        settings: { alert_on_failure: false, callback_url: null },
      });
    });

    it('PATCH alert_on_failure: the full record comes back, other keys unchanged', async () => {
      const c = ctx();
      const before = (await c.request('GET', settingsPath())).body;
      const on = await patch({ alert_on_failure: true });
      expect(on.status).toBe(200);
      expectResource(on.body, 'settings');
      expect(on.body).toMatchObject({
        id: before.id,
        org_id: c.orgA.id,
        settings: { alert_on_failure: true, callback_url: before.settings.callback_url },
        created_at: before.created_at,
      });
      expect((await c.request('GET', settingsPath())).body.settings.alert_on_failure).toBe(true);
      const off = await patch({ alert_on_failure: false });
      expect(off.body.settings.alert_on_failure).toBe(false);
    });

    it('PATCH with an empty settings object changes nothing', async () => {
      const before = (await ctx().request('GET', settingsPath())).body;
      const res = await patch({});
      expect(res.status).toBe(200);
      expect(res.body.settings).toEqual(before.settings);
    });

    it('callback_url: set, kept when other keys change, removed with null', async () => {
      const url = 'https://8.8.8.8/voxkey/webhooks';
      const set = await patch({ callback_url: url });
      expect(set.status).toBe(200);
      expect(set.body.settings.callback_url).toBe(url);
      const other = await patch({ alert_on_failure: true });
      expect(other.body.settings.callback_url).toBe(url);
      const removed = await patch({ callback_url: null });
      expect(removed.status).toBe(200);
      expect(removed.body.settings.callback_url).toBeNull();
      expect(removed.body.settings.alert_on_failure).toBe(true);
    });

    it.each([
      'http://localhost:3000/hooks',
      'http://127.0.0.1:8080/x',
      'http://[::1]:3000/',
      'https://localhost/hook',
    ])('in development/test mode %s is accepted', async (url) => {
      const res = await patch({ callback_url: url });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.settings.callback_url).toBe(url);
    });

    describe('refused callback URLs', () => {
      const KNOWN_GOOD = 'https://8.8.8.8/known-good';
      beforeAll(async () => {
        expect((await patch({ callback_url: KNOWN_GOOD })).status).toBe(200);
      });

      it.each([
        'http://10.0.0.1/x',
        'https://10.0.0.1/x',
        'https://169.254.169.254/',
        'https://169.254.169.254/latest/meta-data/',
        'https://192.168.1.10/hook',
        'https://172.16.5.4/hook',
        'https://100.64.0.1/hook',
        'https://0.0.0.0/',
        'https://[fd00::1]/',
        'https://[fe80::1]/',
        'https://[::ffff:10.0.0.1]/',
        'https://[::ffff:169.254.169.254]/',
        'https://0x0a000001/',
        'https://10.1/',
        'https://224.0.0.1/',
        'http://8.8.8.8/plain-http',
        'ftp://8.8.8.8/file',
        'file:///etc/passwd',
        'javascript:alert(1)',
        'not a url',
        '/relative/path',
        'https://user:secret@8.8.8.8/hook',
      ])('callback_url %s → 400 on settings.callback_url', async (url) => {
        expectValidation(await patch({ callback_url: url }), ['settings.callback_url']);
      });

      it('a private address is refused as private, whatever the scheme (https would not help)', async () => {
        for (const url of ['http://10.0.0.5/hook', 'https://10.0.0.5/hook']) {
          const res = await patch({ callback_url: url });
          expectValidation(res, ['settings.callback_url']);
          expect(res.body.errors[0].message).toMatch(/private, link-local or reserved/);
        }
        const plain = await patch({ callback_url: 'http://8.8.8.8/plain-http' });
        expect(plain.body.errors[0].message).toMatch(/Must use https/);
      });

      it('none of the refused URLs was stored', async () => {
        expect((await ctx().request('GET', settingsPath())).body.settings.callback_url).toBe(
          KNOWN_GOOD,
        );
      });
    });

    it('callback_url in the NAT64 prefix embedding a link-local address → 400', async () => {
      // 64:ff9b::a9fe:a9fe is 169.254.169.254 through a NAT64 gateway.
      expectValidation(await patch({ callback_url: 'https://[64:ff9b::a9fe:a9fe]/' }), [
        'settings.callback_url',
      ]);
    });

    it('callback_url longer than 2048 characters → 400', async () => {
      expectValidation(await patch({ callback_url: `https://8.8.8.8/${'a'.repeat(2048)}` }), [
        'settings.callback_url',
      ]);
    });

    it('org_id must equal the path value; it and settings are required', async () => {
      const c = ctx();
      expectValidation(await patch({ alert_on_failure: true }, c.orgB.id), ['org_id']);
      expectValidation(await patch({ alert_on_failure: true }, UNKNOWN_ID), ['org_id']);
      expectValidation(
        await c.request('PATCH', settingsPath(), {
          body: { settings: { alert_on_failure: true } },
        }),
        [{ field: 'org_id', message: REQUIRED }],
      );
      expectValidation(await c.request('PATCH', settingsPath(), { body: { org_id: c.orgA.id } }), [
        { field: 'settings', message: REQUIRED },
      ]);
      expectValidation(await c.request('PATCH', settingsPath(), { body: {} }), [
        { field: 'org_id', message: REQUIRED },
        { field: 'settings', message: REQUIRED },
      ]);
      // The other organisation's settings are untouched.
      const b = await c.request('GET', orgPath(c.orgB.id, '/settings'), { token: c.orgB.token });
      expect(b.body.settings.alert_on_failure).toBe(false);
    });

    it('wrong types and unknown keys', async () => {
      const c = ctx();
      expectValidation(await patch({ alert_on_failure: 'yes' }), ['settings.alert_on_failure']);
      expectValidation(await patch({ alert_on_failure: 1 }), ['settings.alert_on_failure']);
      expectValidation(await patch({ callback_url: 42 }), ['settings.callback_url']);
      expectValidation(await patch('alert_on_failure=true'), ['settings']);
      expectValidation(await patch({ alert_on_failure: true, theme: 'dark' }), [
        { field: 'settings.theme', message: UNKNOWN_FIELD },
      ]);
      expectValidation(
        await c.request('PATCH', settingsPath(), {
          body: { org_id: String(c.orgA.id), settings: {} },
        }),
        ['org_id'],
      );
      expectValidation(
        await c.request('PATCH', settingsPath(), {
          body: { org_id: c.orgA.id, settings: {}, extra: true },
        }),
        [{ field: 'extra', message: UNKNOWN_FIELD }],
      );
    });
  });
});

describe(`callback_url in production mode (${TEST_DIALECT})`, () => {
  const ctx = useContext({ ...WITHOUT_RATE_LIMITS, NODE_ENV: 'production' });
  const patch = (callback_url: string) =>
    ctx().request('PATCH', orgPath(ctx().orgA.id, '/settings'), {
      body: { org_id: ctx().orgA.id, settings: { callback_url } },
    });

  it.each([
    'http://localhost:3000/hooks',
    'http://127.0.0.1/x',
    'https://127.0.0.1/x',
    'https://localhost/hook',
    'https://[::1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://2130706433/',
    'https://0177.0.0.1/',
    'https://127.1/',
    'https://0/',
  ])('%s → 400 (plain http and loopback only in development)', async (url) => {
    expectValidation(await patch(url), ['settings.callback_url']);
  });

  it('a public https URL is accepted', async () => {
    const res = await patch('https://1.1.1.1/hooks');
    expect(res.status).toBe(200);
    expect(res.body.settings.callback_url).toBe('https://1.1.1.1/hooks');
  });
});
