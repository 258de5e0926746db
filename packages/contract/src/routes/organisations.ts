import { createRoute } from '@hono/zod-openapi';
import { commonErrorResponses, jsonBody, jsonResponse, OrgPathParams } from '../schemas/common.js';
import {
  OrganisationSchema,
  SettingsSchema,
  UpdateOrganisationBodySchema,
  UpdateSettingsBodySchema,
} from '../schemas/organisations.js';

const tags = ['Organisation'];

export const getOrganisation = createRoute({
  method: 'get',
  path: '/organisations/{org_id}',
  operationId: 'getOrganisation',
  'x-voxkey-retry': 'safe',
  summary: 'Get the organisation',
  tags,
  request: { params: OrgPathParams },
  responses: {
    200: jsonResponse(OrganisationSchema, 'The organisation.'),
    ...commonErrorResponses,
  },
});

export const updateOrganisation = createRoute({
  method: 'patch',
  path: '/organisations/{org_id}',
  operationId: 'updateOrganisation',
  'x-voxkey-retry': 'never',
  summary: 'Update the organisation',
  description: 'Fields left out stay unchanged; `null` clears an optional field.',
  tags,
  request: { params: OrgPathParams, body: jsonBody(UpdateOrganisationBodySchema) },
  responses: {
    200: jsonResponse(OrganisationSchema, 'The full updated organisation.'),
    ...commonErrorResponses,
  },
});

export const getSettings = createRoute({
  method: 'get',
  path: '/organisations/{org_id}/settings',
  operationId: 'getSettings',
  'x-voxkey-retry': 'safe',
  summary: 'Get the organisation settings',
  tags,
  request: { params: OrgPathParams },
  responses: { 200: jsonResponse(SettingsSchema, 'The settings.'), ...commonErrorResponses },
});

export const updateSettings = createRoute({
  method: 'patch',
  path: '/organisations/{org_id}/settings',
  operationId: 'updateSettings',
  'x-voxkey-retry': 'never',
  summary: 'Update the organisation settings',
  description: 'Only the keys given in `settings` change.',
  tags,
  request: { params: OrgPathParams, body: jsonBody(UpdateSettingsBodySchema) },
  responses: {
    200: jsonResponse(SettingsSchema, 'The full settings record.'),
    ...commonErrorResponses,
  },
});

export const organisationRoutes = {
  getOrganisation,
  updateOrganisation,
  getSettings,
  updateSettings,
};
