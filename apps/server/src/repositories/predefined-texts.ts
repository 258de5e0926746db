import { TEXT_FILTER_FIELDS } from '@voxkey/contract';
import type { Executor } from '../db/connection.js';
import type { PredefinedTextRow } from '../db/types.js';
import { nowIso } from './clock.js';
import { compiledOnce } from './compiled-once.js';
import { columnsOf, type ListQuery, type ListResult, listRows } from './list-query.js';

export function toPredefinedText(row: PredefinedTextRow) {
  return {
    id: row.id,
    org_id: row.org_id,
    language: row.language,
    text_code: row.text_code,
    text: row.text,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

const TEXT_FIELDS = columnsOf(TEXT_FILTER_FIELDS);

export function listTexts(
  db: Executor,
  orgId: number,
  query: ListQuery,
): Promise<ListResult<PredefinedTextRow>> {
  return listRows(
    db.selectFrom('predefined_texts').selectAll().where('org_id', '=', orgId),
    query,
    TEXT_FIELDS,
  );
}

const selectTextById = compiledOnce((db, orgId: number, id: number) =>
  db.selectFrom('predefined_texts').selectAll().where('org_id', '=', orgId).where('id', '=', id),
);

export async function findText(
  db: Executor,
  orgId: number,
  id: number,
): Promise<PredefinedTextRow | undefined> {
  return (await selectTextById(db, orgId, id))[0];
}

export async function insertText(
  db: Executor,
  orgId: number,
  values: { language: string; text_code: number; text: string },
): Promise<PredefinedTextRow> {
  const now = nowIso();
  return db
    .insertInto('predefined_texts')
    .values({ org_id: orgId, ...values, created_at: now, updated_at: now })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function updateText(
  db: Executor,
  orgId: number,
  id: number,
  changes: { language?: string; text_code?: number; text?: string },
): Promise<PredefinedTextRow | undefined> {
  return db
    .updateTable('predefined_texts')
    .set({ ...changes, updated_at: nowIso() })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export function deleteText(
  db: Executor,
  orgId: number,
  id: number,
): Promise<PredefinedTextRow | undefined> {
  return db
    .deleteFrom('predefined_texts')
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}
