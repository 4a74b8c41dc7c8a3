import type { ReasonCode } from '@agent-ledger/refusals';

/** Where and why verification stopped. */
export interface VerificationFailure {
  readonly partition: number;
  readonly index: number;
  readonly code: ReasonCode;
  readonly message: string;
  /** 1-based bundle line, when the failure belongs to one line. */
  readonly line: number | null;
}

/** The verdict on a bundle: the `--json` report of `ledger verify-chain`. */
export interface VerificationReport {
  readonly ok: boolean;
  /** Entries that passed every check before the first failure (all of them when ok). */
  readonly entries: number;
  readonly failure: VerificationFailure | null;
  /** Final size of every partition that was read. */
  readonly partitions: readonly { readonly partition: number; readonly size: number; readonly checkpointed: number }[];
}

/** Thrown inside the fold to stop at the first failure. */
export class FoldFailure extends Error {
  readonly failure: VerificationFailure;
  constructor(failure: VerificationFailure) {
    super(failure.message);
    this.failure = failure;
  }
}
