import { LedgerError, OperationalCode, OperationalError, ReasonCode } from '@agent-ledger/refusals';
import { apiError, transportError, type VerifiedDecision } from '@agent-ledger/client';
import type { TrustRoot } from '@agent-ledger/core';
import { verifyReceipt } from '../commands/receipt.js';
import { readTrustRoot } from '../trust-root-file.js';
import type { DecisionCheck } from './executor.js';

/** How often the receipt is asked for while its checkpoint is not yet signed. */
const RECEIPT_POLL_MS = 50;

/**
 * The executor's receipt check: before an allowed call runs, the decision's
 * receipt (its entry, the RFC 9162 inclusion proof and the signed checkpoint
 * that covers it, `GET /v1/receipts/:partition/:index`) is fetched and
 * verified offline against the pinned trust root, and it must be the receipt
 * of the very entry the SDK verified. Until the sequencer has sealed a
 * checkpoint over the decision the API answers 404 and the check waits, within
 * the executor's budget. Anything else fails closed.
 */
export function receiptCheck(baseUrl: string, trustRoot: TrustRoot, fetchImpl: typeof fetch = fetch): DecisionCheck {
  return async (decision: VerifiedDecision, _proposalHash: string, deadline: number) => {
    const { partition, index } = decision.entry;
    const what = `GET /v1/receipts/${partition}/${index}`;
    for (;;) {
      let response: Response;
      try {
        response = await fetchImpl(`${baseUrl}/v1/receipts/${partition}/${index}`, { signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())) });
      } catch (err) {
        throw transportError(err, what);
      }
      const text = await response.text();
      if (response.status === 200) {
        const verdict = verifyReceipt(text, trustRoot);
        if (!verdict.ok) throw new LedgerError(verdict.code ?? ReasonCode.INTEGRITY_FAILURE, `the decision's receipt does not verify: ${verdict.message}`);
        // Untrusted until here; verifyReceipt checked its shape.
        const receipt = JSON.parse(text) as { entry: { hash: string } };
        if (receipt.entry.hash !== decision.entry.hash) throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `the receipt at ${partition}/${index} is for another entry than the decision`);
        return;
      }
      if (response.status !== 404) {
        let body: unknown = null;
        try {
          body = JSON.parse(text) as unknown;
        } catch {
          body = null;
        }
        throw apiError(response.status, body, what);
      }
      if (Date.now() + RECEIPT_POLL_MS >= deadline) {
        throw new OperationalError(OperationalCode.CLIENT_TIMEOUT, `no signed checkpoint covers the decision at ${partition}/${index} within the budget`);
      }
      await new Promise((resolve) => setTimeout(resolve, RECEIPT_POLL_MS));
    }
  };
}

/** The checks an executor configuration asks for: the receipt, against the trust root it pins. */
export function receiptChecks(config: { readonly api: string; readonly trustRoot: string }): DecisionCheck[] {
  return [receiptCheck(config.api, readTrustRoot(config.trustRoot))];
}
