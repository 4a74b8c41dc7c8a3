import { LedgerError, ReasonCode } from '@agent-ledger/refusals';

/**
 * GETs JSON from the ledger's API for a CLI command. An unreachable server
 * is a retryable INTEGRITY_FAILURE and an answer that is not JSON a
 * SCHEMA_INVALID, both typed; the body is untrusted and left to the caller.
 */
export async function getJson(url: string): Promise<{ status: number; body: unknown }> {
  let response: Response;
  try {
    response = await fetch(url);
  } catch (err) {
    throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `cannot reach ${url}: ${(err as Error).message}`, { retryable: true, cause: err });
  }
  try {
    return { status: response.status, body: await response.json() };
  } catch (err) {
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, `${url}: HTTP ${response.status}, the answer is not JSON`, { cause: err });
  }
}
