import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../db/types.js';
import { deleteChallengesOf } from '../repositories/challenges.js';
import { eraseJobs, jobsOfUser } from '../repositories/erasure.js';
import { deleteUser } from '../repositories/users.js';

/**
 * Deletes a user and, in the same transaction, everything that still identifies the person:
 * its voiceprint and devices (by cascade), its request records and webhook deliveries (erased) and
 * its challenges (deleted).
 */
export function deleteUserCompletely(
  db: Kysely<DB>,
  orgId: number,
  userId: number,
): Promise<UserRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const user = await deleteUser(trx, orgId, userId);
    if (user) {
      await eraseJobs(trx, jobsOfUser(orgId, user.id, user.external_id), {
        inFlightReason: 'user_deleted',
      });
      await deleteChallengesOf(trx, orgId, user.external_id);
    }
    return user;
  });
}
