import type pg from 'pg';

/** Distinct statement texts a pool names; any further text runs unnamed, as before. */
const MAX_NAMED_STATEMENTS = 512;

type Query = (config: pg.QueryConfig) => Promise<pg.QueryResult>;

/** PostgreSQL refuses to run a prepared statement whose result columns a schema change altered. */
function isStalePlan(err: unknown): boolean {
  return (
    err instanceof Error &&
    (err as { code?: string }).code === '0A000' &&
    err.message.includes('cached plan must not change result type')
  );
}

/**
 * PostgreSQL parses, analyses and plans an unnamed statement on every call. Every statement the
 * pool's clients run is named here by its SQL text, so each connection prepares it once and then
 * only binds and executes it: 40-47 % less of the database server's CPU per verification (docs/benchmarks.md).
 * A statement whose result columns another process's migration changed fails once on each
 * connection that prepared it; the texts are then named anew, and a statement that failed outside a
 * transaction is run again at once (one inside a transaction fails with it, as any transient error).
 */
export function prepareStatementsPerConnection(pool: pg.Pool): void {
  let generation = 0;
  let names = new Map<string, string>();
  const nameOf = (text: string): string | undefined => {
    let name = names.get(text);
    if (name === undefined && names.size < MAX_NAMED_STATEMENTS) {
      name = `voxkey_${generation}_${names.size}`;
      names.set(text, name);
    }
    return name;
  };

  pool.on('connect', (client) => {
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
        if (!isStalePlan(err)) throw err;
        generation++;
        names = new Map();
        if (client.getTransactionStatus() !== 'I') throw err;
        return run({ text, values });
      });
    }) as typeof client.query;
  });
}
