import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledOnce } from '../src/repositories/compiled-once.js';
import { insertOrganisation } from '../src/repositories/organisations.js';
import { findText, insertText } from '../src/repositories/predefined-texts.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';

describe('compiledOnce (hot lookups compiled once per database handle)', () => {
  let test: TestDatabase;
  let orgIds: number[];
  beforeAll(async () => {
    test = await createTestDatabase();
    orgIds = [];
    for (const name of ['A', 'B']) {
      const org = await insertOrganisation(test.database.db, {
        name,
        email: `${name.toLowerCase()}@example.com`,
      });
      orgIds.push(org.id);
      await insertText(test.database.db, org.id, {
        language: 'en-GB',
        text_code: 1,
        text: `text of ${name}`,
      });
    }
  });
  afterAll(() => test.cleanup());

  it('binds each call its own values (in every order of calls, across organisations)', async () => {
    const [a, b] = orgIds as [number, number];
    const textA = (
      await test.database.db
        .selectFrom('predefined_texts')
        .select('id')
        .where('org_id', '=', a)
        .executeTakeFirstOrThrow()
    ).id;
    const textB = (
      await test.database.db
        .selectFrom('predefined_texts')
        .select('id')
        .where('org_id', '=', b)
        .executeTakeFirstOrThrow()
    ).id;
    expect((await findText(test.database.db, a, textA))?.text).toBe('text of A');
    expect((await findText(test.database.db, b, textB))?.text).toBe('text of B');
    expect(await findText(test.database.db, a, textB)).toBeUndefined();
    expect(await findText(test.database.db, b, textA)).toBeUndefined();
    // Inside a transaction (it shares the database handle's compilation).
    await test.database.db.transaction().execute(async (trx) => {
      expect((await findText(trx, b, textB))?.text).toBe('text of B');
      expect(await findText(trx, b, textA)).toBeUndefined();
    });
  });

  it('binds values used in another order or more than once, and refuses a builder that converts or leaves out a value', async () => {
    const [a, b] = orgIds as [number, number];
    const textA = (
      await test.database.db
        .selectFrom('predefined_texts')
        .select('id')
        .where('org_id', '=', a)
        .executeTakeFirstOrThrow()
    ).id;
    const swapped = compiledOnce((db, orgId: number, id: number) =>
      db
        .selectFrom('predefined_texts')
        .selectAll()
        .where('id', '=', id)
        .where('org_id', '=', orgId),
    );
    expect((await swapped(test.database.db, a, textA))[0]?.text).toBe('text of A');
    expect(await swapped(test.database.db, b, textA)).toEqual([]);
    const twice = compiledOnce((db, orgId: number) =>
      db
        .selectFrom('predefined_texts')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('org_id', '<=', orgId),
    );
    expect((await twice(test.database.db, a))[0]?.text).toBe('text of A');
    const converted = compiledOnce((db, orgId: number) =>
      db.selectFrom('predefined_texts').selectAll().where('org_id', '=', Number(orgId)),
    );
    await expect(converted(test.database.db, a)).rejects.toThrow(
      /every parameter of the query must be one of its values/,
    );
    const leftOut = compiledOnce((db, _orgId: number) =>
      db.selectFrom('predefined_texts').selectAll(),
    );
    await expect(leftOut(test.database.db, a)).rejects.toThrow(/each value used/);
  });
});
