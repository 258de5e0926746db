import { createHash } from 'node:crypto';
import type pg from 'pg';

/**
 * Distinct statement texts a pool names. PostgreSQL keeps 10-30 kB per prepared statement per
 * connection, so this bounds the database server's memory (about 4 MB per connection); any further
 * text runs unnamed, as before.
 */
const MAX_NAMED_STATEMENTS = 128;
/** A text is named on its second call: one-off texts (a list's rare filter combination) stay unnamed. */
const CALLS_BEFORE_NAMING = 1;

type Query = (config: pg.QueryConfig) => Promise<pg.QueryResult>;
type PreparedClient = pg.PoolClient & {
  connection?: { parsedStatements?: Record<string, string> };
};

const hasCode = (err: unknown, code: string): err is Error & { routine?: string } =>
  err instanceof Error && (err as { code?: string }).code === code;

/** PostgreSQL refuses a prepared statement whose result columns a schema change altered. */
const isStalePlan = (err: unknown) =>
  hasCode(err, '0A000') && err.routine === 'RevalidateCachedQuery';

/** The connection no longer holds a statement node-postgres believes it prepared. */
const isMissingStatement = (err: unknown) => hasCode(err, '26000');

/**
 * PostgreSQL parses, analyses and plans an unnamed statement on every call. Every statement the
 * pool's clients run repeatedly is named here by a hash of its SQL text, so each connection
 * prepares it once and then only binds and executes it: about 40 % less of the database server's CPU
 * per verification (docs/benchmarks.md). The name is the text's hash, never a counter, so two
 * processes behind one pooler can never mean different statements by one name.
 *
 * A statement whose result columns another process's migration changed fails once on each
 * connection that prepared it: every text is then named anew (a new generation). A statement the
 * connection lost (node-postgres closes a named statement whose values it could not serialise, but
 * still believes it prepared) is forgotten, so the next call prepares it again. Either way, a
 * statement that failed outside a transaction has not run and is run again at once; one inside a
 * transaction fails it, as any transient error does.
 */
export function prepareStatementsPerConnection(pool: pg.Pool): void {
  let generation = 0;
  const calls = new Map<string, number>();
  const names = new Map<string, string>();
  const nameOf = (text: string): string | undefined => {
    const cached = names.get(text);
    if (cached !== undefined) return cached;
    const seen = calls.get(text) ?? 0;
    if (seen < CALLS_BEFORE_NAMING) {
      if (calls.size < MAX_NAMED_STATEMENTS * 8) calls.set(text, seen + 1);
      return undefined;
    }
    if (names.size >= MAX_NAMED_STATEMENTS) return undefined;
    const hash = createHash('sha256').update(text).digest('hex').slice(0, 32);
    const name = `voxkey_${hash}_${generation}`;
    names.set(text, name);
    return name;
  };
  const renameAll = () => {
    generation++;
    for (const [text, name] of names) names.set(text, name.replace(/_\d+$/, `_${generation}`));
  };

  pool.on('connect', (pooled) => {
    const client = pooled as PreparedClient;
    const query = client.query.bind(client) as unknown as (...args: unknown[]) => unknown;
    const run: Query = (config) => {
      const name = nameOf(config.text);
      return query(name ? { ...config, name } : config) as Promise<pg.QueryResult>;
    };
    // Kysely calls query(sql, parameters) and awaits it; any other form (a cursor) passes through.
    client.query = ((text: unknown, values?: unknown, ...rest: unknown[]) => {
      if (typeof text !== 'string' || !Array.isArray(values) || rest.length > 0)
        return query(text, values, ...rest);
      return run({ text, values }).catch((err: unknown) => {
        const name = names.get(text);
        if (name === undefined) throw err;
        if (isStalePlan(err)) renameAll();
        else if (isMissingStatement(err)) delete client.connection?.parsedStatements?.[name];
        else throw err;
        if (client.getTransactionStatus() !== 'I') throw err;
        return run({ text, values });
      });
    }) as typeof client.query;
  });
}
