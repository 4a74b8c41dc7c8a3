import type { ReasonCode } from '@agent-ledger/refusals';
import type { Statement, StatementType } from '@agent-ledger/core';

/** What a worker learned from one entry line: everything that needs no other line. */
export interface EntryResult {
  readonly kind: 'entry';
  readonly line: number;
  readonly partition: number;
  readonly index: number;
  readonly sequencedAt: string;
  readonly sequencedAtMs: number;
  readonly authorityIndex: number;
  readonly prev: string;
  /** The hash the line claims. */
  readonly hash: string;
  /** True when `hash` equals the hash recomputed from the line's content (compared on the worker). */
  readonly hashMatches: boolean;
  /** Key ids whose signatures verified (all of the envelope's signatures did). */
  readonly signers: readonly string[];
  readonly id: string;
  readonly type: StatementType;
  readonly author: { readonly principal: string; readonly keyId: string };
  readonly issuedAtMs: number;
  /** The agent an events-stream statement is about (routing), else null. */
  readonly agentId: string | null;
  /** The whole statement, kept for authority statements and intake rejections (they are folded on the authority stream). */
  readonly statement: Statement | null;
  /**
   * Statement hash (SHA-256 of its canonical bytes), for the statements other
   * statements name by hash: authority statements (grant co-signatures name
   * the grant's), proposals, confirmation requests and human responses. Null for the rest.
   */
  readonly statementHash: string | null;
  /** The body, for the statements decision replay reads (proposals, decisions, confirmations, responses, timeouts, fatigue signals); else null. */
  readonly replayBody: Readonly<Record<string, unknown>> | null;
  /** Length of the entry line in bytes (what an undecided proposal costs the replay window). */
  readonly bytes: number;
}

/** A checkpoint line, still unverified (its key depends on the authority fold). */
export interface CheckpointResult {
  readonly kind: 'checkpoint';
  readonly line: number;
  readonly partition: number;
  readonly note: string;
}

/** The header line. */
export interface HeaderResult {
  readonly kind: 'header';
  readonly line: number;
  readonly origin: string;
  /** Declared entry count of each partition. */
  readonly partitions: readonly number[];
}

/** The trailer line. */
export interface TrailerResult {
  readonly kind: 'trailer';
  readonly line: number;
  readonly note: string;
}

/** A line that failed on its own. `claimed` is its position when that much could be read. */
export interface ErrorResult {
  readonly kind: 'error';
  readonly line: number;
  readonly code: ReasonCode;
  readonly message: string;
  readonly claimed: { readonly partition: number; readonly index: number } | null;
}

/** The outcome of checking one line in isolation. */
export type LineResult = EntryResult | CheckpointResult | HeaderResult | TrailerResult | ErrorResult;
