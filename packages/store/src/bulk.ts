import type { SqlClient, SqlPool, SqlResult } from './sql.js';
import type { Column, TableSpec } from './rows.js';

/**
 * Set-based writes. A batch's rows for one table travel column by column,
 * one typed array parameter per column, and are unpacked with
 * `unnest($1::t1[], $2::t2[], ...)`: every value stays a bind parameter, and
 * Postgres parses each array once instead of a JSON document per row. The
 * parts of a batch's write ({@link insertPart}, {@link updatePart},
 * {@link addCountsPart}) are data-modifying CTEs of one statement
 * ({@link StatementBuilder}), so a batch costs one round trip for all its
 * tables.
 */

function quoted(name: string): string {
  return `"${name}"`;
}

const NEEDS_BACKSLASH = /[\\"]/;
const BACKSLASHED = /[\\"]/g;

/**
 * The Postgres array literal of a one-dimensional array: each element quoted
 * (so empty strings, spaces, commas, braces and the word NULL stay text),
 * backslash and double quote escaped; null is NULL. Numbers print as
 * ECMAScript prints them, which Postgres reads back exactly. Built here
 * rather than by node-postgres so a column of a batch costs one string.
 */
export function arrayLiteral(values: readonly (string | number | boolean | null)[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const value = values[i];
    if (value === null || value === undefined) out += 'NULL';
    else if (typeof value !== 'string') out += String(value);
    else out += NEEDS_BACKSLASH.test(value) ? `"${value.replace(BACKSLASHED, '\\$&')}"` : `"${value}"`;
  }
  return `${out}}`;
}

/** The array literal of a text array (the value of a `text[]` column, carried as one element of a `text[]` parameter). */
export function textArrayLiteral(values: readonly string[]): string {
  return arrayLiteral(values);
}

function isArrayColumn<R>(column: Column<R>): boolean {
  return column.sqlType.endsWith('[]');
}

/**
 * Parameters of one statement, numbered in the order they are added. The
 * statement text depends only on the order of the `add` calls, never on the
 * values, so one text serves every batch as a prepared statement.
 */
export class StatementBuilder {
  readonly values: unknown[] = [];

  /** Adds a parameter; returns its typed placeholder (`$n::type`). */
  add(value: unknown, sqlType: string): string {
    this.values.push(value);
    return `$${this.values.length}::${sqlType}`;
  }
}

/**
 * `unnest(...) AS x(...)` over the rows, one array parameter per column. An
 * array-typed column travels as the array literal of each row's value and is
 * cast back in {@link selectList} (unnest would flatten a two-dimensional array).
 */
function unnestOf<R>(params: StatementBuilder, spec: TableSpec<R>, rows: readonly R[]): string {
  const arrays = spec.columns.map((c) => {
    if (isArrayColumn(c)) return params.add(arrayLiteral(rows.map((row) => textArrayLiteral(c.value(row) as readonly string[]))), 'text[]');
    return params.add(arrayLiteral(rows.map((row) => c.value(row) as string | number | boolean | null)), `${c.sqlType}[]`);
  });
  return `unnest(${arrays.join(', ')}) AS x(${spec.columns.map((c) => quoted(c.name)).join(', ')})`;
}

function selectList<R>(spec: TableSpec<R>): string {
  return spec.columns.map((c) => (isArrayColumn(c) ? `x.${quoted(c.name)}::${c.sqlType}` : `x.${quoted(c.name)}`)).join(', ');
}

/** An INSERT of the rows; a row whose key exists fails the statement (and the transaction) on the primary key. */
export function insertPart<R>(params: StatementBuilder, spec: TableSpec<R>, rows: readonly R[]): string {
  const names = spec.columns.map((c) => quoted(c.name));
  return `INSERT INTO ${spec.table} (${names.join(', ')}) SELECT ${selectList(spec)} FROM ${unnestOf(params, spec, rows)}`;
}

/** An UPDATE rewriting the non-key columns of existing rows, matched by primary key. */
export function updatePart<R>(params: StatementBuilder, spec: TableSpec<R>, rows: readonly R[]): string {
  const assignments = spec.columns
    .filter((c) => !spec.key.includes(c.name))
    .map((c) => `${quoted(c.name)} = ${isArrayColumn(c) ? `x.${quoted(c.name)}::${c.sqlType}` : `x.${quoted(c.name)}`}`);
  const match = spec.key.map((k) => `t.${quoted(k)} = x.${quoted(k)}`);
  return `UPDATE ${spec.table} AS t SET ${assignments.join(', ')} FROM ${unnestOf(params, spec, rows)} WHERE ${match.join(' AND ')}`;
}

/** An upsert adding each row's `countColumn` to the stored bucket with the same key, creating it if missing. */
export function addCountsPart<R>(params: StatementBuilder, spec: TableSpec<R>, countColumn: string, rows: readonly R[]): string {
  const names = spec.columns.map((c) => quoted(c.name));
  const count = quoted(countColumn);
  return `INSERT INTO ${spec.table} (${names.join(', ')}) SELECT ${selectList(spec)} FROM ${unnestOf(params, spec, rows)}
     ON CONFLICT (${spec.key.map(quoted).join(', ')}) DO UPDATE SET ${count} = ${spec.table}.${count} + EXCLUDED.${count}`;
}

/**
 * Reads the stored rows whose single-column primary key is one of `keys`,
 * through a named (prepared once per connection) statement.
 */
export async function loadRows<R>(client: SqlClient, spec: TableSpec<R>, keys: ReadonlySet<string>): Promise<R[]> {
  if (keys.size === 0) return [];
  const [key] = spec.key;
  if (key === undefined || spec.key.length !== 1) throw new TypeError(`loadRows: ${spec.table} needs a single-column key`);
  const result = await client.query({
    name: `store_load_${spec.table}`,
    text: `SELECT * FROM ${spec.table} WHERE ${quoted(key)} = ANY($1::text[])`,
    values: [[...keys]],
  });
  return result.rows.map((stored: Record<string, unknown>) => spec.read(stored));
}

/** Inserts rows in a statement of their own, prepared once per connection under `name`. */
export async function insertRows<R>(client: SqlClient, spec: TableSpec<R>, rows: readonly R[], name: string): Promise<void> {
  if (rows.length === 0) return;
  const params = new StatementBuilder();
  const text = insertPart(params, spec, rows);
  await client.query({ name, text, values: params.values });
}
