import { BODY_SCHEMAS, type BodyOf } from '@agent-ledger/core';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import type { ScreenResult } from './screener.js';
import { clip } from './text.js';

/** Longest rationale a `screening.verdict` statement carries (its schema's text limit). */
const MAX_STATEMENT_TEXT = 4096;

/**
 * The body of the `screening.verdict` statement for a result: to be passed to
 * `createStatement('screening.verdict', body, serviceKey)` and signed by a
 * key with the `service` role. The rationale is clipped to the schema's limit
 * (never split inside a surrogate pair). Throws `LedgerError(SCHEMA_INVALID)`
 * when the body does not satisfy the statement schema (a malformed agent id
 * or hash, an empty model name).
 */
export function screeningStatement(result: ScreenResult, agentId: string, proposalHash: string): BodyOf<'screening.verdict'> {
  const body = {
    agentId,
    proposal: proposalHash,
    verdict: result.verdict,
    rationale: clip(result.rationale, MAX_STATEMENT_TEXT),
    model: result.model,
    promptHash: result.promptHash,
  };
  const checked = BODY_SCHEMAS['screening.verdict'].safeParse(body);
  if (!checked.success) {
    const fields = checked.error.issues.map((issue) => issue.path.join('.') || '(root)').join(', ');
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, `screening.verdict body is invalid: ${fields}`, { cause: checked.error });
  }
  return checked.data;
}
