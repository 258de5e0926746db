import { describe, expect, it } from 'vitest';
import { TEST_DIALECT } from './support/database.js';
import {
  expectError,
  expectList,
  expectNotFound,
  expectResource,
  expectValidation,
  REQUIRED,
  UNKNOWN_FIELD,
  useContext,
  WITHOUT_RATE_LIMITS,
} from './support/expect.js';
import { createText, orgPath, UNKNOWN_ID } from './support/fixtures.js';

describe(`predefined texts (${TEST_DIALECT})`, () => {
  const ctx = useContext(WITHOUT_RATE_LIMITS);
  const textsPath = (rest = '') => orgPath(ctx().orgA.id, `/predefined-texts${rest}`);
  const valid = (over: Record<string, unknown> = {}) => ({
    org_id: ctx().orgA.id,
    language: 'en-UK',
    text_code: 1,
    text: 'My voice is my password.',
    ...over,
  });
  let code = 1000;
  const nextCode = () => ++code;

  describe('POST /organisations/{org_id}/predefined-texts', () => {
    it('201 with the text record', async () => {
      const body = valid({ text_code: nextCode() });
      const res = await ctx().request('POST', textsPath(), { body });
      expect(res.status).toBe(201);
      expectResource(res.body, 'text');
      expect(res.body).toMatchObject(body);
      expect(res.body.created_at).toBe(res.body.updated_at);
      const got = await ctx().request('GET', textsPath(`/${res.body.id}`));
      expect(got.body).toEqual(res.body);
    });

    it('409 {code, message} when the (language, text_code) pair exists; nothing is written', async () => {
      const c = ctx();
      const tc = nextCode();
      await createText(c, { language: 'fr-FR', text_code: tc, text: 'original' });
      const res = await c.request('POST', textsPath(), {
        body: valid({ language: 'fr-FR', text_code: tc, text: 'duplicate' }),
      });
      expectError(res, 409);
      const rows = await c.db
        .selectFrom('predefined_texts')
        .selectAll()
        .where('org_id', '=', c.orgA.id)
        .where('text_code', '=', tc)
        .execute();
      expect(rows.map((r) => r.text)).toEqual(['original']);
    });

    it('the same text_code in another language, and the same pair in another organisation, are fine', async () => {
      const c = ctx();
      const tc = nextCode();
      await createText(c, { language: 'de-DE', text_code: tc });
      await createText(c, { language: 'es-ES', text_code: tc });
      const b = await createText(c, { language: 'de-DE', text_code: tc }, { orgId: c.orgB.id });
      expect(b.org_id).toBe(c.orgB.id);
    });

    it('the pair is case-sensitive only through the language format (en-UK ≠ en-US)', async () => {
      const tc = nextCode();
      await createText(ctx(), { language: 'en-UK', text_code: tc });
      await createText(ctx(), { language: 'en-US', text_code: tc });
    });

    it('every field missing → one "This field is required" each', async () => {
      expectValidation(await ctx().request('POST', textsPath(), { body: {} }), [
        { field: 'org_id', message: REQUIRED },
        { field: 'language', message: REQUIRED },
        { field: 'text_code', message: REQUIRED },
        { field: 'text', message: REQUIRED },
      ]);
    });

    it.each([
      ['org_id as a string', { org_id: '1' }, ['org_id']],
      ['text_code as a string', { text_code: '1' }, ['text_code']],
      ['text_code fractional', { text_code: 1.5 }, ['text_code']],
      ['text_code negative', { text_code: -1 }, ['text_code']],
      ['text_code beyond 32 bits', { text_code: 2147483648 }, ['text_code']],
      ['text as a number', { text: 42 }, ['text']],
      ['blank text', { text: '   ' }, ['text']],
      ['empty text', { text: '' }, ['text']],
      ['text over 5000 characters', { text: 'x'.repeat(5001) }, ['text']],
      ['language null', { language: null }, ['language']],
      [
        'three wrong at once',
        { org_id: 'x', text_code: 'y', text: false },
        ['org_id', 'text_code', 'text'],
      ],
    ])('%s → 400', async (_name, over, fields) => {
      expectValidation(
        await ctx().request('POST', textsPath(), {
          body: valid({ text_code: nextCode(), ...over }),
        }),
        fields,
      );
    });

    it.each([
      'en-uk',
      'EN-UK',
      'En-UK',
      'eng-UK',
      'en-GBR',
      'en_UK',
      'enUK',
      'en-UK ',
      ' en-UK',
      'en',
      'e1-UK',
      'en-U1',
      '',
    ])('language %j → 400 on language', async (language) => {
      expectValidation(
        await ctx().request('POST', textsPath(), {
          body: valid({ language, text_code: nextCode() }),
        }),
        ['language'],
      );
    });

    it('org_id must equal the path organisation (400 on org_id, even for an org that exists)', async () => {
      const c = ctx();
      const tc = nextCode();
      expectValidation(
        await c.request('POST', textsPath(), { body: valid({ org_id: c.orgB.id, text_code: tc }) }),
        ['org_id'],
      );
      expectValidation(
        await c.request('POST', textsPath(), {
          body: valid({ org_id: UNKNOWN_ID, text_code: tc }),
        }),
        ['org_id'],
      );
      const rows = await c.db
        .selectFrom('predefined_texts')
        .select('id')
        .where('text_code', '=', tc)
        .execute();
      expect(rows).toEqual([]);
    });

    it('unknown fields → 400, one entry each', async () => {
      expectValidation(
        await ctx().request('POST', textsPath(), {
          body: valid({ text_code: nextCode(), id: 5, created_at: 'now' }),
        }),
        [
          { field: 'id', message: UNKNOWN_FIELD },
          { field: 'created_at', message: UNKNOWN_FIELD },
        ],
      );
    });

    it('a text of exactly 5000 characters is accepted', async () => {
      const res = await ctx().request('POST', textsPath(), {
        body: valid({ text_code: nextCode(), text: 'z'.repeat(5000) }),
      });
      expect(res.status).toBe(201);
      expect(res.body.text).toHaveLength(5000);
    });

    it('text_code 0 and 2147483647 are accepted', async () => {
      for (const text_code of [0, 2147483647]) {
        const res = await ctx().request('POST', textsPath(), {
          body: valid({ language: 'fi-FI', text_code }),
        });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        expect(res.body.text_code).toBe(text_code);
      }
    });

    it('texts longer than 200 characters are accepted (no hard limit at 200)', async () => {
      const res = await ctx().request('POST', textsPath(), {
        body: valid({ text_code: nextCode(), text: 'y'.repeat(1000) }),
      });
      expect(res.status).toBe(201);
      expect(res.body.text).toHaveLength(1000);
    });

    it('unicode text is stored and returned unchanged', async () => {
      const text = 'Ma voix est mon mot de passe — «sécurité» 🔐 日本語';
      const res = await ctx().request('POST', textsPath(), {
        body: valid({ text_code: nextCode(), language: 'fr-FR', text }),
      });
      expect(res.status).toBe(201);
      expect((await ctx().request('GET', textsPath(`/${res.body.id}`))).body.text).toBe(text);
    });
  });

  describe('GET list and single', () => {
    it('the list has {results} and the pagination headers', async () => {
      const c = ctx();
      const org = await c.makeOrg('Texts');
      await createText(c, { language: 'en-UK', text_code: 1 }, { orgId: org.id, token: org.token });
      await createText(c, { language: 'en-UK', text_code: 2 }, { orgId: org.id, token: org.token });
      expectList(
        await c.request('GET', orgPath(org.id, '/predefined-texts'), { token: org.token }),
        'text',
        { total: 2 },
      );
    });

    it("404 for an unknown id, and for another organisation's text", async () => {
      const c = ctx();
      expectNotFound(await c.request('GET', textsPath(`/${UNKNOWN_ID}`)));
      const b = await createText(
        c,
        { language: 'en-UK', text_code: nextCode(), text: 'secret-b-text' },
        { orgId: c.orgB.id },
      );
      const res = await c.request('GET', textsPath(`/${b.id}`));
      expectNotFound(res);
      expect(JSON.stringify(res.body)).not.toContain('secret-b-text');
      expectValidation(await c.request('GET', textsPath('/abc')), ['text_id']);
    });
  });

  describe('PATCH /organisations/{org_id}/predefined-texts/{text_id}', () => {
    it('changes only the given fields and returns the full record', async () => {
      const c = ctx();
      const t = await createText(c, { language: 'en-UK', text_code: nextCode(), text: 'before' });
      await new Promise((r) => setTimeout(r, 5));
      const res = await c.request('PATCH', textsPath(`/${t.id}`), { body: { text: 'after' } });
      expect(res.status).toBe(200);
      expectResource(res.body, 'text');
      expect(res.body).toEqual({ ...t, text: 'after', updated_at: res.body.updated_at });
      expect(Date.parse(res.body.updated_at)).toBeGreaterThan(Date.parse(t.updated_at));
      const tc = nextCode();
      const both = await c.request('PATCH', textsPath(`/${t.id}`), {
        body: { org_id: c.orgA.id, language: 'it-IT', text_code: tc },
      });
      expect(both.status).toBe(200);
      expect(both.body).toMatchObject({
        id: t.id,
        language: 'it-IT',
        text_code: tc,
        text: 'after',
      });
    });

    it('an empty body changes nothing but is accepted', async () => {
      const t = await createText(ctx(), { language: 'en-UK', text_code: nextCode() });
      const res = await ctx().request('PATCH', textsPath(`/${t.id}`), { body: {} });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        language: t.language,
        text_code: t.text_code,
        text: t.text,
      });
    });

    it('409 when changing only language into an existing pair; nothing changes', async () => {
      const c = ctx();
      const tc = nextCode();
      await createText(c, { language: 'en-UK', text_code: tc, text: 'uk' });
      const us = await createText(c, { language: 'en-US', text_code: tc, text: 'us' });
      const res = await c.request('PATCH', textsPath(`/${us.id}`), { body: { language: 'en-UK' } });
      expectError(res, 409);
      expect((await c.request('GET', textsPath(`/${us.id}`))).body).toEqual(us);
    });

    it('409 when changing only text_code into an existing pair, and when changing both', async () => {
      const c = ctx();
      const tc1 = nextCode();
      const tc2 = nextCode();
      await createText(c, { language: 'pt-PT', text_code: tc1 });
      const other = await createText(c, { language: 'pt-PT', text_code: tc2 });
      expectError(
        await c.request('PATCH', textsPath(`/${other.id}`), { body: { text_code: tc1 } }),
        409,
      );
      const third = await createText(c, { language: 'pt-BR', text_code: tc2 });
      expectError(
        await c.request('PATCH', textsPath(`/${third.id}`), {
          body: { language: 'pt-PT', text_code: tc1 },
        }),
        409,
      );
    });

    it('setting a text to its own pair is not a conflict', async () => {
      const t = await createText(ctx(), { language: 'nl-NL', text_code: nextCode() });
      const res = await ctx().request('PATCH', textsPath(`/${t.id}`), {
        body: { language: t.language, text_code: t.text_code, text: 'same pair' },
      });
      expect(res.status).toBe(200);
      expect(res.body.text).toBe('same pair');
    });

    it('a pair freed by a change or a delete can be taken', async () => {
      const c = ctx();
      const tc = nextCode();
      const t = await createText(c, { language: 'sv-SE', text_code: tc });
      await c.request('PATCH', textsPath(`/${t.id}`), { body: { language: 'da-DK' } });
      await createText(c, { language: 'sv-SE', text_code: tc });
      await c.request('DELETE', textsPath(`/${t.id}`));
      await createText(c, { language: 'da-DK', text_code: tc });
    });

    it('validation: language format, types, unknown fields, org_id mismatch', async () => {
      const c = ctx();
      const t = await createText(c, { language: 'en-UK', text_code: nextCode() });
      const patch = (body: unknown) => c.request('PATCH', textsPath(`/${t.id}`), { body });
      expectValidation(await patch({ language: 'en-uk' }), ['language']);
      expectValidation(await patch({ language: 'english' }), ['language']);
      expectValidation(await patch({ text_code: '7' }), ['text_code']);
      expectValidation(await patch({ text: '' }), ['text']);
      expectValidation(await patch({ text: null }), ['text']);
      expectValidation(await patch({ org_id: c.orgB.id }), ['org_id']);
      expectValidation(await patch({ id: 99 }), [{ field: 'id', message: UNKNOWN_FIELD }]);
      expectValidation(await patch({ language: 'xx', text_code: -5, colour: 'red' }), [
        'language',
        'text_code',
        'colour',
      ]);
      expect((await c.request('GET', textsPath(`/${t.id}`))).body).toEqual(t);
    });

    it("404 for an unknown id and for another organisation's text (which is unchanged)", async () => {
      const c = ctx();
      expectNotFound(
        await c.request('PATCH', textsPath(`/${UNKNOWN_ID}`), { body: { text: 'x' } }),
      );
      const b = await createText(
        c,
        { language: 'en-UK', text_code: nextCode(), text: 'b-original' },
        { orgId: c.orgB.id },
      );
      expectNotFound(
        await c.request('PATCH', textsPath(`/${b.id}`), { body: { text: 'hijacked' } }),
      );
      expect(
        (
          await c.request('GET', orgPath(c.orgB.id, `/predefined-texts/${b.id}`), {
            token: c.orgB.token,
          })
        ).body.text,
      ).toBe('b-original');
    });
  });

  describe('DELETE /organisations/{org_id}/predefined-texts/{text_id}', () => {
    it('200 with the deleted record; then 404', async () => {
      const c = ctx();
      const t = await createText(c, { language: 'en-UK', text_code: nextCode() });
      const res = await c.request('DELETE', textsPath(`/${t.id}`));
      expect(res.status).toBe(200);
      expectResource(res.body, 'text');
      expect(res.body).toEqual(t);
      expectNotFound(await c.request('GET', textsPath(`/${t.id}`)));
      expectNotFound(await c.request('DELETE', textsPath(`/${t.id}`)));
      expectNotFound(await c.request('PATCH', textsPath(`/${t.id}`), { body: { text: 'x' } }));
    });

    it("404 for an unknown id and for another organisation's text (which survives)", async () => {
      const c = ctx();
      expectNotFound(await c.request('DELETE', textsPath(`/${UNKNOWN_ID}`)));
      const b = await createText(
        c,
        { language: 'en-UK', text_code: nextCode() },
        { orgId: c.orgB.id },
      );
      expectNotFound(await c.request('DELETE', textsPath(`/${b.id}`)));
      expect(
        (
          await c.request('GET', orgPath(c.orgB.id, `/predefined-texts/${b.id}`), {
            token: c.orgB.token,
          })
        ).status,
      ).toBe(200);
    });
  });
});
