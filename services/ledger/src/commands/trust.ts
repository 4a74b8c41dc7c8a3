import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fetchTrust, ledgerSettings, loadTrust, pinTrust, type Trust } from '@agent-ledger/client';
import { fromHex, partitionOrigin, verifierKeyString, type TrustRoot } from '@agent-ledger/core';
import { Exit } from '../cli-error.js';
import { readTrustRoot } from '../trust-root-file.js';
import { apiFetch } from '../api-fetch.js';
import { reportSuccess } from './json-output.js';

/** Options of `ledger trust`. */
export interface TrustOptions {
  /** The ledger API (default http://127.0.0.1:8787). */
  readonly api?: string;
  /** The trust file to write (default `$LEDGER_HOME/trust.json`, or `.ledger/trust.json`). */
  readonly out?: string;
  /** The trust-root file handed out of band (default the installation's `trust-root.json` when there is one). */
  readonly trustRoot?: string;
  readonly home?: string;
  readonly json?: boolean;
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
  const trust = await fetchTrust(options.api ?? 'http://127.0.0.1:8787', { fetch: apiFetch(), ...(trustRoot === undefined ? {} : { trustRoot }), ...(pinned === undefined ? {} : { pinned }) });
  pinTrust(out, trust);
  const roles = (role: string): number => trust.keys.filter((k) => k.roles.includes(role as never)).length;
  const counts = { gate: roles('gate') + roles('service'), sequencer: roles('sequencer'), timer: roles('timer'), approver: roles('approver') + roles('bridge') };
  reportSuccess(
    options.json,
    [
      `pinned the trust of ${trust.trustRoot.origin} at authority size ${trust.authoritySize} (${counts.gate} gate, ${counts.sequencer} sequencer, ${counts.timer} timer, ${counts.approver} approver keys) to ${out}` +
        `${trustRoot === undefined ? ' (trust on first use: no trust-root file to compare with)' : ''}`,
    ],
    { origin: trust.trustRoot.origin, authoritySize: trust.authoritySize, keys: counts, out, trustOnFirstUse: trustRoot === undefined },
  );
  return Exit.ok;
}

/** Options of `ledger trust-root`. */
export interface TrustRootOptions {
  /** The pinned trust document (default `<home>/trust.json`). */
  readonly trust?: string;
  readonly home?: string;
  /** Print only the verifier-key strings, one a line. */
  readonly verifierKey?: boolean;
  readonly json?: boolean;
}

/**
 * `ledger trust-root`: what a transparency-log tool needs to check this
 * ledger's checkpoints, from the pinned trust document: the trust root, the
 * sequencer keys, and the C2SP verifier-key string of each current sequencer
 * key under each partition's origin line (the key name its checkpoints are
 * signed under, SPEC.md section 6), `<name>+<key id>+<base64(0x01 || key)>`.
 * With `--json`: `{"ok":true,"trustRoot","authoritySize","sequencerKeys","verifierKeys"}`,
 * or with `--verifier-key` `{"ok":true,"verifierKeys":[...]}`.
 */
export function trustRootCommand(options: TrustRootOptions): number {
  const home = options.home ?? process.env.LEDGER_HOME ?? '.ledger';
  const file = options.trust ?? join(home, 'trust.json');
  const trust = loadTrust(file);
  const { origin, eventPartitions } = ledgerSettings(trust);
  const sequencers = trust.keys.filter((k) => k.roles.includes('sequencer'));
  const current = sequencers.filter((k) => k.revokedAt === null);
  const verifierKeys: { partition: number; keyId: string; verifierKey: string }[] = [];
  for (let partition = 0; partition <= eventPartitions; partition++) {
    for (const key of current) verifierKeys.push({ partition, keyId: key.keyId, verifierKey: verifierKeyString(partitionOrigin(origin, partition), fromHex(key.keyId, 32)) });
  }
  if (options.verifierKey === true) {
    // Human: one string a line, as transparency-log tools read them; --json: the same in an object like every report.
    if (options.json === true) reportSuccess(true, [], { verifierKeys });
    else for (const v of verifierKeys) process.stdout.write(`${v.verifierKey}\n`);
    return Exit.ok;
  }
  reportSuccess(
    options.json,
    [
      `trust root of ${origin} (pinned in ${file}, authority size ${trust.authoritySize}): ${trust.trustRoot.rootKeys.length} root keys, threshold ${trust.trustRoot.threshold}`,
      ...sequencers.map((k) => `sequencer key ${k.keyId} (${k.principal}) registered at authority index ${k.registeredAt}${k.revokedAt === null ? '' : `, revoked at ${k.revokedAt}`}`),
      'verifier keys (C2SP signed-note), one per partition origin and current sequencer key:',
      ...verifierKeys.map((v) => `  ${v.verifierKey}`),
    ],
    {
      trustRoot: trust.trustRoot,
      authoritySize: trust.authoritySize,
      sequencerKeys: sequencers.map((k) => ({ keyId: k.keyId, principal: k.principal, registeredAt: k.registeredAt, revokedAt: k.revokedAt })),
      verifierKeys,
    },
  );
  return Exit.ok;
}
