import type { AppDeps } from '../deps.js';
import { countOrganisations } from '../repositories/organisations.js';
import { signUpOrganisation } from './organisations.js';

/**
 * On the very first start (no organisation yet) create a demo organisation and print its
 * trial token once, so a newcomer can call the API straight away.
 */
export async function bootstrapDemoOrganisation(
  deps: AppDeps,
  log: (text: string) => void,
): Promise<void> {
  const db = deps.database.db;
  if ((await countOrganisations(db)) > 0) return;
  const { organisation, token, webhook_secret } = await signUpOrganisation(
    db,
    { name: 'Demo organisation', email: 'demo@voxkey.invalid' },
    { sealer: deps.sealer },
  );
  log(
    [
      '',
      'First start: created a demo organisation.',
      `  organisation id: ${organisation.id}`,
      `  trial token:     ${token.bearer}`,
      `  webhook secret:  ${webhook_secret}`,
      `  (the token expires ${token.token.expires_at}; both are shown only now, keep them)`,
      `  try: curl -H "Authorization: Bearer ${token.bearer}" http://localhost:PORT/v1/organisations/${organisation.id}`,
      '',
    ].join('\n'),
  );
}
