import { readFileSync } from 'node:fs';
import { Agent, fetch as undiciFetch } from 'undici';
import { OperationalCode, OperationalError } from '@agent-ledger/refusals';
import { signedFetch } from '@agent-ledger/client';
import type { Signer } from '@agent-ledger/core';
import { openedHomeApiCa } from './home.js';

/** CA files read, and the fetch each gives (one connection pool per CA). */
const byCa = new Map<string, typeof fetch>();

/**
 * The fetch the ledger's own clients (CLI, hook, MCP gateway) reach the API
 * with: the global fetch, or, given a CA file (`api.caFile`, LEDGER_API_CA),
 * one that trusts that CA (and no other) for the API's certificate.
 * By default: LEDGER_API_CA, else the `api.caFile` of the installation this
 * process opened.
 * @throws OperationalError BAD_CONFIGURATION when the CA file cannot be read.
 */
export function apiFetch(caFile: string | undefined = process.env.LEDGER_API_CA || openedHomeApiCa()): typeof fetch {
  if (caFile === undefined || caFile === '') return fetch;
  let found = byCa.get(caFile);
  if (found === undefined) {
    let ca: string;
    try {
      ca = readFileSync(caFile, 'utf8');
    } catch (err) {
      throw new OperationalError(OperationalCode.BAD_CONFIGURATION, `the API's CA file ${caFile} cannot be read: ${(err as Error).message}`, { cause: err });
    }
    const dispatcher = new Agent({ connect: { ca } });
    found = ((input: Parameters<typeof fetch>[0], init?: RequestInit) => undiciFetch(input as Parameters<typeof undiciFetch>[0], { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher })) as unknown as typeof fetch;
    byCa.set(caFile, found);
  }
  return found;
}

/**
 * The API fetch that signs every request as `signer` (a signed read), or the
 * plain one without a signer. `audience` is the installation the reads are
 * for (`installationOf(home.genesis())`); without it the API's own id is
 * asked once.
 */
export function readFetch(signer: Signer | undefined, caFile?: string, audience?: string): typeof fetch {
  const inner = apiFetch(caFile);
  return signer === undefined ? inner : signedFetch(signer, { fetch: inner, ...(audience === undefined ? {} : { audience }) });
}
