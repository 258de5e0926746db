import { randomUUID } from 'node:crypto';
import type { PhraseOutcome, PhraseRequest } from '@voxkey/engine';
import { describe, expect, it, onTestFinished } from 'vitest';
import { claimJob } from '../src/repositories/jobs.js';
import { processJob, type VoiceAnalyzer } from '../src/workers/job-processor.js';
import { purgeExpiredRecords } from '../src/workers/retention.js';
import { createTestContext, type TestContext } from './support/context.js';
import { TEST_DIALECT } from './support/database.js';
import {
  expectError,
  expectValidation,
  useContext,
  WITHOUT_RATE_LIMITS,
} from './support/expect.js';
import {
  createText,
  issueLiveToken,
  moveToPlan,
  orgPath,
  seedJobs,
  silentWav,
} from './support/fixtures.js';

// Issue 32 on the request and job side: challenges, the phrase fields of enrolments and
// verifications, and how a phrase outcome is reported and decided, with a scripted engine whose
// recogniser hears `heard` (the real recogniser: e2e/phrase-flow.test.ts).

const DIGIT_WORDS =
  /^(zero|one|two|three|four|five|six|seven|eight|nine)( (zero|one|two|three|four|five|six|seven|eight|nine)){5}$/;
const CALLBACK = 'https://8.8.4.4/voxkey-hook';

/** What the scripted recogniser hears in the next recordings (null: it says the expected text). */
let heard: string | null = null;

function phraseOutcome(request: PhraseRequest | undefined): PhraseOutcome | null {
  if (!request) return null;
  const transcript = heard ?? request.expected;
  const matched = transcript === request.expected;
  return { expected: request.expected, transcript, matchScore: matched ? 1 : 0.1, matched };
}

const engine = {
  speakerModelId: 'fake-speaker',
  spoofModelId: 'fake-spoof',
  defaultDeepfakeThreshold: 0.5,
  defaultEnrolmentDeepfakeThreshold: 0.5,
  async enrol(_bytes: Uint8Array, opts: { phrase?: PhraseRequest }) {
    return {
      voiceprint: { modelId: 'fake-speaker', embedding: new Float32Array(4).fill(0.5) },
      qualityScore: 0.9,
      spoof: { bonafideProbability: 0.99, deepfakeDetected: false },
      phrase: phraseOutcome(opts.phrase),
      timings: {},
    };
  },
  async verify(_bytes: Uint8Array, _voiceprints: unknown, opts: { phrase?: PhraseRequest }) {
    return {
      result: 'verified',
      matchScore: 0.95,
      bonafideProbability: 0.99,
      speakerModelId: 'fake-speaker',
      qualityScore: 0.8,
      phrase: phraseOutcome(opts.phrase),
      timings: {},
    };
  },
} as unknown as VoiceAnalyzer;

