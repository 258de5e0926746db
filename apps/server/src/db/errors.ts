/** True for a unique-constraint violation in either dialect (a concurrent duplicate insert). */
export function isUniqueViolation(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  return (
    code === '23505' ||
    code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  );
}

/** The database could not be opened or migrated at start-up: said in one line with the URL, its password masked. */
export class DatabaseStartError extends Error {
  constructor(url: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`Could not use the database at DATABASE_URL=${maskPassword(url)}: ${reason}`, { cause });
  }
}

export function maskPassword(url: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^:/@]+:)[^@]*@/, '$1***@');
}
