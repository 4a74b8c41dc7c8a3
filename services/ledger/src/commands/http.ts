import { OperationalCode, OperationalError } from '@agent-ledger/refusals';
import { apiError, transportError } from '@agent-ledger/client';
import type { Signer } from '@agent-ledger/core';
import { readFetch } from '../api-fetch.js';

/** Longest wait for one answer of the API, in ms: then CLIENT_TIMEOUT. */
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * GETs JSON from the ledger's API for a CLI command. An unreachable server
 * is a retryable OperationalError UNAVAILABLE, a wait that runs out
 * CLIENT_TIMEOUT, and a success answer that is not JSON INTERNAL: none of
 * them a refusal code. The body is untrusted and left to the caller.
 * Signed by `signer` (a registered key: the API answers reads within its role).
 */
export async function getJson(url: string, signer?: Signer): Promise<{ status: number; body: unknown }> {
  let response: Response;
  try {
    response = await readFetch(signer)(url, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  } catch (err) {
    throw transportError(err, `GET ${url}`);
  }
  let text: string;
  try {
    text = await response.text();
  } catch (err) {
    throw transportError(err, `GET ${url}`);
  }
  try {
    return { status: response.status, body: JSON.parse(text) as unknown };
  } catch (err) {
    if (response.status >= 400) return { status: response.status, body: null };
    throw new OperationalError(OperationalCode.INTERNAL, `${url}: HTTP ${response.status}, the answer is not JSON`, { cause: err, retryable: true });
  }
}

/**
 * GETs JSON and requires a 200: any other answer becomes the error it
 * means (a refusal's LedgerError with its ReasonCode, or an OperationalError:
 * 404 NOT_FOUND, 5xx INTERNAL or UNAVAILABLE).
 */
export async function getOk(url: string, what: string, signer?: Signer): Promise<unknown> {
  const { status, body } = await getJson(url, signer);
  if (status !== 200) throw apiError(status, body, what);
  return body;
}

/** An API base URL (untrusted CLI input), without a trailing slash; BAD_ARGUMENT otherwise. */
export function checkApiUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch (err) {
    throw new OperationalError(OperationalCode.BAD_ARGUMENT, `--api takes a URL such as http://127.0.0.1:8787, not ${text}`, { cause: err });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OperationalError(OperationalCode.BAD_ARGUMENT, `--api takes an http or https URL, not ${text}`);
  return url.href.replace(/\/+$/, '');
}
