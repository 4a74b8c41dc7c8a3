import { mkdirSync } from 'node:fs';
import type { PGlite, Results } from '@electric-sql/pglite';
import { OperationalCode, OperationalError } from '@agent-ledger/refusals';
import type { SqlClient, SqlNotifications, SqlPool, SqlQueryConfig, SqlResult } from './sql.js';

/**
 * Values typed as node-postgres types them, so that both adapters hand the
 * store the same rows: int8 and numeric as exact decimal strings (never a
 * float), bytea as a Buffer. Arrays follow their element type.
 */
const PG_COMPATIBLE_PARSERS = {
  20: (text: string): string => text, // int8
  1700: (text: string): string => text, // numeric
  17: (text: string): Buffer => Buffer.from(text.startsWith('\\x') ? text.slice(2) : text, 'hex'), // bytea
};

function toResult<R>(result: Results<R>): SqlResult<R> {
  return { rows: result.rows, rowCount: result.fields.length > 0 ? result.rows.length : (result.affectedRows ?? 0) };
}

/**
 * One PGlite database as a pool. PGlite is a single session, so the pool
 * lends it to one user at a time: a `connect()`ed client holds it from BEGIN
 * to COMMIT and `pool.query` waits for it, which keeps every transaction
 * whole. (A caller that holds a client must not wait on `pool.query`: it
 * would wait for itself.)
 */
class PglitePool implements SqlPool, SqlNotifications {
  readonly #db: PGlite;
  #tail: Promise<void> = Promise.resolve();
  #ended = false;

  constructor(db: PGlite) {
    this.#db = db;
  }

  /** Takes the session; resolves with the function that gives it back. */
  #take(): Promise<() => void> {
    let give: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      give = resolve;
    });
    const previous = this.#tail;
    this.#tail = previous.then(() => released);
    return previous.then(() => {
      let done = false;
      return () => {
        if (done) return;
        done = true;
        give();
      };
    });
  }

  async #run<R>(query: string | SqlQueryConfig, values?: unknown[]): Promise<SqlResult<R>> {
    if (this.#ended) throw new OperationalError(OperationalCode.UNAVAILABLE, 'the embedded database is closed', { retryable: false });
    const text = typeof query === 'string' ? query : query.text;
    const params = values ?? (typeof query === 'string' ? undefined : query.values);
    if (params === undefined || params.length === 0) {
      // Simple protocol: the text may hold several statements, as with pg.
      const results = (await this.#db.exec(text)) as Results<R>[];
      const mapped = results.map((r) => toResult(r));
      return (mapped.length === 1 ? mapped[0] : mapped) as SqlResult<R>;
    }
    return toResult(await this.#db.query<R>(text, params));
  }

  async query<R>(query: string | SqlQueryConfig, values?: unknown[]): Promise<SqlResult<R>> {
    const give = await this.#take();
    try {
      return await this.#run<R>(query, values);
    } finally {
      give();
    }
  }

  async connect(): Promise<SqlClient> {
    const give = await this.#take();
    let released = false;
    return {
      query: <R>(query: string | SqlQueryConfig, values?: unknown[]): Promise<SqlResult<R>> => {
        if (released) return Promise.reject(new OperationalError(OperationalCode.INTERNAL, 'query on a released embedded database session'));
        return this.#run<R>(query, values);
      },
      release: (destroy?: boolean | Error) => {
        if (released) return;
        released = true;
        // A session given back as unusable (its ROLLBACK failed) must not hand an open transaction to the next user.
        if (destroy !== undefined && destroy !== false) {
          this.#db.exec('ROLLBACK').then(give, give);
          return;
        }
        give();
      },
    };
  }

  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>> {
    return this.#db.listen(channel, onPayload);
  }

  async end(): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    const give = await this.#take();
    try {
      await this.#db.close();
    } finally {
      give();
    }
  }
}

/**
 * Opens (creating on first use) the PGlite database in `dir`, e.g.
 * `.ledger/pg`, as a {@link SqlPool}: the embedded Postgres of `ledger dev`.
 * PGlite keeps one process per directory; its files are Postgres's own,
 * with Postgres's WAL and fsync.
 */
export async function openPglitePool(dir: string): Promise<SqlPool & SqlNotifications> {
  mkdirSync(dir, { recursive: true });
  let db: PGlite;
  try {
    // Loaded on first use: a process on a Postgres server never loads the WASM build.
    const { PGlite } = await import('@electric-sql/pglite');
    db = await PGlite.create(dir, { parsers: PG_COMPATIBLE_PARSERS });
  } catch (cause) {
    throw new OperationalError(OperationalCode.UNAVAILABLE, `cannot open the embedded database in ${dir}: ${(cause as Error).message}`, { cause, retryable: false });
  }
  return new PglitePool(db);
}
