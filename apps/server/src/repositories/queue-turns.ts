import type { Executor } from '../db/connection.js';
import { compiledOnce } from './compiled-once.js';

export type TurnColumn = 'job_claimed_at' | 'delivery_claimed_at';

const upsertTurn = (column: TurnColumn) =>
  compiledOnce((db, orgId: number, at: string) =>
    db
      .insertInto('queue_turns')
      .values({ org_id: orgId, [column]: at })
      .onConflict((oc) => oc.column('org_id').doUpdateSet({ [column]: at })),
  );
// After every claim of a job or a delivery: built and compiled once.
const upsertTurns = {
  job_claimed_at: upsertTurn('job_claimed_at'),
  delivery_claimed_at: upsertTurn('delivery_claimed_at'),
};

/** Records that the organisation just had a job or a delivery claimed: it goes to the back of the line. */
export async function takeTurn(
  db: Executor,
  column: TurnColumn,
  orgId: number,
  at: string,
): Promise<void> {
  await upsertTurns[column](db, orgId, at);
}
