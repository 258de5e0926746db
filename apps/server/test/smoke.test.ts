import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from './support/context.js';
import { TEST_DIALECT } from './support/database.js';

describe(`smoke (${TEST_DIALECT})`, () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(() => ctx.cleanup());

  it('reads its own organisation and is refused another one', async () => {
    const own = await ctx.request('GET', `/v1/organisations/${ctx.orgA.id}`);
    expect(own.status).toBe(200);
    expect(own.body.name).toBe('OrgA');
    const other = await ctx.request('GET', `/v1/organisations/${ctx.orgB.id}`);
    expect(other.status).toBe(403);
    expect(other.body).toEqual({ code: 403, error: 'forbidden', message: expect.any(String) });
  });
});
