import { mkdirSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { Results } from '@electric-sql/pglite';
import { OperationalCode, OperationalError } from '@agent-ledger/refusals';
import type { PgliteCall, PgliteReply } from './pglite-protocol.js';
import type { SqlClient, SqlNotifications, SqlPool, SqlQueryConfig, SqlResult } from './sql.js';

/** What PglitePool uses of a PGlite database. */
interface PgliteSession {
  exec(text: string): Promise<Results[]>;
  query<R>(text: string, params: unknown[]): Promise<Results<R>>;
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** Distributes a Call over the union, so that `Omit<…, 'id'>` keeps each op's own fields. */
type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;

/**
 * A PGlite database on a worker thread (pglite-worker.ts): the WASM
 * Postgres's CPU time is off the main thread's event loop, so the roles and
 * the API beside it are not held up by the projector's transactions. Values
 * cross as structured clones: a bytea comes back as a Buffer, an error with
 * its message and own properties (the SQLSTATE `code` the store reads). The
 * worker holds the process open only while a call is waiting for it; if it
 * dies, every call waiting and every later one fails UNAVAILABLE.
 */
class WorkerPglite implements PgliteSession {
  readonly #worker: Worker;
  readonly #pending = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void }>();
  readonly #listeners = new Map<number, (payload: string) => void>();
  #next = 0;
  #dead: Error | undefined;

  constructor() {
    // None of the parent's node flags: some (--input-type, --eval's) make a worker with a file fail to start.
    this.#worker = new Worker(new URL('./pglite-worker.js', import.meta.url), { execArgv: [] });
    this.#worker.unref();
    this.#worker.on('message', (reply: PgliteReply) => {
      if ('notify' in reply) {
        this.#listeners.get(reply.notify)?.(reply.payload);
        return;
      }
      const call = this.#pending.get(reply.id);
      if (call === undefined) return;
      this.#pending.delete(reply.id);
      if (this.#pending.size === 0) this.#worker.unref();
      if ('error' in reply) {
        const err = Object.assign(new Error(reply.error.message), reply.error.props);
        err.name = reply.error.name;
        call.reject(err);
      } else call.resolve(reply.result);
    });
    const died = (cause: unknown): void => {
      this.#dead ??= new OperationalError(OperationalCode.UNAVAILABLE, `the embedded database's worker stopped: ${cause instanceof Error ? cause.message : String(cause)}`, { retryable: false, cause });
      for (const call of this.#pending.values()) call.reject(this.#dead);
      this.#pending.clear();
    };
    this.#worker.on('error', died);
    this.#worker.on('exit', (code) => died(`exit code ${code}`));
  }

  call(message: WithoutId<PgliteCall>): Promise<unknown> {
    if (this.#dead !== undefined) return Promise.reject(this.#dead);
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      if (this.#pending.size === 0) this.#worker.ref();
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ ...message, id });
    });
  }

  async exec(text: string): Promise<Results[]> {
    return ((await this.call({ op: 'exec', text })) as Results[]).map(withBuffers);
  }

  async query<R>(text: string, params: unknown[]): Promise<Results<R>> {
    return withBuffers((await this.call({ op: 'query', text, params })) as Results<R>);
  }

  async listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>> {
    const listenId = this.#next++;
    this.#listeners.set(listenId, onPayload);
    try {
      await this.call({ op: 'listen', channel, listenId });
    } catch (err) {
      this.#listeners.delete(listenId);
      throw err;
    }
    return async () => {
      this.#listeners.delete(listenId);
      await this.call({ op: 'unlisten', listenId });
    };
  }

  async close(): Promise<void> {
    try {
      if (this.#dead === undefined) await this.call({ op: 'close' });
    } finally {
      await this.#worker.terminate();
    }
  }
}

/** A structured clone turns a Buffer into a plain Uint8Array: bytea values (and arrays of them) become Buffers again. */
function withBuffers<R>(result: Results<R>): Results<R> {
  const fix = (value: unknown): unknown => {
    if (value instanceof Uint8Array && !Buffer.isBuffer(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    if (Array.isArray(value)) return value.map(fix);
    return value;
  };
  for (const row of result.rows as unknown[]) {
    if (Array.isArray(row)) row.forEach((v, i) => (row[i] = fix(v)));
    else if (typeof row === 'object' && row !== null) for (const [key, v] of Object.entries(row)) (row as Record<string, unknown>)[key] = fix(v);
  }
  return result;
}

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
  readonly #db: PgliteSession;
  #tail: Promise<void> = Promise.resolve();
  #ended = false;

  constructor(db: PgliteSession) {
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
    return toResult(await this.#db.query<R>(text, params as unknown[]));
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
 * with Postgres's WAL and fsync. It runs on a worker thread of this process
 * ({@link WorkerPglite}).
 */
export async function openPglitePool(dir: string): Promise<SqlPool & SqlNotifications> {
  mkdirSync(dir, { recursive: true });
  const db = new WorkerPglite();
  try {
    // Loaded on first use, in the worker: a process on a Postgres server never loads the WASM build.
    await db.call({ op: 'open', dir });
  } catch (cause) {
    await db.close().catch(() => undefined);
    throw new OperationalError(OperationalCode.UNAVAILABLE, `cannot open the embedded database in ${dir}: ${(cause as Error).message}`, { cause, retryable: false });
  }
  return new PglitePool(db);
}
