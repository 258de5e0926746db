import type { UpdateQueryBuilder } from 'kysely';
import type { Dialect, Executor } from '../db/connection.js';
import type { DB } from '../db/types.js';
import { nowIso } from './clock.js';
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

/**
 * PostgreSQL: a claim (`UPDATE ... RETURNING *` of one job or delivery, its `updated_at` set to the claim's time)
 * and its organisation's turn in one statement, a data-modifying CTE: the turn is recorded exactly when a row is claimed.
 */
export function claimTakingTurn<
  T extends 'jobs' | 'webhook_deliveries',
  Row extends { org_id: number; updated_at: string },
>(db: Executor, column: TurnColumn, claim: UpdateQueryBuilder<DB, T, T, Row>) {
  return db
    .with('claimed', () => claim)
    .with('turn', (qc) =>
      qc
        .insertInto('queue_turns')
        .columns(['org_id', column])
        .expression((eb) => eb.selectFrom('claimed').select(['org_id', 'updated_at']))
        .onConflict((oc) =>
          oc.column('org_id').doUpdateSet((eb) => ({ [column]: eb.ref(`excluded.${column}`) })),
        ),
    )
    .selectFrom('claimed')
    .selectAll();
}

/** A claim's one statement per dialect: PostgreSQL's records the turn itself (claimTakingTurn), SQLite's does not. */
type ClaimStatements<Row> = Record<
  Dialect,
  (db: Executor, owner: string, leaseExpiresAt: string, now: string) => Promise<Row[]>
>;

/**
 * Claims with the dialect's statement, leased for `leaseMs` from now; on SQLite the organisation's
 * turn is recorded after the claim (it allows no data-modifying CTE).
 */
export async function claimInTurn<Row extends { org_id: number }>(
  db: Executor,
  dialect: Dialect,
  column: TurnColumn,
  statements: ClaimStatements<Row>,
  owner: string,
  leaseMs: number,
): Promise<Row | undefined> {
  const now = nowIso();
  const leaseExpiresAt = new Date(Date.now() + leaseMs).toISOString();
  const [claimed] = await statements[dialect](db, owner, leaseExpiresAt, now);
  if (claimed && dialect === 'sqlite') await takeTurn(db, column, claimed.org_id, now);
  return claimed;
}
