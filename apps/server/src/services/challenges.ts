import { randomUUID } from 'node:crypto';
import { CHALLENGE_TTL_SECONDS } from '@voxkey/contract';
import { generateDigitChallenge } from '@voxkey/engine/dsp';
import type { AppDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { insertChallenge } from '../repositories/challenges.js';
import { findSettings } from '../repositories/organisations.js';
import { recogniserSpeaks } from './phrases.js';

/**
 * A one-time phrase for one person: six random digits as words (the recogniser's most accurate
 * vocabulary; training/results/phrase-check.md), valid for the organisation's challenge_ttl_seconds.
 */
export async function createChallenge(
  deps: AppDeps,
  orgId: number,
  request: { external_id: string; language: string },
) {
  if (!(await recogniserSpeaks(deps, request.language))) {
    throw ApiError.field(
      'language',
      'unsupported_language',
      `The speech recogniser cannot check phrases in ${request.language}; use an English language tag such as en-UK`,
    );
  }
  const settings = await findSettings(deps.database.db, orgId);
  const ttlSeconds = settings?.challenge_ttl_seconds ?? CHALLENGE_TTL_SECONDS.default;
  const { text } = generateDigitChallenge();
  const row = await insertChallenge(deps.database.db, {
    id: randomUUID(),
    orgId,
    externalId: request.external_id,
    text,
    vocabulary: 'digits',
    language: request.language,
    expiresAt: new Date(Date.now() + ttlSeconds * 1000).toISOString(),
  });
  return {
    challenge_id: row.id,
    text: row.text,
    language: row.language,
    expires_at: row.expires_at,
  };
}
