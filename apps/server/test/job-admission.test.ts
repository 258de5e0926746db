import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { issueToken } from '../src/services/organisations.js';
import { createTestContext, type TestContext } from './support/context.js';
import { TEST_DIALECT } from './support/database.js';
import { expectErrorCode, expectValidation } from './support/expect.js';
import {
  inADay,
  moveToPlan,
  orgPath,
  seedEnrolledUser,
  seedJobs,
  silentWav,
} from './support/fixtures.js';

const VOICE = silentWav();

async function tokenCount(ctx: TestContext): Promise<number> {
  const { n } = await ctx.db
    .selectFrom('api_tokens')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('org_id', '=', ctx.orgA.id)
    .executeTakeFirstOrThrow();
  return Number(n);
}

async function setCallback(ctx: TestContext, orgId: number) {
  await ctx.db
    .updateTable('organisation_settings')
    .set({ callback_url: 'https://hooks.example.com/voxkey' })
    .where('org_id', '=', orgId)
    .execute();
}

function enrol(
  ctx: TestContext,
  orgId: number,
  token: string,
  externalId = `user-${randomUUID()}`,
) {
  return ctx.request('POST', orgPath(orgId, '/enrollments'), {
    token,
    body: {
      voice_data: VOICE,
      request_uuid: randomUUID(),
      external_id: externalId,
      language: 'en-UK',
    },
  });
}

describe(`Sandbox is the plan, not the token (${TEST_DIALECT})`, () => {
  let ctx: TestContext;
  afterEach(() => ctx.cleanup());

  it('a Sandbox organisation is capped at its plan quota whatever token it uses; a paid plan is not', async () => {
    ctx = await createTestContext();
    await setCallback(ctx, ctx.orgA.id);
    await seedJobs(ctx, 100, { org_id: ctx.orgA.id });
    // The escape the issue describes: the trial token creates a production token (which must
    // expire no later than the trial token, but is not a trial token).
    const created = await ctx.request('POST', orgPath(ctx.orgA.id, '/api-tokens'), {
      body: { friendly_name: 'escape', enabled: true, expires_at: inADay() },
    });
    expect(created.status).toBe(201);
    const live = created.body.bearer as string;

    const refused = await enrol(ctx, ctx.orgA.id, live);
    expect(refused.status).toBe(429);
    expect(refused.body.message).toMatch(/Sandbox plan .*sandbox quota of 100/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await enrol(ctx, ctx.orgA.id, ctx.orgA.token)).status).toBe(429);

    await moveToPlan(ctx, ctx.orgA.id, 'Starter');
    expect((await enrol(ctx, ctx.orgA.id, live)).status).toBe(202);
    // Trial tokens stay at the Sandbox allowance on any plan.
    const trial = await enrol(ctx, ctx.orgA.id, ctx.orgA.token);
    expect(trial.status).toBe(429);
    expect(trial.body.message).toMatch(/Trial tokens .*sandbox quota of 100/);
    // It says how to get a production token as things are: the operator's CLI for one that never
    // expires, or one the trial token creates, which expires with it.
    expect(trial.body.message).toMatch(/voxkey token create/);
    expect(trial.body.message).toMatch(/no later than the trial token/);
  });

  it('a trial token only creates tokens that expire no later than itself, and never silently shortens one', async () => {
    ctx = await createTestContext();
    const path = orgPath(ctx.orgA.id, '/api-tokens');
    const trial = (
      await ctx.db
        .selectFrom('api_tokens')
        .select('expires_at')
        .where('org_id', '=', ctx.orgA.id)
        .where('kind', '=', 'trial')
        .executeTakeFirstOrThrow()
    ).expires_at!;
    const before = await tokenCount(ctx);

    // Without expires_at the token would never expire: refused, not cut to the trial's expiry.
    const omitted = await ctx.request('POST', path, {
      body: { friendly_name: 'no-expiry', enabled: true },
    });
    expectValidation(omitted, [
      {
        field: 'expires_at',
        code: 'outlives_creator',
        message:
          /^Required when the token making the request expires: a token cannot outlive the token that creates it/,
      },
    ]);
    expect(omitted.body.errors[0].message).toContain(`no later than ${trial}`);
    expect(omitted.body.errors[0].message).toContain('voxkey token create');
    expect(await tokenCount(ctx)).toBe(before);

    const later = new Date(Date.parse(trial) + 60_000).toISOString();
    expectValidation(
      await ctx.request('POST', path, {
        body: { friendly_name: 'later', enabled: true, expires_at: later },
      }),
      [{ field: 'expires_at', code: 'outlives_creator', message: /trial token/ }],
    );

    // The trial's own expiry is the latest allowed.
    const same = await ctx.request('POST', path, {
      body: { friendly_name: 'same', enabled: true, expires_at: trial },
    });
    expect(same.status).toBe(201);
    expect(same.body.token.expires_at).toBe(trial);

    const earlier = new Date(Date.now() + 86_400_000).toISOString();
    const ok = await ctx.request('POST', path, {
      body: { friendly_name: 'earlier', enabled: true, expires_at: earlier },
    });
    expect(ok.status).toBe(201);
    expect(Date.parse(ok.body.token.expires_at)).toBe(Date.parse(earlier));

    // Nor can a token the trial token created: the chain never outlives the trial.
    const child = same.body.bearer as string;
    expectValidation(
      await ctx.request('POST', path, {
        token: child,
        body: { friendly_name: 'grandchild', enabled: true },
      }),
      [{ field: 'expires_at', code: 'outlives_creator', message: /^Required when/ }],
    );
    expectValidation(
      await ctx.request('POST', path, {
        token: child,
        body: { friendly_name: 'later', enabled: true, expires_at: later },
      }),
      [{ field: 'expires_at', code: 'outlives_creator', message: /A token that expires/ }],
    );
    const grandchild = await ctx.request('POST', path, {
      token: child,
      body: { friendly_name: 'grandchild', enabled: true, expires_at: earlier },
    });
    expect(grandchild.status).toBe(201);
    expect(Date.parse(grandchild.body.token.expires_at)).toBe(Date.parse(earlier));
    expect(await tokenCount(ctx)).toBe(before + 3);

    // A production token that never expires (the operator's) creates tokens that never expire.
    const { bearer } = await issueToken(ctx.db, {
      orgId: ctx.orgA.id,
      friendlyName: 'ops',
      kind: 'live',
    });
    const forever = await ctx.request('POST', path, {
      token: bearer,
      body: { friendly_name: 'forever', enabled: true },
    });
    expect(forever.status).toBe(201);
    expect(forever.body.token.expires_at).toBeNull();
    const far = '2099-01-01T00:00:00.000Z';
    const distant = await ctx.request('POST', path, {
      token: bearer,
      body: { friendly_name: 'distant', enabled: true, expires_at: far },
    });
    expect(distant.status).toBe(201);
    expect(distant.body.token.expires_at).toBe(far);
  });
});

