import { z } from 'zod';
import type { Database } from '../db/connection.js';
import {
  findOrganisation,
  listAllOrganisations,
  toOrganisation,
} from '../repositories/organisations.js';
import { listTokens, setTokenEnabled, toApiToken } from '../repositories/tokens.js';
import { JsonOption, OrgIdOption, parseOptions, TokenIdOption } from './options.js';
import { type CliIo, NotFoundError, printJson, printLine } from './output.js';

const ListOptions = z.object({ json: JsonOption });

export async function orgList(options: unknown, database: Database, io: CliIo): Promise<void> {
  const values = parseOptions(ListOptions, options);
  const organisations = (await listAllOrganisations(database.db)).map(toOrganisation);
  if (values.json) return printJson(io, { results: organisations });
  if (organisations.length === 0) return printLine(io, 'No organisations.');
  printLine(io, 'ID\tNAME\tEMAIL\tCREATED');
  for (const org of organisations)
    printLine(io, `${org.id}\t${org.name}\t${org.email}\t${org.created_at}`);
}

/** Exit 3 (not found) for an organisation id on the command line that does not exist. */
export async function requireOrganisation(database: Database, orgId: number): Promise<void> {
  if (!(await findOrganisation(database.db, orgId)))
    throw new NotFoundError(`No organisation with id ${orgId}`);
}

const TokenListOptions = z.object({ org: OrgIdOption, json: JsonOption });

/** Every token of the organisation, oldest first; never the secret (only its hash is stored). */
export async function tokenList(options: unknown, database: Database, io: CliIo): Promise<void> {
  const values = parseOptions(TokenListOptions, options);
  await requireOrganisation(database, values.org);
  const { rows } = await listTokens(database.db, values.org, {
    conditions: [],
    sort: { field: 'id', direction: 'asc' },
    page: 1,
    perPage: Number.MAX_SAFE_INTEGER,
  });
  const tokens = rows.map(toApiToken);
  if (values.json) return printJson(io, { results: tokens });
  if (tokens.length === 0) return printLine(io, `Organisation ${values.org} has no tokens.`);
  printLine(io, 'ID\tSTATE\tEXPIRES\tNAME');
  for (const t of tokens)
    printLine(
      io,
      `${t.id}\t${t.enabled ? 'enabled' : 'disabled'}\t${t.expires_at ?? 'never'}\t${t.friendly_name}`,
    );
}

const TokenDisableOptions = z.object({ org: OrgIdOption, token: TokenIdOption, json: JsonOption });

export async function tokenDisable(options: unknown, database: Database, io: CliIo): Promise<void> {
  const values = parseOptions(TokenDisableOptions, options);
  await requireOrganisation(database, values.org);
  const row = await setTokenEnabled(database.db, values.org, values.token, false);
  if (!row)
    throw new NotFoundError(`Organisation ${values.org} has no token with id ${values.token}`);
  if (values.json) printJson(io, toApiToken(row));
  else
    printLine(io, `Token ${row.id} (${row.friendly_name}) of organisation ${values.org} disabled.`);
}
