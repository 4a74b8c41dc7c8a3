import { canonicalBytes, canonicalJson, sha256Hex, type BodyOf } from '@agent-ledger/core';

/**
 * Settings of the confirmation-fatigue signals (SPEC.md section 4,
 * `grant.suggested` and `approval.rushed`). They are the gate's settings and
 * not on the log; replay accepts any base reading time that yields the value.
 */
export interface FatigueSettings {
  /** Approved confirmations of one exact operation after which a grant is suggested (0: never). */
  readonly suggestAfter: number;
  /** Length of the window a suggestion proposes, from the approval that completed it (ms). */
  readonly suggestWindowMs: number;
  /** Minimum reading time of an operation of up to {@link READING_UNIT_BYTES} bytes (ms; 0: no rubber-stamp signal). */
  readonly minReadMs: number;
}

/** Defaults: a suggestion after 3 identical approvals, proposing an 8-hour window; 2 s to read an operation. */
export const DEFAULT_FATIGUE: FatigueSettings = Object.freeze({ suggestAfter: 3, suggestWindowMs: 8 * 3_600_000, minReadMs: 2_000 });

/** The minimum reading time grows by one `minReadMs` per this many bytes of the operation. */
export const READING_UNIT_BYTES = 512;
/** The minimum reading time never exceeds this (a tier-4 request has 10 s in all). */
export const MAX_MIN_READ_MS = 10_000;
/** Highest tier a grant is suggested for: the same line as batch approval. */
export const MAX_SUGGESTED_TIER = 2;
/** Most requests a suggestion names. */
export const MAX_SUGGESTED_REQUESTS = 64;

/**
 * Size of what an approver must read: the UTF-8 length of the RFC 8785
 * canonical JSON of the operation as the agent signed it.
 */
export function operationBytes(body: BodyOf<'proposal.submitted'>): number {
  const { tool, actionType, targetResource, recipient, scope, args, query } = body;
  return canonicalBytes({ tool, actionType, targetResource, recipient, scope, args, query }).length;
}

/** The exact operation a grant would match (section 7.2's five fields), as a fixed-length digest. */
export function operationKey(fields: Pick<BodyOf<'proposal.submitted'>, 'agentId' | 'actionType' | 'targetResource' | 'recipient' | 'scope'>): string {
  const { agentId, actionType, targetResource, recipient, scope } = fields;
  return sha256Hex(canonicalJson({ agentId, actionType, targetResource, recipient, scope }));
}

/** `min(MAX_MIN_READ_MS, minReadMs × ceil(bytes / READING_UNIT_BYTES))`, at least one unit. */
export function minimumReadingMs(bytes: number, minReadMs: number): number {
  return Math.min(MAX_MIN_READ_MS, minReadMs * Math.max(1, Math.ceil(bytes / READING_UNIT_BYTES)));
}

/** True when `minReadMs` is {@link minimumReadingMs} of `bytes` for some whole base ≥ 1. */
export function isReadingTime(minReadMs: number, bytes: number): boolean {
  if (minReadMs === MAX_MIN_READ_MS) return true;
  const units = Math.max(1, Math.ceil(bytes / READING_UNIT_BYTES));
  return minReadMs < MAX_MIN_READ_MS && minReadMs >= units && minReadMs % units === 0;
}
