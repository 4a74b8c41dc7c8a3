/**
 * The little of a PostgreSQL client the store uses, so that it runs on a
 * Postgres server through `pg` (a `pg.Pool` satisfies these interfaces as it
 * is) and on PGlite in the process (`openPglitePool`). The SQL is the same
 * PostgreSQL in both: only the transport differs.
 */

/** What a statement returns. Values are typed as node-postgres types them (int8 and numeric as strings, timestamps as Date, json parsed). */
export interface SqlResult<R = Record<string, unknown>> {
  readonly rows: R[];
  readonly rowCount: number | null;
}

/** A statement with bind parameters; `name` lets a server prepare it once (PGlite ignores it). */
export interface SqlQueryConfig {
  readonly text: string;
  readonly values?: unknown[];
  readonly name?: string;
}

/** Runs statements. A text without parameters may hold several statements (simple protocol); it then resolves to an array of results. */
export interface SqlQueryable {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- row types are the caller's claim, as in pg
  query<R extends Record<string, any> = any>(query: string | SqlQueryConfig, values?: unknown[]): Promise<SqlResult<R>>;
}

/** One session taken from a pool: a transaction runs on it from BEGIN to COMMIT. */
export interface SqlClient extends SqlQueryable {
  /** Gives the session back; `true` (or an error) when it must not be reused. */
  release(destroy?: boolean | Error): void;
}

/** Sessions to one database. */
export interface SqlPool extends SqlQueryable {
  connect(): Promise<SqlClient>;
  end(): Promise<void>;
}

/** A database that delivers NOTIFY payloads in the process (PGlite); a server is listened to over its own connection instead. */
export interface SqlNotifications {
  /** Calls `onPayload` for each notification on `channel` once it is committed; resolves with the unsubscribe. */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
}

/** True when a pool delivers notifications itself. */
export function hasNotifications(pool: SqlPool): pool is SqlPool & SqlNotifications {
  return typeof (pool as Partial<SqlNotifications>).listen === 'function';
}
