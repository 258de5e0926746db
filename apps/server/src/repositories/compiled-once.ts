import type { Compilable, CompiledQuery } from 'kysely';
import type { Executor } from '../db/connection.js';

/**
 * A hot query whose shape never changes (only its values do): Kysely builds and compiles it once
 * per database handle, later calls run the same SQL with the new values. Building and compiling
 * costs more than running such a lookup on SQLite (the token lookup of every request). The handle's
 * transactions share its compilation (keyed by the dialect adapter they share): a transaction is a
 * new `Executor` each time, and the admission and completion of every job run in one.
 *
 * Every parameter of the compiled query must be one of the builder's values, as given: it is
 * compiled with a unique stand-in object for each value and each parameter is traced back to its
 * stand-in, so a value may be used several times and in any order, while a builder that inlines,
 * converts or leaves out a value fails on its first call instead of binding the wrong value later.
 * Constants go into the SQL as literals (`sql.lit`).
 */
export function compiledOnce<A extends readonly unknown[], O>(
  build: (db: Executor, ...values: A) => Compilable<O>,
) {
  const compiled = new WeakMap<object, { query: CompiledQuery<O>; valueAt: number[] }>();
  return async (db: Executor, ...values: A): Promise<O[]> => {
    const handle = db.getExecutor().adapter;
    let entry = compiled.get(handle);
    if (!entry) {
      const standIns = values.map((_, i) => ({ parameter: i }));
      const query = build(db, ...(standIns as unknown as A)).compile();
      const valueAt = query.parameters.map((p) => standIns.indexOf(p as { parameter: number }));
      if (valueAt.includes(-1) || standIns.some((_, i) => !valueAt.includes(i))) {
        throw new Error(
          `compiledOnce: every parameter of the query must be one of its values, each value used (${query.sql})`,
        );
      }
      entry = { query, valueAt };
      compiled.set(handle, entry);
    }
    const parameters = entry.valueAt.map((i) => values[i]);
    const result = await db.executeQuery<O>({ ...entry.query, parameters });
    return result.rows;
  };
}
