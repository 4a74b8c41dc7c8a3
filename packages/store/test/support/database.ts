import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { ensureDatabase, migrate, pgUrlFromEnv } from '../../src/index.js';

/** A database made for one test file, dropped at the end. */
export interface TestDatabase {
  readonly name: string;
  readonly url: string;
  readonly pool: pg.Pool;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

/** The server's `postgres` database, for CREATE and DROP DATABASE. */
function adminUrl(): string {
  const url = new URL(pgUrlFromEnv());
  url.pathname = '/postgres';
  return url.href;
}

/** A URL naming `database` on the configured server. */
export function databaseUrl(database: string): string {
  const url = new URL(pgUrlFromEnv());
  url.pathname = `/${database}`;
  return url.href;
}

/** A random database name, so concurrent runs never share state. */
export function randomDatabaseName(label: string): string {
  return `store_${label}_${randomBytes(6).toString('hex')}`;
}

/** Drops a database, closing other sessions on it (Postgres 13+). */
export async function dropDatabase(name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl(), connectionTimeoutMillis: 5000 });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

/** Creates a fresh database (through ensureDatabase), migrated unless `migrated` is false. */
export async function freshDatabase(label: string, options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const name = randomDatabaseName(label);
  const url = databaseUrl(name);
  await ensureDatabase(url);
  const pool = new pg.Pool({ connectionString: url, max: 8, connectionTimeoutMillis: 5000, idleTimeoutMillis: 1000 });
  // DROP ... WITH (FORCE) ends any session still open; that is expected at teardown.
  pool.on('error', () => undefined);
  if (options.migrated !== false) await migrate(pool);
  return {
    name,
    url,
    pool,
    async drop() {
      await pool.end();
      await dropDatabase(name);
    },
  };
}

/** Row count of a table. */
export async function countRows(pool: pg.Pool, table: string): Promise<number> {
  const result = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`);
  return Number(result.rows[0]?.n ?? 0);
}
