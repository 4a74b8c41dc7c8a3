import { createHash } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SqlClient, SqlPool, SqlResult } from './sql.js';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';

/** The migrations shipped with the package: `packages/store/migrations`, from `dist/src/`. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

/**
 * Key of the session advisory lock that serialises migrations, so that two
 * processes starting at once do not both run a migration (or race creating
 * `schema_migrations` itself). An arbitrary constant, fixed forever.
 */
const MIGRATION_LOCK_KEY = '7305614420981170001';

const MIGRATION_FILE = /^(\d{3})_([a-z0-9_]+)\.sql$/;

interface MigrationFile {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
  readonly checksum: string;
}

async function readMigrations(directory: string): Promise<MigrationFile[]> {
  const names = (await readdir(directory)).filter((n) => n.endsWith('.sql')).sort();
  const migrations: MigrationFile[] = [];
  for (const name of names) {
    const match = MIGRATION_FILE.exec(name);
    if (match === null) throw new LedgerError(ReasonCode.SCHEMA_INVALID, `migration file ${name} is not named NNN_name.sql`);
    const version = Number(match[1]);
    if (migrations.some((m) => m.version === version)) {
      throw new LedgerError(ReasonCode.SCHEMA_INVALID, `two migration files have version ${version}`);
    }
    const sql = await readFile(join(directory, name), 'utf8');
    migrations.push({ version, name, sql, checksum: createHash('sha256').update(sql).digest('hex') });
  }
  return migrations;
}

/**
 * Applies the `NNN_*.sql` migrations in version order, each at most once
 * (recorded in `schema_migrations` with its checksum), each in its own
 * transaction, under a session advisory lock so concurrent callers wait for
 * one another. A migration that changed after it was applied is refused with
 * INTEGRITY_FAILURE: the schema would no longer be what the files say.
 */
export async function migrate(pool: SqlPool, options: { directory?: string } = {}): Promise<void> {
  const migrations = await readMigrations(options.directory ?? MIGRATIONS_DIR);
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('SELECT pg_advisory_lock($1::bigint)', [MIGRATION_LOCK_KEY]);
    try {
      await client.query(
        `CREATE TABLE IF NOT EXISTS schema_migrations (
           version    integer     PRIMARY KEY,
           name       text        NOT NULL,
           checksum   text        NOT NULL,
           applied_at timestamptz NOT NULL DEFAULT now()
         )`,
      );
      const applied = await client.query<{ version: number; checksum: string }>('SELECT version, checksum FROM schema_migrations');
      const checksums = new Map(applied.rows.map((r) => [r.version, r.checksum]));
      for (const migration of migrations) {
        const known = checksums.get(migration.version);
        if (known !== undefined) {
          if (known !== migration.checksum) {
            throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `migration ${migration.name} changed after it was applied`);
          }
          continue;
        }
        await client.query('BEGIN');
        try {
          await client.query(migration.sql);
          await client.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [
            migration.version,
            migration.name,
            migration.checksum,
          ]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw err;
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1::bigint)', [MIGRATION_LOCK_KEY]);
    }
  } catch (err) {
    broken = !(err instanceof LedgerError);
    throw err;
  } finally {
    // A connection that failed mid-protocol is discarded rather than reused.
    client.release(broken);
  }
}
