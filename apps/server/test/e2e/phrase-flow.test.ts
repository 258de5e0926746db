import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connection.js';
import { TEST_DIALECT } from '../support/database.js';
import { connectStream, sendPcm } from '../support/stream-server.js';
import {
  clipBase64,
  type SpokenClip,
  spokenClips,
  spokenTextsPresentFor,
} from '../support/recordings.js';
import {
  callApi,
  createServerEnvironment,
  REPO_MODELS,
  runCli,
  type ServerEnvironment,
  type ServerProcess,
  startServerProcess,
} from '../support/server-process.js';
import { startWebhookReceiver } from '../support/webhook-receiver.js';

const DIGIT_WORDS = new Set('zero one two three four five six seven eight nine'.split(' '));
const isDigitString = (text: string) =>
  text.split(/\s+/).every((word) => DIGIT_WORDS.has(word.toLowerCase()));

// Prompted-phrase liveness through the API with the bundled recogniser and real speech: a recording
// that says the phrase matches, a recording of another text does not. Challenges are random, so each
// digit challenge here is made by the API and then given, straight in the server's database, the
// digits a real clip says (a test-only way: the API never takes a challenge's text); the
// predefined-text path, enrolment with one included, uses the API alone.
describe.skipIf(!spokenTextsPresentFor(import.meta.url, 'phrase checks on real speech'))(
  `prompted phrases end to end, with real speech (${TEST_DIALECT})`,
  () => {
    let environment: ServerEnvironment;
    let server: ServerProcess;
    let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
    let org: { id: number; token: string };
    let digits: { said: SpokenClip; other: SpokenClip; enrolment: SpokenClip };
    let sentences: { said: SpokenClip; other: SpokenClip };
    const externalId = 'phrase-speaker';

    const api = (method: string, path: string, body?: unknown) =>
      callApi(server.baseUrl, org.token, method, `/organisations/${org.id}${path}`, body);
    const submit = async (
      resource: 'enrollments' | 'verifications',
      clip: SpokenClip,
      extra: Record<string, unknown> = {},
    ) => {
      const requestUuid = randomUUID();
      const accepted = await api('POST', `/${resource}`, {
        voice_data: clipBase64(clip.path),
        request_uuid: requestUuid,
        external_id: externalId,
        ...extra,
      });
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
      const calls = await receiver.waitFor((all) =>
        all.some((c) => c.body.request_uuid === requestUuid),
      );
      const event = calls.find((c) => c.body.request_uuid === requestUuid)!.body;
      const record = await api('GET', `/${resource}/${requestUuid}`);
      expect(record.body.phrase).toEqual(event.phrase);
      return event;
    };
    /**
     * A challenge made by the API for the enrolled speaker (its id, binding and expiry as served), whose
     * random digits are then replaced in the database by the ones `clip` says (lowercase digit words).
     */
    const challengeSaying = async (clip: SpokenClip) => {
      const created = await api('POST', '/challenges', { external_id: externalId });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const database = openDatabase(environment.env.DATABASE_URL!);
      try {
        await database.db
          .updateTable('challenges')
          .set({ text: clip.text.toLowerCase() })
          .where('id', '=', created.body.challenge_id)
          .executeTakeFirstOrThrow();
      } finally {
        await database.close();
      }
      return created.body.challenge_id as string;
    };

    beforeAll(async () => {
      const clips = spokenClips();
      // Digit strings read by one speechocean762 speaker, long enough to hold 3 s of speech.
      const digitClips = clips
        .filter((c) => c.corpus === 'speechocean762' && isDigitString(c.text) && c.duration >= 4.3)
        .sort((a, b) => a.path.localeCompare(b.path));
      // The first such speaker's longest digit clip is the one read: 3 s of speech is the engine's
      // minimum, and a clip near it may fall either side of it once decoded another way (a stream).
      const speaker = digitClips[0]!.speaker;
      const said = digitClips
        .filter((c) => c.speaker === speaker)
        .sort((a, b) => b.duration - a.duration)[0]!;
      const other =
        digitClips.find((c) => c.text !== said.text && c.speaker === speaker) ??
        digitClips.find((c) => c.text !== said.text)!;
      const enrolment = clips
        .filter((c) => c.speaker === speaker && c.corpus === said.corpus && !isDigitString(c.text))
        .sort((a, b) => b.duration - a.duration)[0]!;
      digits = { said, other, enrolment };
      const english = clips
        .filter((c) => c.corpus === 'commonvoice' && c.lang === 'en' && c.duration >= 4.5)
        .sort((a, b) => a.path.localeCompare(b.path));
      sentences = { said: english[0]!, other: english.find((c) => c.text !== english[0]!.text)! };

      receiver = await startWebhookReceiver();
      environment = await createServerEnvironment({ VOXKEY_MODELS_DIR: REPO_MODELS });
      const created = await runCli(environment, [
        'org',
        'create',
        '--name',
        'Phrases',
        '--email',
        'phrases@example.com',
        '--callback-url',
        receiver.url,
      ]);
      org = { id: created.organisation.id, token: created.token.bearer };
      server = await startServerProcess(environment);
      const enrolled = await submit('enrollments', digits.enrolment);
      expect(enrolled, JSON.stringify(enrolled)).toMatchObject({
        status: 'enrolled',
        phrase: null,
      });
    }, 240_000);

    afterAll(async () => {
      await server?.stop();
      await receiver?.close();
      await environment?.cleanup();
    });

    it('the API creates English digit challenges and refuses a language the recogniser cannot check', async () => {
      const created = await api('POST', '/challenges', { external_id: externalId });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body.text.split(' ')).toHaveLength(6);
      const french = await api('POST', '/challenges', {
        external_id: externalId,
        language: 'fr-FR',
      });
      expect(french.status).toBe(400);
      expect(french.body.errors[0]).toMatchObject({
        field: 'language',
        code: 'unsupported_language',
      });
    });

    it('a recording of the challenge digits matches; a recording of other digits does not', async () => {
      const matched = await submit('verifications', digits.said, {
        challenge_id: await challengeSaying(digits.said),
      });
      expect(matched.phrase, JSON.stringify(matched)).toMatchObject({
        expected: digits.said.text.toLowerCase(),
        matched: true,
      });
      expect(matched.phrase.match_score).toBeGreaterThanOrEqual(0.66);

      const missed = await submit('verifications', digits.other, {
        challenge_id: await challengeSaying(digits.said),
      });
      expect(missed.phrase, JSON.stringify(missed)).toMatchObject({
        expected: digits.said.text.toLowerCase(),
        matched: false,
      });
    });

    it('a verification stream with a challenge: the result carries the phrase check, and the record has it', async () => {
      const challengeId = await challengeSaying(digits.said);
      const requestUuid = randomUUID();
      const client = connectStream(
        `${server.baseUrl.replace(/^http/, 'ws')}/organisations/${org.id}/verifications/stream`,
        { token: org.token, protocols: ['voxkey.v1'] },
      );
      await client.opened;
      client.ws.send(
        JSON.stringify({
          type: 'start',
          external_id: externalId,
          request_uuid: requestUuid,
          format: 'mp3',
          challenge_id: challengeId,
        }),
      );
      // The clip's MP3 bytes in 4 KiB pieces (sendPcm only cuts and sends them).
      await sendPcm(client.ws, Buffer.from(clipBase64(digits.said.path), 'base64'), {
        frameSeconds: 0.128,
      });
      client.ws.send(JSON.stringify({ type: 'end' }));
      const result = await client.next('result', 60_000);
      expect(result.phrase, JSON.stringify(result)).toMatchObject({
        expected: digits.said.text.toLowerCase(),
        matched: true,
      });
      const record = await api('GET', `/verifications/${requestUuid}`);
      expect(record.body.phrase).toEqual(result.phrase);
    });

    it('a predefined text (text_id): its sentence matches, another sentence does not', async () => {
      const text = await api('POST', '/predefined-texts', {
        org_id: org.id,
        language: 'en-UK',
        text_code: 32,
        text: sentences.said.text,
      });
      expect(text.status, JSON.stringify(text.body)).toBe(201);
      const matched = await submit('verifications', sentences.said, { text_id: text.body.id });
      expect(matched.phrase, JSON.stringify(matched)).toMatchObject({
        expected: sentences.said.text,
        matched: true,
      });
      const missed = await submit('verifications', sentences.other, { text_id: text.body.id });
      expect(missed.phrase, JSON.stringify(missed)).toMatchObject({ matched: false });
    });

    it('an enrolment with a predefined text (text_id) reports its phrase check too', async () => {
      const text = await api('POST', '/predefined-texts', {
        org_id: org.id,
        language: 'en-UK',
        text_code: 33,
        text: sentences.said.text,
      });
      expect(text.status, JSON.stringify(text.body)).toBe(201);
      const enrolled = await submit('enrollments', sentences.said, {
        external_id: 'sentence-speaker',
        text_id: text.body.id,
      });
      expect(enrolled, JSON.stringify(enrolled)).toMatchObject({
        status: 'enrolled',
        phrase: { expected: sentences.said.text, matched: true },
      });
    });

    it('require_phrase: another text is rejected with phrase_not_matched; a used challenge is refused', async () => {
      const settings = await api('PATCH', '/settings', {
        org_id: org.id,
        settings: { require_phrase: true },
      });
      expect(settings.status).toBe(200);
      const challengeId = await challengeSaying(digits.said);
      const rejected = await submit('verifications', digits.other, { challenge_id: challengeId });
      expect(rejected).toMatchObject({
        result: 'rejected',
        failure_reason: 'phrase_not_matched',
        phrase: { matched: false },
      });
      const again = await api('POST', '/verifications', {
        voice_data: clipBase64(digits.said.path),
        request_uuid: randomUUID(),
        external_id: externalId,
        challenge_id: challengeId,
      });
      expect(again.status).toBe(409);
      expect(again.body.error).toBe('challenge_used');
    });
  },
);
