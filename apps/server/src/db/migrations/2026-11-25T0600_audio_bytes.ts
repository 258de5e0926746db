import { createHash } from 'node:crypto';
import { decodeBase64Audio, inspectBytes } from '@voxkey/engine';
import type { Kysely } from 'kysely';
import { isPostgres } from './schema-helpers.js';

const bytesType = (db: Kysely<any>) => (isPostgres(db) ? ('bytea' as const) : ('blob' as const));

/** The idempotency fingerprint as of this migration: it hashes the recording's bytes (it hashed the base64 text). */
function fingerprint(
  row: {
    kind: string;
    external_id: string;
    language: string;
    device_fingerprint: string | null;
    device_type: number | null;
  },
  bytes: Uint8Array,
): string {
  const audioHash = createHash('sha256').update(bytes).digest('hex');
  const canonical = JSON.stringify([
    row.kind,
    row.external_id,
    row.language,
    row.device_fingerprint ?? null,
    row.device_type ?? null,
    audioHash,
  ]);
  return createHash('sha256').update(canonical).digest('hex');
}

/**
 * A job's recording is stored as bytes (it was base64 text), with the request-side header check's
 * result beside it so the worker does not check again. Jobs still holding audio are converted, and their fingerprint re-hashed
 * over the bytes so a replay of them is still recognised.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('audio_bytes', bytesType(db)).execute();
  await db.schema.alterTable('jobs').addColumn('audio_info', 'text').execute();
  const pending = await db
    .selectFrom('jobs')
    .select(['id', 'audio', 'kind', 'external_id', 'language', 'device_fingerprint', 'device_type'])
    .where('audio', 'is not', null)
    .execute();
  for (const row of pending) {
    const bytes = decodeBase64Audio(row.audio as string);
    let info: string | null = null;
    try {
      info = JSON.stringify(inspectBytes(bytes));
    } catch {
      // Accepted under other limits: the worker checks the header itself (no audio_info).
    }
    await db
      .updateTable('jobs')
      .set({
        audio_bytes: Buffer.from(bytes),
        audio_info: info,
        body_hash: fingerprint(row, bytes),
      })
      .where('id', '=', row.id)
      .execute();
  }
  await db.schema.alterTable('jobs').dropColumn('audio').execute();
  await db.schema.alterTable('jobs').renameColumn('audio_bytes', 'audio').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('audio_text', 'text').execute();
  const pending = await db
    .selectFrom('jobs')
    .select(['id', 'audio'])
    .where('audio', 'is not', null)
    .execute();
  for (const row of pending) {
    await db
      .updateTable('jobs')
      .set({ audio_text: Buffer.from(row.audio as Uint8Array).toString('base64') })
      .where('id', '=', row.id)
      .execute();
  }
  await db.schema.alterTable('jobs').dropColumn('audio').execute();
  await db.schema.alterTable('jobs').dropColumn('audio_info').execute();
  await db.schema.alterTable('jobs').renameColumn('audio_text', 'audio').execute();
}
