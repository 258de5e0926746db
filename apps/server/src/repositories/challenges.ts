import type { Executor } from '../db/connection.js';
import type { ChallengeRow, PhraseVocabulary } from '../db/types.js';
import { nowIso } from './clock.js';

export interface NewChallenge {
  id: string;
  orgId: number;
  externalId: string;
  text: string;
  vocabulary: PhraseVocabulary;
  language: string;
  expiresAt: string;
}

export function insertChallenge(db: Executor, challenge: NewChallenge): Promise<ChallengeRow> {
  const now = nowIso();
  return db
    .insertInto('challenges')
    .values({
      id: challenge.id,
      org_id: challenge.orgId,
      external_id: challenge.externalId,
      text: challenge.text,
      vocabulary: challenge.vocabulary,
      language: challenge.language,
      expires_at: challenge.expiresAt,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The organisation's challenge with this id; another organisation's is not found. */
export function findChallenge(
  db: Executor,
  orgId: number,
  id: string,
): Promise<ChallengeRow | undefined> {
  return db
    .selectFrom('challenges')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/**
 * Uses the challenge for one request, in a single conditional UPDATE: only an unused, unexpired
 * challenge of this organisation and external_id changes, so of two concurrent requests exactly one
 * gets the row (PostgreSQL re-checks the condition after the first commits; SQLite has one writer).
 * undefined when nothing matched; the caller reads the row to say why.
 */
export function consumeChallenge(
  db: Executor,
  values: { orgId: number; id: string; externalId: string; requestUuid: string; now: string },
): Promise<ChallengeRow | undefined> {
  return db
    .updateTable('challenges')
    .set({ used_at: values.now, used_by_request: values.requestUuid, updated_at: values.now })
    .where('org_id', '=', values.orgId)
    .where('id', '=', values.id)
    .where('external_id', '=', values.externalId)
    .where('used_at', 'is', null)
    .where('expires_at', '>', values.now)
    .returningAll()
    .executeTakeFirst();
}

/** Challenges that expired before the cutoff (used or not): nothing can use them any more. */
export async function purgeChallengesExpiredBefore(
  db: Executor,
  cutoffIso: string,
): Promise<number> {
  const purged = await db
    .deleteFrom('challenges')
    .where('expires_at', '<', cutoffIso)
    .executeTakeFirst();
  return Number(purged.numDeletedRows);
}

/** Every challenge of one person (user erasure). */
export async function deleteChallengesOf(
  db: Executor,
  orgId: number,
  externalId: string,
): Promise<void> {
  await db
    .deleteFrom('challenges')
    .where('org_id', '=', orgId)
    .where('external_id', '=', externalId)
    .execute();
}