describe(`queue caps per organisation and in total (${TEST_DIALECT})`, () => {
  let ctx: TestContext;
  afterEach(() => ctx.cleanup());

  it('defaults the per-organisation cap to a quarter of the global cap', async () => {
    ctx = await createTestContext({ JOB_MAX_QUEUE: '8' });
    expect(ctx.config.JOB_MAX_QUEUE_PER_ORG).toBe(2);
  });

  it('one organisation at its cap gets 429 while another is still accepted', async () => {
    ctx = await createTestContext({ JOB_MAX_QUEUE: '10', JOB_MAX_QUEUE_PER_ORG: '3' });
    await moveToPlan(ctx, ctx.orgA.id, 'Starter');
    await setCallback(ctx, ctx.orgA.id);
    await setCallback(ctx, ctx.orgB.id);
    const { bearer: a } = await issueToken(ctx.db, {
      orgId: ctx.orgA.id,
      friendlyName: 'a',
      kind: 'live',
    });
    const { bearer: b } = await issueToken(ctx.db, {
      orgId: ctx.orgB.id,
      friendlyName: 'b',
      kind: 'live',
    });
    for (let i = 0; i < 3; i++) expect((await enrol(ctx, ctx.orgA.id, a)).status).toBe(202);
    const refused = await enrol(ctx, ctx.orgA.id, a);
    expect(refused.status).toBe(429);
    expect(refused.body.message).toMatch(/This organisation already has 3 requests waiting/);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect((await enrol(ctx, ctx.orgB.id, b)).status).toBe(202);
  });

  it('a replay is answered 202 again when the request could not be stored now (its organisation at its queue cap, its enrolment in flight); a reuse is still 409', async () => {
    ctx = await createTestContext({ JOB_MAX_QUEUE: '10', JOB_MAX_QUEUE_PER_ORG: '2' });
    await moveToPlan(ctx, ctx.orgA.id, 'Starter');
    await setCallback(ctx, ctx.orgA.id);
    await seedEnrolledUser(ctx, ctx.orgA.id, 'speaker');
    const { bearer } = await issueToken(ctx.db, {
      orgId: ctx.orgA.id,
      friendlyName: 'a',
      kind: 'live',
    });
    const post = (path: string, body: Record<string, unknown>) =>
      ctx.request('POST', orgPath(ctx.orgA.id, path), { token: bearer, body });
    const verification = {
      voice_data: VOICE,
      request_uuid: randomUUID(),
      external_id: 'speaker',
      language: 'en-UK',
    };
    const enrolment = { ...verification, request_uuid: randomUUID(), external_id: 'newcomer' };
    expect((await post('/verifications', verification)).status).toBe(202);
    expect((await post('/enrollments', enrolment)).status).toBe(202);
    const jobs = () =>
      ctx.db.selectFrom('jobs').select('request_uuid').where('org_id', '=', ctx.orgA.id).execute();
    expect(await jobs()).toHaveLength(2);

    // refused by the queue cap (a verification has no other check left to fail), answered as a replay
    expect((await post('/verifications', verification)).status).toBe(202);
    // refused as an enrolment in flight, answered as a replay
    expect((await post('/enrollments', enrolment)).status).toBe(202);
    expect(await jobs()).toHaveLength(2);
    const reuse = await post('/verifications', { ...verification, language: 'de-DE' });
    expect(reuse.status).toBe(409);
    expectErrorCode(reuse.body, 409, 'request_uuid_reused');
    const refused = await post('/verifications', { ...verification, request_uuid: randomUUID() });
    expect(refused.status).toBe(429);
    expectErrorCode(refused.body, 429, 'queue_full');
  });

  it('concurrent requests cannot overshoot the organisation cap, the global cap or the monthly quota', async () => {
    ctx = await createTestContext({ JOB_MAX_QUEUE: '6', JOB_MAX_QUEUE_PER_ORG: '4' });
    for (const org of [ctx.orgA, ctx.orgB]) {
      await moveToPlan(ctx, org.id, 'Starter');
      await setCallback(ctx, org.id);
    }
    const { bearer: a } = await issueToken(ctx.db, {
      orgId: ctx.orgA.id,
      friendlyName: 'a',
      kind: 'live',
    });
    const { bearer: b } = await issueToken(ctx.db, {
      orgId: ctx.orgB.id,
      friendlyName: 'b',
      kind: 'live',
    });
    const burst = await Promise.all([
      ...Array.from({ length: 12 }, () => enrol(ctx, ctx.orgA.id, a)),
      ...Array.from({ length: 12 }, () => enrol(ctx, ctx.orgB.id, b)),
    ]);
    const accepted = (org: number) =>
      burst.filter((r, i) => r.status === 202 && (i < 12 ? ctx.orgA.id : ctx.orgB.id) === org)
        .length;
    expect(burst.every((r) => r.status === 202 || r.status === 429)).toBe(true);
    expect(accepted(ctx.orgA.id)).toBeLessThanOrEqual(4);
    expect(accepted(ctx.orgB.id)).toBeLessThanOrEqual(4);
    expect(accepted(ctx.orgA.id) + accepted(ctx.orgB.id)).toBe(6);

    // Trial quota under concurrency: 97 used, 3 left, 10 at once.
    await ctx.db.deleteFrom('jobs').execute();
    await moveToPlan(ctx, ctx.orgA.id, 'Sandbox');
    await seedJobs(ctx, 97, { org_id: ctx.orgA.id });
    const quotaBurst = await Promise.all(
      Array.from({ length: 10 }, () => enrol(ctx, ctx.orgA.id, a)),
    );
    expect(quotaBurst.filter((r) => r.status === 202)).toHaveLength(3);
    expect(ctx.reportedErrors).toEqual([]);
  });
});
