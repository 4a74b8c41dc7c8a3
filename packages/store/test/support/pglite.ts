import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPglitePool } from '../../src/index.js';
import type { StoreUnderTest } from '../store.contract.js';

/** A fresh PGlite database in a temporary directory, removed by `drop`. */
export async function freshPglite(label: string): Promise<StoreUnderTest> {
  const dir = mkdtempSync(join(tmpdir(), `store-${label}-`));
  const pool = await openPglitePool(dir);
  return {
    pool,
    listen: (channel, onPayload) => pool.listen(channel, onPayload),
    async drop() {
      await pool.end();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
