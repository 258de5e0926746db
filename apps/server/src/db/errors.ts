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
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url.startsWith('sqlite:') ? url : '(a URL that could not be parsed)';
  }
  if (parsed.password) parsed.password = '***';
  if (parsed.searchParams.has('password')) parsed.searchParams.set('password', '***');
  return parsed.toString().replaceAll('%2A%2A%2A', '***');
}

const CONNECTION_ERRNO = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);
/** PostgreSQL's admin_shutdown, crash_shutdown, cannot_connect_now and too_many_connections. */
const UNAVAILABLE_SQLSTATE = new Set(['57P01', '57P02', '57P03', '53300']);

/**
 * True when the database could not be reached or is not taking work now (a restart, a failover, a
 * full pool, SQLite locked past its busy timeout): a transient condition worth a retry, not a fault.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, message, cause } = err as { code?: unknown; message?: unknown; cause?: unknown };
  if (typeof code === 'string') {
    if (CONNECTION_ERRNO.has(code) || UNAVAILABLE_SQLSTATE.has(code)) return true;
    if (code.startsWith('08')) return true; // SQLSTATE class 08: connection exception
    if (code.startsWith('SQLITE_BUSY')) return true;
  }
  if (
    typeof message === 'string' &&
    // the pool's connect timeout; a connection ended mid-query; a transaction's rollback on it
    /timeout exceeded when trying to connect|Connection terminated|connection error and is not queryable/i.test(
      message,
    )
  )
    return true;
  return cause !== undefined && cause !== err && isDatabaseUnavailable(cause);
}
