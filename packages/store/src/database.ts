import pg from 'pg';
import { OperationalCode, OperationalError } from '@agent-ledger/refusals';

/** Where the store connects when `LEDGER_PG_URL` is not set. */
export const DEFAULT_PG_URL = 'postgres://postgres@127.0.0.1:5432/ledger';

/** The Postgres URL from the environment (`LEDGER_PG_URL`), or {@link DEFAULT_PG_URL}. */
export function pgUrlFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const url = env['LEDGER_PG_URL'];
  return url === undefined || url === '' ? DEFAULT_PG_URL : url;
}

/** A Postgres URL split into the server part and the database name (untrusted: it comes from the environment). */
function parsePgUrl(url: string): { server: URL; database: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (cause) {
    throw new OperationalError(OperationalCode.BAD_CONFIGURATION, 'the Postgres URL does not parse', { cause });
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new OperationalError(OperationalCode.BAD_CONFIGURATION, `the Postgres URL has scheme ${parsed.protocol}, expected postgres:`);
  }
  let database: string;
  try {
    database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  } catch (cause) {
    throw new OperationalError(OperationalCode.BAD_CONFIGURATION, 'the Postgres URL names an undecodable database', { cause });
  }
  if (database === '' || database.length > 63) {
    throw new OperationalError(OperationalCode.BAD_CONFIGURATION, 'the Postgres URL must name a database of 1 to 63 characters');
  }
  return { server: parsed, database };
}

/** Quotes an SQL identifier (database names cannot be bind parameters). */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * Creates the database the URL names unless it exists, connecting to the
 * server's `postgres` database. Safe when several processes start at once: a
 * concurrent creation of the same name counts as success.
 */
export async function ensureDatabase(url: string): Promise<void> {
  const { server, database } = parsePgUrl(url);
  const admin = new URL(server.href);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.href });
  // A connection dropped between queries is reported through the next query; never as an unhandled 'error' event.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (cause) {
    await client.end().catch(() => undefined);
    throw postgresError(cause, 'cannot connect to Postgres');
  }
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount !== 0) return;
    try {
      await client.query(`CREATE DATABASE ${quoteIdentifier(database)}`);
    } catch (err) {
      // 42P04 duplicate_database; 23505 when two CREATEs race on pg_database's unique index.
      const code = (err as { code?: unknown }).code;
      if (code !== '42P04' && code !== '23505') throw err;
    }
  } catch (err) {
    throw postgresError(err, 'cannot create the database');
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * SQLSTATE classes and node error codes that mean "the server is not there
 * right now" (connection refused or lost, shutting down, too many clients):
 * worth retrying. Class 08 is connection exceptions, 57P0x operator
 * intervention (pg_terminate_backend is 57P01), 53 insufficient resources.
 */
const UNAVAILABLE_NODE_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);

/** Configuration mistakes a retry will not fix: bad password, unknown role or database, no pg_hba entry. */
const CONFIGURATION_SQLSTATES: ReadonlySet<string> = new Set(['28000', '28P01', '3D000', '42501']);

/** True when `err` (anything thrown by pg) says the server could not be reached or dropped the connection. */
export function isPostgresUnavailable(err: unknown): boolean {
  if (err instanceof OperationalError) return err.code === OperationalCode.UNAVAILABLE;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    if (UNAVAILABLE_NODE_CODES.has(code)) return true;
    if (code.startsWith('08') || code.startsWith('57P') || code.startsWith('53')) return true;
  }
  const message = err instanceof Error ? err.message : '';
  // pg's own words for a connection that ended or never opened (no SQLSTATE).
  return /Connection terminated|connection timeout|Client has encountered a connection error|terminating connection|Connection ended/i.test(message);
}

/**
 * A typed error for a failed Postgres call: an outage is UNAVAILABLE
 * (retryable), a configuration mistake BAD_CONFIGURATION; anything else is
 * returned unchanged for the caller to judge.
 */
export function postgresError(err: unknown, action: string): unknown {
  if (err instanceof OperationalError) return err;
  const detail = err instanceof Error ? err.message : String(err);
  if (isPostgresUnavailable(err)) return new OperationalError(OperationalCode.UNAVAILABLE, `${action}: ${detail}`, { cause: err });
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && CONFIGURATION_SQLSTATES.has(code)) return new OperationalError(OperationalCode.BAD_CONFIGURATION, `${action}: ${detail}`, { cause: err });
  return err;
}

/**
 * A connection pool whose clients can never raise an unhandled 'error'
 * event: a checked-out client whose backend is terminated (an operator's
 * pg_terminate_backend, a Postgres restart) reports it through its
 * current or next query, which rejects, and the pool drops it; idle clients
 * are dropped by the pool. `onError` is told about each lost connection.
 */
export function createPool(url: string, options: { max?: number; onError?: (err: Error) => void } = {}): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 10, connectionTimeoutMillis: 10_000 });
  const report = options.onError ?? (() => undefined);
  pool.on('error', (err) => report(err));
  pool.on('connect', (client) => {
    client.on('error', (err) => report(err));
  });
  return pool;
}
