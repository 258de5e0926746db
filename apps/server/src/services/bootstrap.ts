import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import { countOrganisations } from '../repositories/organisations.js';
import { signUpOrganisation } from './organisations.js';

/**
 * On the very first start (no organisation yet) create a demo organisation and print its
 * trial token once, so a newcomer can call the API straight away.
 */
export async function bootstrapDemoOrganisation(db: Kysely<DB>, log: (line: string) => void): Promise<void> {
  if ((await countOrganisations(db)) > 0) return;
  const { organisation, token } = await signUpOrganisation(db, { name: 'Demo organisation', email: 'demo@voxkey.invalid' });
  log(
    [
      '',
      'First start: created a demo organisation.',
      `  organisation id: ${organisation.id}`,
      `  trial token:     ${token.bearer}`,
      `  (expires ${token.token.expires_at}; shown only now, keep it)`,
      `  try: curl -H "Authorization: Bearer ${token.bearer}" http://localhost:PORT/v1/organisations/${organisation.id}`,
      '',
    ].join('\n'),
  );
}
