import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { LedgerHome, initHome, openEmbeddedStorage, readingBus, serve, type RunningLedger, type ServeRole } from '@agent-ledger/ledger';

/** A fresh embedded installation (`ledger dev`'s storage) in a temporary directory. */
export function freshDevHome(options: { freshnessMs?: number } = {}): LedgerHome {
  const id = randomBytes(4).toString('hex');
  const dir = mkdtempSync(join(tmpdir(), 'ledger-dev-'));
  return initHome(dir, { origin: `ledger.test/${id}`, eventPartitions: 2, topicPrefix: `t${id}`, apiPort: 0, storage: 'embedded', ...options });
}

/** Starts roles in this process on the installation's embedded log and PGlite, as `ledger dev` does. */
export async function startDev(home: LedgerHome, roles: readonly ServeRole[]): Promise<RunningLedger> {
  const storage = await openEmbeddedStorage(home);
  return serve(home, roles, { storage });
}

/** A read-only reader of the installation's embedded log. */
export const devReader = (home: LedgerHome): ReturnType<typeof readingBus> => readingBus(home, 'test-reader');