describe(`phrase challenges (${TEST_DIALECT})`, () => {
  const ctx = useContext(WITHOUT_RATE_LIMITS);
  const AUDIO = silentWav();

  const patchSettings = (c: TestContext, settings: Record<string, unknown>, orgId = c.orgA.id) =>
    c.request('PATCH', orgPath(orgId, '/settings'), {
      body: { org_id: orgId, settings },
      token: orgId === c.orgA.id ? c.orgA.token : c.orgB.token,
    });
  const createChallenge = (c: TestContext, body: Record<string, unknown>, token?: string) =>
    c.request('POST', orgPath(token === c.orgB.token ? c.orgB.id : c.orgA.id, '/challenges'), {
      body,
      token,
    });
  const voice = (
    c: TestContext,
    kind: 'enrollments' | 'verifications',
    body: Record<string, unknown>,
  ) =>
    c.request('POST', orgPath(c.orgA.id, `/${kind}`), {
      body: { voice_data: AUDIO, request_uuid: randomUUID(), ...body },
    });
  const challengeRow = (c: TestContext, id: string) =>
    c.db.selectFrom('challenges').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const jobOf = (c: TestContext, requestUuid: string) =>
    c.db
      .selectFrom('jobs')
      .selectAll()
      .where('request_uuid', '=', requestUuid)
      .executeTakeFirstOrThrow();

  async function runJobs(c: TestContext) {
    for (;;) {
      const job = await claimJob(c.db, c.database.dialect, 'test-worker', 60_000);
      if (!job) return;
      expect((await processJob(c.deps, engine, job, 'test-worker')).result).toBe('completed');
    }
  }

  async function webhookPayload(c: TestContext, requestUuid: string) {
    const row = await c.db
      .selectFrom('webhook_deliveries')
      .select('payload')
      .where('request_uuid', '=', requestUuid)
      .executeTakeFirstOrThrow();
    return JSON.parse(row.payload);
  }

  async function enrolled(c: TestContext, externalId: string) {
    const res = await voice(c, 'enrollments', { external_id: externalId });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await runJobs(c);
  }

  it('setup: a callback URL and enrolled users', async () => {
    const c = ctx();
    expect((await patchSettings(c, { callback_url: CALLBACK })).status).toBe(200);
    expect((await patchSettings(c, { callback_url: CALLBACK }, c.orgB.id)).status).toBe(200);
    await enrolled(c, 'alice');
    await enrolled(c, 'bob');
  });

  describe('POST /challenges', () => {
    it('201: six random digits as words, en-UK by default, expiring after 120 s', async () => {
      const c = ctx();
      const before = Date.now();
      const res = await createChallenge(c, { external_id: 'alice' });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual([
        'challenge_id',
        'expires_at',
        'language',
        'text',
      ]);
      expect(res.body.text).toMatch(DIGIT_WORDS);
      expect(res.body.language).toBe('en-UK');
      const ttl = Date.parse(res.body.expires_at) - before;
      expect(ttl).toBeGreaterThanOrEqual(119_000);
      expect(ttl).toBeLessThanOrEqual(121_000 + (Date.now() - before));
      const row = await challengeRow(c, res.body.challenge_id);
      expect(row).toMatchObject({
        org_id: c.orgA.id,
        external_id: 'alice',
        text: res.body.text,
        vocabulary: 'digits',
        used_at: null,
      });
      const other = await createChallenge(c, { external_id: 'alice', language: 'en-US' });
      expect(other.body.challenge_id).not.toBe(res.body.challenge_id);
      expect(other.body.language).toBe('en-US');
    });

    it('lasts challenge_ttl_seconds (30 to 600), an organisation setting', async () => {
      const c = ctx();
      const set = await patchSettings(c, { challenge_ttl_seconds: 30 });
      expect(set.body.settings).toMatchObject({ challenge_ttl_seconds: 30, require_phrase: false });
      const res = await createChallenge(c, { external_id: 'alice' });
      expect(Date.parse(res.body.expires_at) - Date.now()).toBeLessThanOrEqual(30_000);
      for (const bad of [29, 601, 60.5]) {
        const refused = await patchSettings(c, { challenge_ttl_seconds: bad });
        expectValidation(refused, ['settings.challenge_ttl_seconds']);
      }
      await patchSettings(c, { challenge_ttl_seconds: 120 });
    });

    it('400 unsupported_language for a language the recogniser cannot check; 503 without one', async () => {
      const c = ctx();
      const french = await createChallenge(c, { external_id: 'alice', language: 'fr-FR' });
      expectValidation(french, ['language']);
      expect(french.body.errors[0].code).toBe('unsupported_language');
      expectValidation(await createChallenge(c, { external_id: 'alice', language: 'en' }), [
        'language',
      ]);
      expectValidation(await createChallenge(c, {}), ['external_id']);
      const languages = c.deps.phraseLanguages;
      c.deps.phraseLanguages = undefined;
      try {
        expectError(
          await createChallenge(c, { external_id: 'alice' }),
          503,
          undefined,
          'unavailable',
        );
      } finally {
        c.deps.phraseLanguages = languages;
      }
      // an engine loaded without its decoder checks no language: the same 503
      c.deps.phraseLanguages = async () => [];
      try {
        expectError(
          await createChallenge(c, { external_id: 'alice' }),
          503,
          undefined,
          'unavailable',
        );
      } finally {
        c.deps.phraseLanguages = languages;
      }
    });

    it("403 on another organisation's path", async () => {
      const c = ctx();
      const res = await c.request('POST', orgPath(c.orgB.id, '/challenges'), {
        body: { external_id: 'alice' },
      });
      expectError(res, 403, undefined, 'forbidden');
    });
  });

  describe('using a challenge', () => {
    it('a verification consumes it and queues its text as a digit phrase; a second use is 409 challenge_used', async () => {
      const c = ctx();
      const challenge = (await createChallenge(c, { external_id: 'alice' })).body;
      const request_uuid = randomUUID();
      const body = { external_id: 'alice', challenge_id: challenge.challenge_id, request_uuid };
      expect((await voice(c, 'verifications', body)).status).toBe(202);
      const job = await jobOf(c, request_uuid);
      expect(job).toMatchObject({
        challenge_id: challenge.challenge_id,
        text_id: null,
        phrase_expected: challenge.text,
        phrase_vocabulary: 'digits',
      });
      expect(await challengeRow(c, challenge.challenge_id)).toMatchObject({
        used_by_request: request_uuid,
        used_at: expect.any(String),
      });
      // The same request again is a replay (202, nothing new); another request is refused.
      expect((await voice(c, 'verifications', body)).status).toBe(202);
      const again = await voice(c, 'verifications', {
        external_id: 'alice',
        challenge_id: challenge.challenge_id,
      });
      expectError(again, 409, /already used/, 'challenge_used');
      const enrolment = await voice(c, 'enrollments', {
        external_id: 'alice',
        mode: 'add',
        challenge_id: challenge.challenge_id,
      });
      expectError(enrolment, 409, undefined, 'challenge_used');
      await runJobs(c);
    });

    it("404 challenge_not_found for an unknown id and for another organisation's challenge, alike", async () => {
      const c = ctx();
      const foreign = await createChallenge(c, { external_id: 'alice' }, c.orgB.token);
      expect(foreign.status).toBe(201);
      const theirs = await voice(c, 'verifications', {
        external_id: 'alice',
        challenge_id: foreign.body.challenge_id,
      });
      const unknown = await voice(c, 'verifications', {
        external_id: 'alice',
        challenge_id: randomUUID(),
      });
      expectError(theirs, 404, undefined, 'challenge_not_found');
      expect(theirs.body).toEqual(unknown.body);
      expect((await challengeRow(c, foreign.body.challenge_id)).used_at).toBeNull();
      expectValidation(
        await voice(c, 'verifications', { external_id: 'alice', challenge_id: 'abc' }),
        ['challenge_id'],
      );
    });

    it('409 challenge_user_mismatch for another external_id, which leaves it usable', async () => {
      const c = ctx();
      const challenge = (await createChallenge(c, { external_id: 'alice' })).body;
      const bob = await voice(c, 'verifications', {
        external_id: 'bob',
        challenge_id: challenge.challenge_id,
      });
      expectError(bob, 409, undefined, 'challenge_user_mismatch');
      const alice = await voice(c, 'verifications', {
        external_id: 'alice',
        challenge_id: challenge.challenge_id,
      });
      expect(alice.status).toBe(202);
      await runJobs(c);
    });

    it('409 challenge_expired once its expiry has passed', async () => {
      const c = ctx();
      const challenge = (await createChallenge(c, { external_id: 'alice' })).body;
      await c.db
        .updateTable('challenges')
        .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
        .where('id', '=', challenge.challenge_id)
        .execute();
      const res = await voice(c, 'verifications', {
        external_id: 'alice',
        challenge_id: challenge.challenge_id,
      });
      expectError(res, 409, /expired/, 'challenge_expired');
      expect((await challengeRow(c, challenge.challenge_id)).used_at).toBeNull();
    });

    it('an enrolment with another external_id is refused too (409 challenge_user_mismatch)', async () => {
      const c = ctx();
      const challenge = (await createChallenge(c, { external_id: 'alice' })).body;
      const enrolment = await voice(c, 'enrollments', {
        external_id: 'erin',
        challenge_id: challenge.challenge_id,
      });
      expectError(enrolment, 409, undefined, 'challenge_user_mismatch');
      expect((await challengeRow(c, challenge.challenge_id)).used_at).toBeNull();
    });

    it('a request refused for its audio or its quota leaves the challenge unused', async () => {
      const c = ctx();
      const challenge = (await createChallenge(c, { external_id: 'alice' })).body;
      const notAudio = await voice(c, 'verifications', {
        external_id: 'alice',
        challenge_id: challenge.challenge_id,
        voice_data: Buffer.from('not a recording at all').toString('base64'),
      });
      expectValidation(notAudio, ['voice_data']);
      expect((await challengeRow(c, challenge.challenge_id)).used_at).toBeNull();

      const quota = await createTestContext();
      onTestFinished(() => quota.cleanup());
      await quota.request('PATCH', orgPath(quota.orgA.id, '/settings'), {
        body: { org_id: quota.orgA.id, settings: { callback_url: CALLBACK } },
      });
      await seedJobs(quota, 100, { org_id: quota.orgA.id, kind: 'enrollment' });
      const theirs = (await createChallenge(quota, { external_id: 'newcomer' })).body;
      const bearer = await issueLiveToken(quota);
      const enrol = () =>
        quota.request('POST', orgPath(quota.orgA.id, '/enrollments'), {
          token: bearer,
          body: {
            voice_data: AUDIO,
            request_uuid: randomUUID(),
            external_id: 'newcomer',
            challenge_id: theirs.challenge_id,
          },
        });
      expectError(await enrol(), 429, undefined, 'quota_exceeded');
      expect((await challengeRow(quota, theirs.challenge_id)).used_at).toBeNull();
      await moveToPlan(quota, quota.orgA.id, 'Starter');
      expect((await enrol()).status).toBe(202);
      expect((await challengeRow(quota, theirs.challenge_id)).used_at).not.toBeNull();
    });

    it('expired challenges are purged a day after they expire, until then refused as expired', async () => {
      const c = ctx();
      const expireAt = async (id: string, msAgo: number) =>
        c.db
          .updateTable('challenges')
          .set({ expires_at: new Date(Date.now() - msAgo).toISOString() })
          .where('id', '=', id)
          .execute();
      const recent = (await createChallenge(c, { external_id: 'alice' })).body;
      const old = (await createChallenge(c, { external_id: 'alice' })).body;
      await expireAt(recent.challenge_id, 23 * 3600_000);
      await expireAt(old.challenge_id, 25 * 3600_000);
      const purged = await purgeExpiredRecords(c.deps);
      expect(purged.challenges).toBeGreaterThanOrEqual(1);
      const use = (id: string) =>
        voice(c, 'verifications', { external_id: 'alice', challenge_id: id });
      expectError(await use(recent.challenge_id), 409, undefined, 'challenge_expired');
      expectError(await use(old.challenge_id), 404, undefined, 'challenge_not_found');
    });

    it('two concurrent verifications with one challenge: exactly one is accepted', async () => {
      const c = ctx();
      for (let round = 0; round < 3; round++) {
        const challenge = (await createChallenge(c, { external_id: 'alice' })).body;
        const answers = await Promise.all(
          Array.from({ length: 4 }, () =>
            voice(c, 'verifications', {
              external_id: 'alice',
              challenge_id: challenge.challenge_id,
            }),
          ),
        );
        const statuses = answers.map((a) => a.status).sort();
        expect(statuses, JSON.stringify(answers.map((a) => a.body))).toEqual([202, 409, 409, 409]);
        for (const refused of answers.filter((a) => a.status === 409))
          expect(refused.body.error).toBe('challenge_used');
        const jobs = await c.db
          .selectFrom('jobs')
          .select('id')
          .where('challenge_id', '=', challenge.challenge_id)
          .execute();
        expect(jobs).toHaveLength(1);
      }
      await runJobs(c);
    });

    it('400 mutually_exclusive with both challenge_id and text_id', async () => {
      const c = ctx();
      const challenge = (await createChallenge(c, { external_id: 'alice' })).body;
      const res = await voice(c, 'verifications', {
        external_id: 'alice',
        challenge_id: challenge.challenge_id,
        text_id: 1,
      });
      expectValidation(res, ['text_id']);
      expect(res.body.errors[0].code).toBe('mutually_exclusive');
      expect((await challengeRow(c, challenge.challenge_id)).used_at).toBeNull();
    });
  });

  describe('text_id: a predefined text', () => {
    it('queues its text as a free phrase; 404 text_not_found; 400 for a text of no or too many words, or in a language the recogniser cannot check', async () => {
      const c = ctx();
      const english = await createText(c, {
        language: 'en-UK',
        text_code: 3201,
        text: 'My voice is my password.',
      });
      const request_uuid = randomUUID();
      const res = await voice(c, 'verifications', {
        external_id: 'alice',
        text_id: english.id,
        request_uuid,
      });
      expect(res.status).toBe(202);
      expect(await jobOf(c, request_uuid)).toMatchObject({
        text_id: english.id,
        challenge_id: null,
        phrase_expected: 'My voice is my password.',
        phrase_vocabulary: 'free',
      });
      // Reusable: the same text again is accepted.
      expect(
        (await voice(c, 'verifications', { external_id: 'alice', text_id: english.id })).status,
      ).toBe(202);
      expectError(
        await voice(c, 'verifications', { external_id: 'alice', text_id: 999999 }),
        404,
        undefined,
        'text_not_found',
      );
      const foreignText = await createText(
        c,
        { language: 'en-UK', text_code: 3202 },
        { orgId: c.orgB.id, token: c.orgB.token },
      );
      expectError(
        await voice(c, 'verifications', { external_id: 'alice', text_id: foreignText.id }),
        404,
        undefined,
        'text_not_found',
      );
      const long = await createText(c, {
        language: 'en-UK',
        text_code: 3204,
        text: Array.from({ length: 61 }, (_, i) => `word${i}`).join(' '),
      });
      const tooLong = await voice(c, 'verifications', { external_id: 'alice', text_id: long.id });
      expectValidation(tooLong, ['text_id']);
      expect(tooLong.body.errors[0].code).toBe('too_long');
      const wordless = await createText(c, { language: 'en-UK', text_code: 3205, text: '...' });
      const empty = await voice(c, 'verifications', { external_id: 'alice', text_id: wordless.id });
      expectValidation(empty, ['text_id']);
      expect(empty.body.errors[0].code).toBe('invalid_value');
      const french = await createText(c, { language: 'fr-FR', text_code: 3203 });
      const refused = await voice(c, 'enrollments', {
        external_id: 'carol',
        text_id: french.id,
      });
      expectValidation(refused, ['text_id']);
      expect(refused.body.errors[0].code).toBe('unsupported_language');
      await runJobs(c);
    });
  });

  describe('the phrase in results', () => {
    it('webhook and request record carry phrase; matched or not, the result stays the voice decision', async () => {
      const c = ctx();
      heard = null;
      const matched = (await createChallenge(c, { external_id: 'alice' })).body;
      const uuid1 = randomUUID();
      await voice(c, 'verifications', {
        external_id: 'alice',
        challenge_id: matched.challenge_id,
        request_uuid: uuid1,
      });
      await runJobs(c);
      const phrase = {
        expected: matched.text,
        transcript: matched.text,
        match_score: 1,
        matched: true,
      };
      expect(await webhookPayload(c, uuid1)).toMatchObject({ result: 'verified', phrase });
      const record = await c.request('GET', orgPath(c.orgA.id, `/verifications/${uuid1}`));
      expect(record.body).toMatchObject({ result: 'verified', failure_reason: null, phrase });

      heard = 'one two three';
      const missed = (await createChallenge(c, { external_id: 'alice' })).body;
      const uuid2 = randomUUID();
      await voice(c, 'verifications', {
        external_id: 'alice',
        challenge_id: missed.challenge_id,
        request_uuid: uuid2,
      });
      await runJobs(c);
      expect(await webhookPayload(c, uuid2)).toMatchObject({
        result: 'verified',
        failure_reason: null,
        phrase: { expected: missed.text, transcript: 'one two three', matched: false },
      });

      const uuid3 = randomUUID();
      await voice(c, 'verifications', { external_id: 'alice', request_uuid: uuid3 });
      await runJobs(c);
      expect((await webhookPayload(c, uuid3)).phrase).toBeNull();
      expect(
        (await c.request('GET', orgPath(c.orgA.id, `/verifications/${uuid3}`))).body.phrase,
      ).toBeNull();
      heard = null;
    });

    it('require_phrase: a verification without a phrase is 400 phrase_required; one not matched is rejected (phrase_not_matched)', async () => {
      const c = ctx();
      expect((await patchSettings(c, { require_phrase: true })).body.settings.require_phrase).toBe(
        true,
      );
      try {
        const bare = await voice(c, 'verifications', { external_id: 'alice' });
        expectValidation(bare, ['challenge_id']);
        expect(bare.body.errors[0].code).toBe('phrase_required');
        // Enrolments are not required to carry a phrase.
        expect((await voice(c, 'enrollments', { external_id: 'alice', mode: 'add' })).status).toBe(
          202,
        );
        await runJobs(c);

        heard = 'nine nine nine';
        const challenge = (await createChallenge(c, { external_id: 'alice' })).body;
        const request_uuid = randomUUID();
        await voice(c, 'verifications', {
          external_id: 'alice',
          challenge_id: challenge.challenge_id,
          request_uuid,
        });
        await runJobs(c);
        const payload = await webhookPayload(c, request_uuid);
        expect(payload).toMatchObject({
          result: 'rejected',
          failure_reason: 'phrase_not_matched',
          match_score: 0.95,
          phrase: { matched: false, transcript: 'nine nine nine' },
        });

        heard = null;
        const good = (await createChallenge(c, { external_id: 'alice' })).body;
        const goodUuid = randomUUID();
        await voice(c, 'verifications', {
          external_id: 'alice',
          challenge_id: good.challenge_id,
          request_uuid: goodUuid,
        });
        await runJobs(c);
        expect(await webhookPayload(c, goodUuid)).toMatchObject({
          result: 'verified',
          failure_reason: null,
          phrase: { matched: true },
        });
      } finally {
        heard = null;
        await patchSettings(c, { require_phrase: false });
      }
    });

    it('require_phrase is read when the job runs: a verification accepted without a phrase before the switch is rejected', async () => {
      const c = ctx();
      const request_uuid = randomUUID();
      expect((await voice(c, 'verifications', { external_id: 'alice', request_uuid })).status).toBe(
        202,
      );
      expect((await patchSettings(c, { require_phrase: true })).status).toBe(200);
      try {
        await runJobs(c);
      } finally {
        await patchSettings(c, { require_phrase: false });
      }
      expect(await webhookPayload(c, request_uuid)).toMatchObject({
        result: 'rejected',
        failure_reason: 'phrase_not_matched',
        match_score: 0.95,
        phrase: null,
      });
    });

    it('an enrolment whose recording does not say its phrase fails (phrase_not_matched) and stores nothing', async () => {
      const c = ctx();
      heard = 'something else entirely';
      const challenge = (await createChallenge(c, { external_id: 'dana' })).body;
      const request_uuid = randomUUID();
      expect(
        (
          await voice(c, 'enrollments', {
            external_id: 'dana',
            challenge_id: challenge.challenge_id,
            request_uuid,
          })
        ).status,
      ).toBe(202);
      await runJobs(c);
      heard = null;
      expect(await webhookPayload(c, request_uuid)).toMatchObject({
        status: 'failed',
        failure_reason: 'phrase_not_matched',
        user_id: null,
        phrase: { expected: challenge.text, matched: false },
      });
      const users = await c.db
        .selectFrom('users')
        .select('id')
        .where('external_id', '=', 'dana')
        .execute();
      expect(users).toHaveLength(0);

      const again = (await createChallenge(c, { external_id: 'dana' })).body;
      const uuid2 = randomUUID();
      await voice(c, 'enrollments', {
        external_id: 'dana',
        challenge_id: again.challenge_id,
        request_uuid: uuid2,
      });
      await runJobs(c);
      expect(await webhookPayload(c, uuid2)).toMatchObject({
        status: 'enrolled',
        phrase: { matched: true },
      });
      const record = await c.request('GET', orgPath(c.orgA.id, `/enrollments/${uuid2}`));
      expect(record.body.phrase).toMatchObject({ expected: again.text, matched: true });
    });

    it('deleting a user erases its phrase transcripts and deletes its challenges', async () => {
      const c = ctx();
      await createChallenge(c, { external_id: 'dana' });
      const user = await c.db
        .selectFrom('users')
        .select('id')
        .where('external_id', '=', 'dana')
        .executeTakeFirstOrThrow();
      expect((await c.request('DELETE', orgPath(c.orgA.id, `/users/${user.id}`))).status).toBe(200);
      const left = await c.db
        .selectFrom('challenges')
        .select('id')
        .where('external_id', '=', 'dana')
        .execute();
      expect(left).toHaveLength(0);
      const transcripts = await c.db
        .selectFrom('jobs')
        .select('phrase_transcript')
        .where('org_id', '=', c.orgA.id)
        .where('external_id', 'like', 'erased:%')
        .execute();
      expect(transcripts.length).toBeGreaterThan(0);
      expect(transcripts.every((t) => t.phrase_transcript === null)).toBe(true);
    });
  });
});
