import type { getOrganisation, getSettings, updateOrganisation, updateSettings } from '@voxkey/contract';
import { ApiError } from '../../errors.js';
import type { AppRouteHandler } from '../../http/types.js';
import * as organisations from '../../repositories/organisations.js';
import { assertCallbackUrlAllowed } from '../../services/organisations.js';

export const get: AppRouteHandler<typeof getOrganisation> = async (c) => {
  const row = await organisations.findOrganisation(c.var.deps.database.db, c.var.auth.orgId);
  if (!row) throw ApiError.notFound('Organisation');
  return c.json(organisations.toOrganisation(row), 200);
};

export const update: AppRouteHandler<typeof updateOrganisation> = async (c) => {
  const row = await organisations.updateOrganisation(c.var.deps.database.db, c.var.auth.orgId, c.req.valid('json'));
  if (!row) throw ApiError.notFound('Organisation');
  return c.json(organisations.toOrganisation(row), 200);
};

export const getSettingsHandler: AppRouteHandler<typeof getSettings> = async (c) => {
  const row = await organisations.findSettings(c.var.deps.database.db, c.var.auth.orgId);
  if (!row) throw ApiError.notFound('Settings');
  return c.json(organisations.toSettings(row), 200);
};

export const updateSettingsHandler: AppRouteHandler<typeof updateSettings> = async (c) => {
  const body = c.req.valid('json');
  if (body.org_id !== c.var.auth.orgId) throw ApiError.field('org_id', 'must_match_path', 'Must equal the organisation in the path');
  const { callback_url, alert_on_failure } = body.settings;
  if (callback_url) await assertCallbackUrlAllowed(callback_url, c.var.deps.config);
  const row = await organisations.updateSettings(c.var.deps.database.db, c.var.auth.orgId, {
    alertOnFailure: alert_on_failure,
    callbackUrl: callback_url,
  });
  if (!row) throw ApiError.notFound('Settings');
  return c.json(organisations.toSettings(row), 200);
};
