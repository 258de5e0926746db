import { MAX_PHRASE_WORDS } from '@voxkey/engine';
import { phraseWords } from '@voxkey/engine/dsp';
import type { Executor } from '../db/connection.js';
import type { JobKind } from '../db/types.js';
import type { AppDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { consumeChallenge, findChallenge } from '../repositories/challenges.js';
import { nowIso } from '../repositories/clock.js';
import type { JobPhrase } from '../repositories/jobs.js';
import { findText } from '../repositories/predefined-texts.js';

/** The phrase fields of an enrolment, a verification or a stream's `start`. */
export interface PhraseFields {
  challenge_id?: string;
  text_id?: number;
}

export type { JobPhrase };

/**
 * What a request names, once its fields are checked: nothing, a predefined text (already read), or
 * a challenge, which is only claimed in the transaction that accepts the request.
 */
export type PhraseClaim =
  | { kind: 'none' }
  | { kind: 'text'; phrase: JobPhrase }
  | { kind: 'challenge'; challengeId: string };

/** Whether the recogniser can check phrases in `language` (`en-UK`: its primary subtag `en`). */
export async function recogniserSpeaks(deps: AppDeps, language: string): Promise<boolean> {
  const languages = deps.phraseLanguages ? await deps.phraseLanguages() : [];
  if (languages.length === 0)
    throw new ApiError(
      'unavailable',
      'Phrase checks are unavailable on this server: no speech recogniser is loaded',
    );
  const primary = language.split('-')[0]!.toLowerCase();
  return languages.includes(primary);
}

async function phraseOfText(deps: AppDeps, orgId: number, textId: number): Promise<JobPhrase> {
  const text = await findText(deps.database.db, orgId, textId);
  if (!text)
    throw new ApiError(
      'text_not_found',
      `No predefined text with text_id ${textId} in this organisation`,
    );
  if (!(await recogniserSpeaks(deps, text.language))) {
    throw ApiError.field(
      'text_id',
      'unsupported_language',
      `The speech recogniser cannot check ${text.language} texts; use an English text or a challenge`,
    );
  }
  // What the recogniser compares: a text of no words, or longer than a phrase check takes, cannot be checked.
  const words = phraseWords(text.text).length;
  if (words === 0 || words > MAX_PHRASE_WORDS) {
    throw ApiError.field(
      'text_id',
      words === 0 ? 'invalid_value' : 'too_long',
      `This predefined text has ${words} words to read; a phrase check takes 1 to ${MAX_PHRASE_WORDS}`,
    );
  }
  return { expected: text.text, vocabulary: 'free', challengeId: null, textId };
}

/**
 * The request-side checks of the phrase fields: not both, a phrase when the organisation requires one
 * (verifications), a predefined text that exists in a language the recogniser speaks.
 */
export async function checkPhraseFields(
  deps: AppDeps,
  orgId: number,
  kind: JobKind,
  fields: PhraseFields,
  requirePhrase: boolean,
): Promise<PhraseClaim> {
  if (fields.challenge_id !== undefined && fields.text_id !== undefined) {
    throw ApiError.field(
      'text_id',
      'mutually_exclusive',
      'Send either challenge_id or text_id, not both',
    );
  }
  if (fields.challenge_id !== undefined)
    return { kind: 'challenge', challengeId: fields.challenge_id };
  if (fields.text_id !== undefined)
    return { kind: 'text', phrase: await phraseOfText(deps, orgId, fields.text_id) };
  if (kind === 'verification' && requirePhrase) {
    throw ApiError.field(
      'challenge_id',
      'phrase_required',
      'This organisation requires a phrase on every verification: create a challenge (POST /organisations/{org_id}/challenges) and send its challenge_id, or send a text_id',
    );
  }
  return { kind: 'none' };
}

/**
 * Uses the challenge for this request (one conditional UPDATE; see consumeChallenge), in the
 * caller's transaction, so it is consumed exactly when the request is accepted. A challenge that
 * cannot be used says why; another organisation's is exactly as not found as an unknown id.
 */
export async function claimChallenge(
  db: Executor,
  orgId: number,
  request: { challengeId: string; externalId: string; requestUuid: string },
): Promise<JobPhrase> {
  const now = nowIso();
  const claimed = await consumeChallenge(db, {
    orgId,
    id: request.challengeId,
    externalId: request.externalId,
    requestUuid: request.requestUuid,
    now,
  });
  if (claimed)
    return {
      expected: claimed.text,
      vocabulary: claimed.vocabulary,
      challengeId: claimed.id,
      textId: null,
    };
  const challenge = await findChallenge(db, orgId, request.challengeId);
  if (!challenge)
    throw new ApiError(
      'challenge_not_found',
      'No challenge with this challenge_id in this organisation',
    );
  if (challenge.external_id !== request.externalId)
    throw new ApiError(
      'challenge_user_mismatch',
      'This challenge was created for another external_id; create one for this person',
    );
  if (challenge.used_at !== null)
    throw new ApiError(
      'challenge_used',
      'This challenge was already used; each challenge can be used once, create a new one',
    );
  throw new ApiError(
    'challenge_expired',
    `This challenge expired at ${challenge.expires_at}; create a new one`,
  );
}

/** The phrase a checked claim stands for, claiming a challenge in `db` (the accepting transaction). */
export async function settlePhraseClaim(
  db: Executor,
  orgId: number,
  claim: PhraseClaim,
  request: { externalId: string; requestUuid: string },
): Promise<JobPhrase | null> {
  if (claim.kind === 'none') return null;
  if (claim.kind === 'text') return claim.phrase;
  return claimChallenge(db, orgId, { challengeId: claim.challengeId, ...request });
}
