import { LedgerError, formatRefusal, type ReasonCode } from '@agent-ledger/refusals';

/** The `execution.refused` statement an executor wrote about a decision it would not act on, and where it landed. */
export interface RefusalRecord {
  readonly id: string;
  readonly statementHash: string;
  /** Its log position once sequenced (null when it was not admitted within the client's short wait). */
  readonly position: { readonly partition: number; readonly index: number } | null;
}

/** Who refused: the gate (a verified block or deny) or the executor (a decision that did not verify). */
export type RefusedBy = 'gate' | 'executor';

/**
 * The tool did not run. `code` is the ReasonCode (the gate's, or the
 * executor's when the decision did not verify), `detail` why, `proposal`
 * the proposal hash, `position` the decision's log position (for the
 * executor's refusals: the position the refused receipt claimed, unverified,
 * or null), and `record` the executor's `execution.refused` on the log.
 */
export class ToolRefusedError extends LedgerError {
  readonly detail: string;
  readonly proposal: string;
  readonly by: RefusedBy;
  readonly position: { readonly partition: number; readonly index: number } | null;
  readonly record: RefusalRecord | null;

  constructor(fields: { code: ReasonCode; detail: string; proposal: string; by: RefusedBy; position: { partition: number; index: number } | null; record: RefusalRecord | null }) {
    super(fields.code, formatRefusal(fields.code, fields.detail));
    this.name = 'ToolRefusedError';
    this.detail = fields.detail;
    this.proposal = fields.proposal;
    this.by = fields.by;
    this.position = fields.position;
    this.record = fields.record;
  }
}
