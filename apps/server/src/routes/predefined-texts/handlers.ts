import type {
  createPredefinedText,
  deletePredefinedText,
  getPredefinedText,
  listPredefinedTexts,
  updatePredefinedText,
} from '@voxkey/contract';
import { TEXT_FILTER_FIELDS, TEXT_SORT_FIELDS } from '@voxkey/contract';
import { isUniqueViolation } from '../../db/errors.js';
import { ApiError } from '../../errors.js';
import { parseListQuery, setPaginationHeaders } from '../../http/list-params.js';
import type { AppRouteHandler } from '../../http/types.js';
import * as texts from '../../repositories/predefined-texts.js';

const duplicate = (language: string, textCode: number) =>
  new ApiError(
    'already_exists',
    `A predefined text for language ${language} and text_code ${textCode} already exists`,
  );

/** The unique index decides under concurrency; a violation becomes the same 409. */
async function guardDuplicate<T>(
  language: string,
  textCode: number,
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicate(language, textCode);
    throw err;
  }
}

export const create: AppRouteHandler<typeof createPredefinedText> = async (c) => {
  const { org_id, ...values } = c.req.valid('json');
  if (org_id !== c.get('auth').orgId)
    throw ApiError.field('org_id', 'must_match_path', 'Must equal the organisation in the path');
  const row = await guardDuplicate(values.language, values.text_code, () =>
    texts.insertText(c.get('deps').database.db, c.get('auth').orgId, values),
  );
  return c.json(texts.toPredefinedText(row), 201);
};

export const list: AppRouteHandler<typeof listPredefinedTexts> = async (c) => {
  const query = parseListQuery(c.req.valid('query'), TEXT_FILTER_FIELDS, TEXT_SORT_FIELDS);
  const result = await texts.listTexts(c.get('deps').database.db, c.get('auth').orgId, query);
  setPaginationHeaders(c, result);
  return c.json({ results: result.rows.map(texts.toPredefinedText) }, 200);
};

export const get: AppRouteHandler<typeof getPredefinedText> = async (c) => {
  const row = await texts.findText(
    c.get('deps').database.db,
    c.get('auth').orgId,
    Number(c.req.valid('param').text_id),
  );
  if (!row) throw ApiError.notFound('Predefined text');
  return c.json(texts.toPredefinedText(row), 200);
};

export const update: AppRouteHandler<typeof updatePredefinedText> = async (c) => {
  const { org_id, ...changes } = c.req.valid('json');
  if (org_id !== undefined && org_id !== c.get('auth').orgId)
    throw ApiError.field('org_id', 'must_match_path', 'Must equal the organisation in the path');
  const db = c.get('deps').database.db;
  const id = Number(c.req.valid('param').text_id);
  const existing = await texts.findText(db, c.get('auth').orgId, id);
  if (!existing) throw ApiError.notFound('Predefined text');
  const language = changes.language ?? existing.language;
  const textCode = changes.text_code ?? existing.text_code;
  const row = await guardDuplicate(language, textCode, () =>
    texts.updateText(db, c.get('auth').orgId, id, changes),
  );
  if (!row) throw ApiError.notFound('Predefined text');
  return c.json(texts.toPredefinedText(row), 200);
};

export const remove: AppRouteHandler<typeof deletePredefinedText> = async (c) => {
  const row = await texts.deleteText(
    c.get('deps').database.db,
    c.get('auth').orgId,
    Number(c.req.valid('param').text_id),
  );
  if (!row) throw ApiError.notFound('Predefined text');
  return c.json(texts.toPredefinedText(row), 200);
};
