import pg from 'pg';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';

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
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'the Postgres URL does not parse', { cause });
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, `the Postgres URL has scheme ${parsed.protocol}, expected postgres:`);
  }
  let database: string;
  try {
    database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  } catch (cause) {
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'the Postgres URL names an undecodable database', { cause });
  }
  if (database === '' || database.length > 63) {
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'the Postgres URL must name a database of 1 to 63 characters');
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
  await client.connect();
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
  } finally {
    await client.end();
  }
}
