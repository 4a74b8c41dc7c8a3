import { join } from 'node:path';
import { createEmbeddedBus, type LogBus } from '@agent-ledger/kafka';
import { kafkaBusFor } from './kafka-client.js';
import type { SqlNotifications, SqlPool } from '@agent-ledger/store';
import type { LedgerHome } from './home.js';

/**
 * Where an embedded installation (`ledger dev`) keeps its state, beside its
 * keys and trust root:
 *
 *   .ledger/log/   the embedded log: segment files of checksummed frames, and LOCK (the process that writes it)
 *   .ledger/pg/    the embedded Postgres (PGlite) holding the projection
 */
export function embeddedPaths(home: LedgerHome): { readonly log: string; readonly database: string } {
  return { log: join(home.dir, 'log'), database: join(home.dir, 'pg') };
}

/** True when the installation keeps its log and database embedded (config `storage: "embedded"`). */
export function isEmbedded(home: LedgerHome): boolean {
  return home.config.storage === 'embedded';
}

/** The embedded log and database of one `ledger dev` process. */
export interface EmbeddedStorage {
  readonly bus: LogBus;
  readonly pool: SqlPool & SqlNotifications;
}

/**
 * Opens the installation's embedded log for writing, then its embedded
 * Postgres. The log's lock is taken first and guards both: a second
 * `ledger dev` on the same directory is refused before it touches the
 * database files (PGlite allows one process per directory).
 */
export async function openEmbeddedStorage(home: LedgerHome, options: { fsync?: 'always' | 'never' } = {}): Promise<EmbeddedStorage> {
  const paths = embeddedPaths(home);
  const bus = createEmbeddedBus({ dir: paths.log, ...(options.fsync === undefined ? {} : { fsync: options.fsync }) });
  // Any call opens the log (and takes its lock); this one also tells whether it holds anything yet.
  try {
    await bus.ensureTopics([]);
  } catch (err) {
    await bus.close();
    throw err;
  }
  const { openPglitePool } = await import('@agent-ledger/store');
  try {
    return { bus, pool: await openPglitePool(paths.database) };
  } catch (err) {
    await bus.close();
    throw err;
  }
}

/**
 * The log a reading command (`ledger export`, `ledger key list`) uses: the
 * embedded log read-only (no lock: it may run beside `ledger dev`, and sees
 * every committed transaction) for an embedded installation, Kafka otherwise.
 */
export function readingBus(home: LedgerHome, clientId: string): LogBus {
  if (isEmbedded(home)) return createEmbeddedBus({ dir: embeddedPaths(home).log, readOnly: true });
  return kafkaBusFor(home, clientId, { logLevel: 'nothing' });
}
