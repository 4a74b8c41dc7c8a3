import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { LedgerClient, signedFetch } from '@agent-ledger/client';
import type { BodyOf, Signer } from '@agent-ledger/core';
import { LedgerHome, initHome, serve, type RunningLedger, type ServeRole } from '@agent-ledger/ledger';

/** The admin key each running ledger's reads are signed with ({@link getJson}), and the last fresh home's for ledgers started elsewhere. */
const readers = new WeakMap<RunningLedger, Signer>();
let lastHome: LedgerHome | undefined;

/** Signs {@link getJson}'s reads of `running` with `signer` (by default an admin of the home it was started with). */
export function readAs(running: RunningLedger, signer: Signer): void {
  readers.set(running, signer);
}

/** A fresh installation on the real broker and Postgres: own topic prefix, own database. */
export function freshHome(options: { freshnessMs?: number } = {}): LedgerHome {
  const id = randomBytes(4).toString('hex');
  const dir = mkdtempSync(join(tmpdir(), 'ledger-live-'));
  lastHome = initHome(dir, {
    origin: `ledger.test/${id}`,
    eventPartitions: 2,
    topicPrefix: `t${id}`,
    pgUrl: `postgres://postgres@127.0.0.1:5432/ledger_t${id}`,
    apiPort: 0,
    ...options,
  });
  return lastHome;
}

/** Starts roles in-process and returns the running ledger with its API URL. */
export async function start(home: LedgerHome, roles: readonly ServeRole[] = ['api', 'sequencer', 'gate', 'projector', 'timer', 'siem']): Promise<RunningLedger> {
  const running = await serve(home, roles);
  readers.set(running, home.key('admin-alice'));
  return running;
}

/** An SDK client for a principal of the installation. */
export function clientFor(home: LedgerHome, running: RunningLedger, keyName: string): LedgerClient {
  return new LedgerClient({ baseUrl: running.apiUrl as string, signer: home.key(keyName), deciderKeys: [home.key('gate').keyId] });
}

/** A proposal body for the test agents. */
export function proposal(overrides: Partial<BodyOf<'proposal.submitted'>> = {}): Omit<BodyOf<'proposal.submitted'>, 'agentId'> {
  return {
    tool: 'shell',
    actionType: 'shell.exec',
    targetResource: 'host/build-01',
    recipient: 'none',
    scope: 'workspace',
    args: { command: 'ls -la /srv/app' },
    query: 'check the build output',
    labels: [],
    channel: 'api',
    context: { environment: 'staging', crisis: false, nonce: randomBytes(4).toString('hex') },
    ...overrides,
  };
}

/** Polls until `check` returns a value, or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 20_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Reads JSON from the API, signed by `as` (default: an admin of the ledger's home: {@link readAs}). */
export async function getJson<T>(running: RunningLedger, path: string, as?: Signer): Promise<{ status: number; body: T }> {
  const signer = as ?? readers.get(running) ?? lastHome?.key('admin-alice');
  if (signer === undefined) throw new Error('getJson: no key to sign the read with (start the ledger with start(), or call readAs())');
  const response = await signedFetch(signer)(`${running.apiUrl}${path}`);
  return { status: response.status, body: (await response.json()) as T };
}

export type { Signer };
