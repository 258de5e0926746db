import { afterEach, describe, expect, it } from 'vitest';
import { loadVerificationSubject } from '../src/decisions/subject.js';
import { setUserActive } from '../src/repositories/users.js';
import {
  findUserWithVoiceprintSamples,
  insertSample,
  insertVoiceprint,
  listSamples,
} from '../src/repositories/voiceprints.js';
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

  it('reads the user, their voiceprint and its samples in one lookup: the same rows as reading each, in order', async () => {
    ctx = await createTestContext();
    const find = (externalId: string) =>
      findUserWithVoiceprintSamples(ctx.db, ctx.orgA.id, externalId);
    expect(await find('nobody')).toBeUndefined();

    const user = await seedUser(ctx, ctx.orgA.id, 'speaker');
    expect(await find('speaker')).toEqual({ user, voiceprint: undefined, samples: [] });

    const voiceprint = await insertVoiceprint(ctx.db, {
      orgId: ctx.orgA.id,
      userId: user.id,
      modelId: 'voxkey-speaker-v4',
      enrolmentFingerprint: 'fp',
      qualityScore: 0.8,
    });
    expect(await find('speaker')).toEqual({ user, voiceprint, samples: [] });

    for (const [i, quality] of [0.7, 0.9, 0.8].entries()) {
      await insertSample(ctx.db, voiceprint, {
        modelId: i === 2 ? 'voxkey-speaker-v3' : 'voxkey-speaker-v4',
        sealedEmbedding: `sealed-${i}`,
        sealVersion: 2,
        qualityScore: quality,
        recordingQuality: i === 1 ? null : undefined,
      });
    }
    // another organisation's user of the same external id is not read
    await seedUser(ctx, ctx.orgB.id, 'speaker');
    const found = await find('speaker');
    expect(found).toEqual({ user, voiceprint, samples: await listSamples(ctx.db, voiceprint.id) });
    expect(found!.samples.map((sample) => sample.sealed_embedding)).toEqual([
      'sealed-0',
      'sealed-1',
      'sealed-2',
    ]);
  });
});
