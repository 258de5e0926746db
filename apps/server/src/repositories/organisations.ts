import type { Executor } from '../db/connection.js';
import type { OrganisationRow, OrganisationUpdate, SettingsRow } from '../db/types.js';
import { fromFlag, nowIso, toFlag } from './clock.js';

export function toOrganisation(row: OrganisationRow) {
  return {
    id: row.id,
    name: row.name,
    address: row.address,
    email: row.email,
    phone_number: row.phone_number,
    vat: row.vat,
    vies: row.vies,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function toSettings(row: SettingsRow) {
  return {
    id: row.id,
    org_id: row.org_id,
    settings: {
      alert_on_failure: fromFlag(row.alert_on_failure),
      callback_url: row.callback_url,
      match_threshold: row.match_threshold,
      deepfake_threshold: row.deepfake_threshold,
      enrollment_deepfake_threshold: row.enrollment_deepfake_threshold,
      reject_deepfake_enrollments: fromFlag(row.reject_deepfake_enrollments),
      require_phrase: fromFlag(row.require_phrase),
      challenge_ttl_seconds: row.challenge_ttl_seconds,
    },
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export interface NewOrganisationValues {
  name: string;
  email: string;
  address?: string | null;
  phone_number?: string | null;
  vat?: string | null;
  vies?: string | null;
}

export async function insertOrganisation(
  db: Executor,
  values: NewOrganisationValues,
): Promise<OrganisationRow> {
  const now = nowIso();
  return db
    .insertInto('organisations')
    .values({
      name: values.name,
      email: values.email,
      address: values.address ?? null,
      phone_number: values.phone_number ?? null,
      vat: values.vat ?? null,
      vies: values.vies ?? null,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findOrganisation(
  db: Executor,
  orgId: number,
): Promise<OrganisationRow | undefined> {
  return db.selectFrom('organisations').selectAll().where('id', '=', orgId).executeTakeFirst();
}

export async function countOrganisations(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('organisations')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export function updateOrganisation(
  db: Executor,
  orgId: number,
  changes: OrganisationUpdate,
): Promise<OrganisationRow | undefined> {
  return db
    .updateTable('organisations')
    .set({ ...changes, updated_at: nowIso() })
    .where('id', '=', orgId)
    .returningAll()
    .executeTakeFirst();
}

export async function insertSettings(
  db: Executor,
  orgId: number,
  values: { alertOnFailure?: boolean; callbackUrl?: string | null } = {},
): Promise<SettingsRow> {
  const now = nowIso();
  return db
    .insertInto('organisation_settings')
    .values({
      org_id: orgId,
      alert_on_failure: toFlag(values.alertOnFailure ?? false),
      callback_url: values.callbackUrl ?? null,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findSettings(db: Executor, orgId: number): Promise<SettingsRow | undefined> {
  return db
    .selectFrom('organisation_settings')
    .selectAll()
    .where('org_id', '=', orgId)
    .executeTakeFirst();
}

export function updateSettings(
  db: Executor,
  orgId: number,
  changes: {
    alertOnFailure?: boolean;
    callbackUrl?: string | null;
    matchThreshold?: number | null;
    deepfakeThreshold?: number | null;
    enrollmentDeepfakeThreshold?: number | null;
    rejectDeepfakeEnrollments?: boolean;
    requirePhrase?: boolean;
    challengeTtlSeconds?: number;
  },
): Promise<SettingsRow | undefined> {
  return db
    .updateTable('organisation_settings')
    .set({
      ...(changes.alertOnFailure !== undefined
        ? { alert_on_failure: toFlag(changes.alertOnFailure) }
        : {}),
      ...(changes.callbackUrl !== undefined ? { callback_url: changes.callbackUrl } : {}),
      ...(changes.matchThreshold !== undefined ? { match_threshold: changes.matchThreshold } : {}),
      ...(changes.deepfakeThreshold !== undefined
        ? { deepfake_threshold: changes.deepfakeThreshold }
        : {}),
      ...(changes.enrollmentDeepfakeThreshold !== undefined
        ? { enrollment_deepfake_threshold: changes.enrollmentDeepfakeThreshold }
        : {}),
      ...(changes.rejectDeepfakeEnrollments !== undefined
        ? { reject_deepfake_enrollments: toFlag(changes.rejectDeepfakeEnrollments) }
        : {}),
      ...(changes.requirePhrase !== undefined
        ? { require_phrase: toFlag(changes.requirePhrase) }
        : {}),
      ...(changes.challengeTtlSeconds !== undefined
        ? { challenge_ttl_seconds: changes.challengeTtlSeconds }
        : {}),
      updated_at: nowIso(),
    })
    .where('org_id', '=', orgId)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Takes the right to send a failure alert: succeeds for one caller only, and only when the last
 * alert is older than the cooldown (so several processes send one email).
 */
export async function claimFailureAlert(
  db: Executor,
  orgId: number,
  nowIso: string,
  cooldownStartIso: string,
): Promise<boolean> {
  const claimed = await db
    .updateTable('organisation_settings')
    .set({ last_failure_alert_at: nowIso })
    .where('org_id', '=', orgId)
    .where((eb) =>
      eb.or([
        eb('last_failure_alert_at', 'is', null),
        eb('last_failure_alert_at', '<', cooldownStartIso),
      ]),
    )
    .executeTakeFirst();
  return Number(claimed.numUpdatedRows) === 1;
}

export function listAllOrganisations(db: Executor): Promise<OrganisationRow[]> {
  return db.selectFrom('organisations').selectAll().orderBy('id').execute();
}
