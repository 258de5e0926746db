import type { Compilable, CompiledQuery } from 'kysely';
import type { Executor } from '../db/connection.js';

/**
 * A hot query whose shape never changes (only its values do): Kysely builds and compiles it once
 * per database handle, later calls run the same SQL with the new values. Building and compiling
 * costs more than running such a lookup on SQLite (the token lookup of every request). The handle's
 * transactions share its compilation (keyed by the dialect adapter they share): a transaction is a
 * new `Executor` each time, and the admission and completion of every job run in one.
 *
 * The builder's values must become the query's parameters one for one, in order: it is compiled
 * with a unique stand-in object for each value and checked, so a builder that inlines, converts or
 * reorders a value fails on its first call instead of binding the wrong value later.
 */
export function compiledOnce<A extends readonly unknown[], O>(
  build: (db: Executor, ...values: A) => Compilable<O>,
) {
  const compiled = new WeakMap<object, CompiledQuery<O>>();
  return async (db: Executor, ...values: A): Promise<O[]> => {
    const handle = db.getExecutor().adapter;
    let query = compiled.get(handle);
    if (!query) {
      const standIns = values.map((_, i) => ({ parameter: i }));
      query = build(db, ...(standIns as unknown as A)).compile();
      const { parameters } = query;
      if (parameters.length !== values.length || parameters.some((p, i) => p !== standIns[i])) {
        throw new Error(
          `compiledOnce: the query's parameters must be its values in order (${query.sql})`,
        );
      }
      compiled.set(handle, query);
    }
    const result = await db.executeQuery<O>({ ...query, parameters: values });
    return result.rows;
  };
}
