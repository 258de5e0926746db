import { afterEach, describe, expect, it } from 'vitest';
import { loadVerificationSubject } from '../src/decisions/subject.js';
import { setUserActive } from '../src/repositories/users.js';
import { insertSample, insertVoiceprint } from '../src/repositories/voiceprints.js';
import { createTestContext, type TestContext } from './support/context.js';
import { TEST_DIALECT } from './support/database.js';
import { seedUser } from './support/fixtures.js';

describe(`the verification subject (${TEST_DIALECT})`, () => {
  let ctx: TestContext;
  afterEach(() => ctx.cleanup());

  it("opens a deactivated user's samples not at all, so the refusal is user_inactive whatever they hold", async () => {
    ctx = await createTestContext();
    const user = await seedUser(ctx, ctx.orgA.id, 'sleeper');
    const voiceprint = await insertVoiceprint(ctx.db, {
      orgId: ctx.orgA.id,
      userId: user.id,
      modelId: 'voxkey-speaker-v4',
      enrolmentFingerprint: null,
      qualityScore: 0.9,
    });
    // A sample sealed under another key (e.g. a restored backup): it cannot be opened.
    await insertSample(ctx.db, voiceprint, {
      modelId: 'voxkey-speaker-v4',
      sealedEmbedding: 'v1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA',
      sealVersion: 1,
      qualityScore: 0.9,
    });
    await expect(loadVerificationSubject(ctx.deps, ctx.orgA.id, 'sleeper')).rejects.toThrow();
    await setUserActive(ctx.db, ctx.orgA.id, user.id, false);
    const subject = await loadVerificationSubject(ctx.deps, ctx.orgA.id, 'sleeper');
    expect(subject?.user.is_active).toBeFalsy();
    expect(subject?.samples).toEqual([]);
  });
});
