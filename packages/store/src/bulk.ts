import type pg from 'pg';
import type { TableSpec } from './rows.js';

/**
 * Set-based writes: a whole batch's rows for one table travel as one JSON
 * parameter and are unpacked with `json_to_recordset`, so a batch costs a
 * round trip per table rather than one per row, and every value stays a
 * bind parameter.
 */

function quoted(name: string): string {
  return `"${name}"`;
}

function recordset<R>(spec: TableSpec<R>): string {
  return `json_to_recordset($1::json) AS x(${spec.columns.map((c) => `${quoted(c.name)} ${c.sqlType}`).join(', ')})`;
}

function payload<R>(spec: TableSpec<R>, rows: readonly R[]): string {
  return JSON.stringify(rows.map((row) => Object.fromEntries(spec.columns.map((c) => [c.name, c.value(row)]))));
}

/** Inserts rows; a row whose key exists fails the statement (and the transaction) on the primary key. */
export async function insertRows<R>(client: pg.PoolClient, spec: TableSpec<R>, rows: readonly R[]): Promise<void> {
  if (rows.length === 0) return;
  const names = spec.columns.map((c) => quoted(c.name));
  await client.query(
    `INSERT INTO ${spec.table} (${names.join(', ')}) SELECT ${names.map((n) => `x.${n}`).join(', ')} FROM ${recordset(spec)}`,
    [payload(spec, rows)],
  );
}

/** Rewrites the non-key columns of existing rows, matched by primary key. */
export async function updateRows<R>(client: pg.PoolClient, spec: TableSpec<R>, rows: readonly R[]): Promise<void> {
  if (rows.length === 0) return;
  const assignments = spec.columns.filter((c) => !spec.key.includes(c.name)).map((c) => `${quoted(c.name)} = x.${quoted(c.name)}`);
  const match = spec.key.map((k) => `t.${quoted(k)} = x.${quoted(k)}`);
  await client.query(`UPDATE ${spec.table} AS t SET ${assignments.join(', ')} FROM ${recordset(spec)} WHERE ${match.join(' AND ')}`, [
    payload(spec, rows),
  ]);
}

/** Adds each row's `count` to the stored bucket with the same key, creating it if missing. */
export async function addCounts<R>(client: pg.PoolClient, spec: TableSpec<R>, countColumn: string, rows: readonly R[]): Promise<void> {
  if (rows.length === 0) return;
  const names = spec.columns.map((c) => quoted(c.name));
  const count = quoted(countColumn);
  await client.query(
    `INSERT INTO ${spec.table} (${names.join(', ')}) SELECT ${names.map((n) => `x.${n}`).join(', ')} FROM ${recordset(spec)}
     ON CONFLICT (${spec.key.map(quoted).join(', ')}) DO UPDATE SET ${count} = ${spec.table}.${count} + EXCLUDED.${count}`,
    [payload(spec, rows)],
  );
}

/** Reads the stored rows whose single-column primary key is one of `keys`. */
export async function loadRows<R>(client: pg.PoolClient, spec: TableSpec<R>, keys: ReadonlySet<string>): Promise<R[]> {
  if (keys.size === 0) return [];
  const [key] = spec.key;
  if (key === undefined || spec.key.length !== 1) throw new TypeError(`loadRows: ${spec.table} needs a single-column key`);
  const result = await client.query(`SELECT * FROM ${spec.table} WHERE ${quoted(key)} = ANY($1::text[])`, [[...keys]]);
  return result.rows.map((stored: Record<string, unknown>) => spec.read(stored));
}
