import { parentPort } from 'node:worker_threads';
import type { PGlite } from '@electric-sql/pglite';
import { PG_COMPATIBLE_PARSERS, type PgliteCall, type PgliteReply } from './pglite-protocol.js';

/**
 * Worker-thread host of one PGlite database (see pglite.ts): PGlite's WASM
 * Postgres runs here, so that its work (the projector's transactions, the
 * API's reads) leaves the main thread's event loop to the roles, the HTTP API
 * and the log. The main thread lends its one session to one user at a time
 * (pglite.ts), so a transaction's statements arrive one after another; each
 * reply names the call it answers.
 */
const port = parentPort;
if (port === null) throw new Error('pglite-worker.js runs as a worker thread');

let db: PGlite | undefined;
const unlistens = new Map<number, () => Promise<void>>();

/** What crosses the thread boundary of an error: its message and own properties (a DatabaseError's SQLSTATE `code`, detail...). */
function describe(err: unknown): { message: string; name: string; props: Record<string, unknown> } {
  if (!(err instanceof Error)) return { message: String(err), name: 'Error', props: {} };
  const props: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(err)) {
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) props[key] = value;
  }
  return { message: err.message, name: err.name, props };
}

async function handle(call: PgliteCall): Promise<unknown> {
  switch (call.op) {
    case 'open': {
      const { PGlite } = await import('@electric-sql/pglite');
      db = await PGlite.create(call.dir, { parsers: PG_COMPATIBLE_PARSERS });
      return null;
    }
    case 'exec':
      return opened().exec(call.text);
    case 'query':
      return opened().query(call.text, call.params);
    case 'listen': {
      const listenId = call.listenId;
      unlistens.set(listenId, await opened().listen(call.channel, (payload) => port?.postMessage({ notify: listenId, payload } satisfies PgliteReply)));
      return null;
    }
    case 'unlisten': {
      const unlisten = unlistens.get(call.listenId);
      unlistens.delete(call.listenId);
      await unlisten?.();
      return null;
    }
    case 'close':
      await db?.close();
      db = undefined;
      return null;
  }
}

function opened(): PGlite {
  if (db === undefined) throw new Error('the embedded database is not open');
  return db;
}

port.on('message', (call: PgliteCall) => {
  handle(call).then(
    (result) => port.postMessage({ id: call.id, result } satisfies PgliteReply),
    (err: unknown) => port.postMessage({ id: call.id, error: describe(err) } satisfies PgliteReply),
  );
});
