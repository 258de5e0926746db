import { describe, expect, it } from 'vitest';
import { TEST_DIALECT } from './support/database.js';
import { expectError, useContext } from './support/expect.js';
import { createText, inADay, orgPath, seedUser } from './support/fixtures.js';

const statuses = (responses: { status: number }[]) => responses.map((r) => r.status).sort();

describe(`concurrency (${TEST_DIALECT})`, () => {
  const ctx = useContext();
  const textsPath = (rest = '') => orgPath(ctx().orgA.id, `/predefined-texts${rest}`);
  const body = (code: number, text: string, language = 'en-UK') => ({
    org_id: ctx().orgA.id,
    language,
    text_code: code,
    text,
  });
  const countPair = async (language: string, code: number) =>
    (
      await ctx()
        .db.selectFrom('predefined_texts')
        .select('id')
        .where('org_id', '=', ctx().orgA.id)
        .where('language', '=', language)
        .where('text_code', '=', code)
        .execute()
    ).length;

  it('two concurrent POSTs of the same predefined text → exactly one 201 and one 409, no 500', async () => {
    const responses = await Promise.all([
      ctx().request('POST', textsPath(), { body: body(1, 'first') }),
      ctx().request('POST', textsPath(), { body: body(1, 'second') }),
    ]);
    expect(statuses(responses)).toEqual([201, 409]);
    expectError(
      responses.find((r) => r.status === 409)!,
      409,
    );
    expect(await countPair('en-UK', 1)).toBe(1);
  });

  it('repeated races of two POSTs are always one 201 and one 409', async () => {
    for (let code = 100; code < 110; code++) {
      const responses = await Promise.all([
        ctx().request('POST', textsPath(), { body: body(code, 'a') }),
        ctx().request('POST', textsPath(), { body: body(code, 'b') }),
      ]);
      expect(statuses(responses), `text_code ${code}`).toEqual([201, 409]);
    }
  });

  it('eight concurrent POSTs of the same pair → one 201, seven 409', async () => {
    const responses = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        ctx().request('POST', textsPath(), { body: body(2, `racer ${i}`) }),
      ),
    );
    expect(statuses(responses)).toEqual([201, ...Array(7).fill(409)]);
    expect(await countPair('en-UK', 2)).toBe(1);
  });

  it('the same pair in two organisations at once → both 201', async () => {
    const c = ctx();
    const responses = await Promise.all([
      c.request('POST', textsPath(), { body: body(3, 'a') }),
      c.request('POST', orgPath(c.orgB.id, '/predefined-texts'), {
        token: c.orgB.token,
        body: { ...body(3, 'b'), org_id: c.orgB.id },
      }),
    ]);
    expect(statuses(responses)).toEqual([201, 201]);
  });

  it('two texts PATCHed into the same pair at once → one 200, one 409', async () => {
    const t1 = await createText(ctx(), { language: 'fr-FR', text_code: 4 });
    const t2 = await createText(ctx(), { language: 'de-DE', text_code: 4 });
    const responses = await Promise.all([
      ctx().request('PATCH', textsPath(`/${t1.id}`), { body: { language: 'it-IT' } }),
      ctx().request('PATCH', textsPath(`/${t2.id}`), { body: { language: 'it-IT' } }),
    ]);
    expect(statuses(responses)).toEqual([200, 409]);
    expect(await countPair('it-IT', 4)).toBe(1);
  });

  it('a POST and a PATCH racing for the same pair → one success, one 409', async () => {
    const t = await createText(ctx(), { language: 'es-ES', text_code: 5 });
    const responses = await Promise.all([
      ctx().request('POST', textsPath(), { body: body(5, 'new', 'pt-PT') }),
      ctx().request('PATCH', textsPath(`/${t.id}`), { body: { language: 'pt-PT' } }),
    ]);
    expect(responses.map((r) => r.status).filter((s) => s === 409)).toHaveLength(1);
    expect(responses.map((r) => r.status).filter((s) => s === 200 || s === 201)).toHaveLength(1);
    expect(await countPair('pt-PT', 5)).toBe(1);
  });

  it('two concurrent DELETEs of one text → one 200, one 404', async () => {
    const t = await createText(ctx(), { language: 'nl-NL', text_code: 6 });
    const responses = await Promise.all([
      ctx().request('DELETE', textsPath(`/${t.id}`)),
      ctx().request('DELETE', textsPath(`/${t.id}`)),
    ]);
    expect(statuses(responses)).toEqual([200, 404]);
  });

  it('two concurrent DELETEs of one user → one 200, one 404', async () => {
    const u = await seedUser(ctx(), ctx().orgA.id, 'race-delete');
    const path = orgPath(ctx().orgA.id, `/users/${u.id}`);
    const responses = await Promise.all([
      ctx().request('DELETE', path),
      ctx().request('DELETE', path),
    ]);
    expect(statuses(responses)).toEqual([200, 404]);
  });

  it('many concurrent token creations all succeed with distinct bearers', async () => {
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        ctx().request('POST', orgPath(ctx().orgA.id, '/api-tokens'), {
          body: { friendly_name: `burst-${i}`, enabled: true, expires_at: inADay() },
        }),
      ),
    );
    expect(responses.every((r) => r.status === 201)).toBe(true);
    expect(new Set(responses.map((r) => r.body.bearer)).size).toBe(10);
  });
});
