import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fetchTrust, loadTrust, pinTrust, type Trust } from '@agent-ledger/client';
import type { TrustRoot } from '@agent-ledger/core';
import { Exit } from '../cli-error.js';
import { readTrustRoot } from '../trust-root-file.js';

/** Options of `ledger trust`. */
export interface TrustOptions {
  /** The ledger API (default http://127.0.0.1:8787). */
  readonly api?: string;
  /** The trust file to write (default `$LEDGER_HOME/trust.json`, or `.ledger/trust.json`). */
  readonly out?: string;
  /** The trust-root file handed out of band (default the installation's `trust-root.json` when there is one). */
  readonly trustRoot?: string;
  readonly home?: string;
}

/**
 * `ledger trust`: fetches `GET /v1/trust`, checks it (genesis signed by the
 * trust root, keys consistent with it), checks it against the trust-root
 * file and, when the trust file already exists, that the new document
 * extends the pinned one; then pins it.
 */
export async function trustCommand(options: TrustOptions): Promise<number> {
  const home = options.home ?? process.env.LEDGER_HOME ?? '.ledger';
  const out = options.out ?? join(home, 'trust.json');
  const rootFile = options.trustRoot ?? (existsSync(join(home, 'trust-root.json')) ? join(home, 'trust-root.json') : undefined);
  const trustRoot: TrustRoot | undefined = rootFile === undefined ? undefined : readTrustRoot(rootFile);
  const pinned: Trust | undefined = existsSync(out) ? loadTrust(out) : undefined;
  const trust = await fetchTrust(options.api ?? 'http://127.0.0.1:8787', { ...(trustRoot === undefined ? {} : { trustRoot }), ...(pinned === undefined ? {} : { pinned }) });
  pinTrust(out, trust);
  const roles = (role: string): number => trust.keys.filter((k) => k.roles.includes(role as never)).length;
  process.stdout.write(
    `pinned the trust of ${trust.trustRoot.origin} at authority size ${trust.authoritySize} (${roles('gate') + roles('service')} gate, ${roles('sequencer')} sequencer, ${roles('timer')} timer, ${roles('approver') + roles('bridge')} approver keys) to ${out}` +
      `${trustRoot === undefined ? ' (trust on first use: no trust-root file to compare with)' : ''}\n`,
  );
  return Exit.ok;
}
