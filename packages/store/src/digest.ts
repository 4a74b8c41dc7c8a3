import { createHash } from 'node:crypto';
import type { SqlClient, SqlPool, SqlResult } from './sql.js';

/**
 * The tables a rebuild must reproduce, each with its primary key (the dump
 * order). `projector_offsets` is left out: it records Kafka positions, not
 * ledger content, so a projection rebuilt from another copy of the log (a
 * bundle, another topic) compares equal.
 */
export const PROJECTION_TABLES: readonly { readonly table: string; readonly key: readonly (readonly [string, string])[] }[] = [
  { table: 'partition_heads', key: [['partition', 'integer']] },
  { table: 'entries_seen', key: [['partition', 'integer'], ['index', 'bigint']] },
  { table: 'keys', key: [['key_id', 'text']] },
  { table: 'grants', key: [['grant_id', 'text']] },
  { table: 'grant_policy', key: [['authority_index', 'bigint']] },
  { table: 'grant_events', key: [['authority_index', 'bigint'], ['grant_id', 'text']] },
  { table: 'proposals', key: [['proposal_hash', 'text']] },
  { table: 'pending_approvals', key: [['request_hash', 'text']] },
  { table: 'enforcement_records', key: [['decision_hash', 'text']] },
  { table: 'refusals', key: [['statement_hash', 'text']] },
  { table: 'refusal_metrics', key: [['minute', 'timestamptz'], ['code', 'text']] },
];

const PAGE_ROWS = 5000;

/**
 * SHA-256 (hex) over an ordered dump of every projection table: for each
 * table its name, then each row's JSON text in primary-key order. Read in one
 * REPEATABLE READ snapshot, with the session settings that shape the text
 * (time zone, float digits) pinned, so equal tables give equal digests.
 */
export async function projectionDigest(pool: SqlPool): Promise<string> {
  const hash = createHash('sha256');
  const client = await pool.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    try {
      await client.query("SET LOCAL TimeZone = 'UTC'");
      await client.query('SET LOCAL extra_float_digits = 1');
      for (const { table, key } of PROJECTION_TABLES) {
        hash.update(`table ${table}\n`);
        const order = key.map(([name]) => `"${name}"`).join(', ');
        const after = key.map(([, type], i) => `$${i + 1}::${type}`).join(', ');
        let last: unknown[] | undefined;
        for (;;) {
          // Keyset pagination: constant memory however large the table is.
          const where = last === undefined ? '' : `WHERE (${order}) > (${after})`;
          const result = await client.query<Record<string, unknown> & { line: string }>(
            `SELECT row_to_json(t)::text AS line, ${order} FROM ${table} AS t ${where} ORDER BY ${order} LIMIT ${PAGE_ROWS}`,
            last ?? [],
          );
          for (const row of result.rows) hash.update(`${row.line}\n`);
          const tail = result.rows.at(-1);
          if (tail === undefined || result.rows.length < PAGE_ROWS) break;
          last = key.map(([name]) => tail[name]);
        }
      }
    } finally {
      await client.query('ROLLBACK');
    }
  } finally {
    client.release();
  }
  return hash.digest('hex');
}

/**
 * Empties every projection table and the stored offsets, so the projector
 * rebuilds from offset 0. Halts are cleared with the rest.
 */
export async function resetProjection(pool: SqlPool): Promise<void> {
  await pool.query(`TRUNCATE ${[...PROJECTION_TABLES.map((t) => t.table), 'projector_offsets'].join(', ')}`);
}
