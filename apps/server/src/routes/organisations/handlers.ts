import type {
  getOrganisation,
  getSettings,
  updateOrganisation,
  updateSettings,
} from '@voxkey/contract';
import { ApiError } from '../../errors.js';
import type { AppRouteHandler } from '../../http/types.js';
import * as organisations from '../../repositories/organisations.js';
import { assertCallbackUrlAllowed } from '../../services/organisations.js';

export const get: AppRouteHandler<typeof getOrganisation> = async (c) => {
  const row = await organisations.findOrganisation(c.get('deps').database.db, c.get('auth').orgId);
  if (!row) throw ApiError.notFound('Organisation');
  return c.json(organisations.toOrganisation(row), 200);
};

export const update: AppRouteHandler<typeof updateOrganisation> = async (c) => {
  const row = await organisations.updateOrganisation(
    c.get('deps').database.db,
    c.get('auth').orgId,
    c.req.valid('json'),
  );
  if (!row) throw ApiError.notFound('Organisation');
  return c.json(organisations.toOrganisation(row), 200);
};

export const getSettingsHandler: AppRouteHandler<typeof getSettings> = async (c) => {
  const row = await organisations.findSettings(c.get('deps').database.db, c.get('auth').orgId);
  if (!row) throw ApiError.notFound('Settings');
  return c.json(organisations.toSettings(row), 200);
};

export const updateSettingsHandler: AppRouteHandler<typeof updateSettings> = async (c) => {
  const body = c.req.valid('json');
  if (body.org_id !== c.get('auth').orgId)
    throw ApiError.field('org_id', 'must_match_path', 'Must equal the organisation in the path');
  const {
    callback_url,
    alert_on_failure,
    match_threshold,
    deepfake_threshold,
    enrollment_deepfake_threshold,
    reject_deepfake_enrollments,
    require_phrase,
    challenge_ttl_seconds,
  } = body.settings;
  if (callback_url) await assertCallbackUrlAllowed(callback_url, c.get('deps').config);
  const row = await organisations.updateSettings(c.get('deps').database.db, c.get('auth').orgId, {
    alertOnFailure: alert_on_failure,
    callbackUrl: callback_url,
    matchThreshold: match_threshold,
    deepfakeThreshold: deepfake_threshold,
    enrollmentDeepfakeThreshold: enrollment_deepfake_threshold,
    rejectDeepfakeEnrollments: reject_deepfake_enrollments,
    requirePhrase: require_phrase,
    challengeTtlSeconds: challenge_ttl_seconds,
  });
  if (!row) throw ApiError.notFound('Settings');
  return c.json(organisations.toSettings(row), 200);
};
