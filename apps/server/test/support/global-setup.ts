import { ensurePostgresRunning } from './postgres.js';

export default async function setup(): Promise<void> {
  if (process.env.VOXKEY_TEST_DB === 'postgres') await ensurePostgresRunning();
}
