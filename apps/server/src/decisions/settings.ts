import type { AppDeps } from '../deps.js';
import { fromFlag } from '../repositories/clock.js';
import { findSettings } from '../repositories/organisations.js';

/** The organisation's decision settings, the server's defaults filled in. */
export interface DecisionSettings {
  matchThreshold: number;
  /** The organisation's own deepfake thresholds; undefined where the engine's default applies. */
  deepfakeThreshold: number | undefined;
  enrolmentDeepfakeThreshold: number | undefined;
  rejectDeepfakeEnrollments: boolean;
  /** Verifications must say a phrase (issue 32). */
  requirePhrase: boolean;
}

/** Read when a decision is made (a job runs, a stream starts), so a change applies to requests still queued. */
export async function loadDecisionSettings(
  deps: Pick<AppDeps, 'database' | 'config'>,
  orgId: number,
): Promise<DecisionSettings> {
  const row = await findSettings(deps.database.db, orgId);
  return {
    matchThreshold: row?.match_threshold ?? deps.config.MATCH_THRESHOLD,
    deepfakeThreshold: row?.deepfake_threshold ?? undefined,
    enrolmentDeepfakeThreshold: row?.enrollment_deepfake_threshold ?? undefined,
    rejectDeepfakeEnrollments: row ? fromFlag(row.reject_deepfake_enrollments) : true,
    requirePhrase: row ? fromFlag(row.require_phrase) : false,
  };
}
