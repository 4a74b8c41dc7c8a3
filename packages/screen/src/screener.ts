import { canonicalJson, sha256Hex, type BodyOf, type JsonValue } from '@agent-ledger/core';

/** The three verdicts a screener may return (the `screening.verdict` statement's enum). */
export const Verdict = { safe: 'safe', uncertain: 'uncertain', dangerous: 'dangerous' } as const;
/** One of {@link Verdict}. */
export type Verdict = (typeof Verdict)[keyof typeof Verdict];

/**
 * Why a screener could not reach a verdict of its own. Every failure yields
 * `uncertain` (a human decides), never `safe`; tests switch on this code,
 * never on the rationale text.
 */
export const ScreenFailure = {
  /** The input was not a well-formed screening input (tier, risk, rules, hashes). */
  invalid_input: 'invalid_input',
  /** The endpoint could not be reached (connection refused, reset, redirect, DNS). */
  network: 'network',
  /** No complete answer within `timeoutMs` (headers or body). */
  timeout: 'timeout',
  /** The endpoint answered with a non-2xx status (429, 500, 401, ...). */
  http_status: 'http_status',
  /** The response was not `application/json`. */
  content_type: 'content_type',
  /** The response body or the completion's content exceeded its size limit. */
  oversize: 'oversize',
  /** The response body was not strict JSON, or not a chat completion (no choices, no message content). */
  response_invalid: 'response_invalid',
  /** The completion's content was not strict JSON `{verdict, rationale}` with a known verdict. */
  content_invalid: 'content_invalid',
  /** The completion's content named a verdict other than safe, uncertain or dangerous. */
  verdict_unknown: 'verdict_unknown',
} as const;
/** One of {@link ScreenFailure}. */
export type ScreenFailure = (typeof ScreenFailure)[keyof typeof ScreenFailure];

/** What a screener reads: the proposal and the gate's classification of it. */
export interface ScreenInput {
  /** The proposal body. Untrusted: its text is the agent's, not ours. */
  readonly proposal: BodyOf<'proposal.submitted'>;
  /** Statement hash of the `proposal.submitted` statement (64 lowercase hex). */
  readonly proposalHash: string;
  /** The gate's risk tier, 0-4. */
  readonly tier: number;
  /** The gate's risk score. */
  readonly risk: number;
  /** Ids of the gate rules that fired. */
  readonly rules: readonly string[];
}

/** A screener's answer. */
export interface ScreenResult {
  readonly verdict: Verdict;
  /** Why, for people (a model's words, or the failure that forced `uncertain`). */
  readonly rationale: string;
  /** Which screener answered: `rules/v3`, or the configured model name. */
  readonly model: string;
  /** SHA-256 (hex) of the RFC 8785 canonical bytes of `prompt`. */
  readonly promptHash: string;
  /**
   * The exact input the verdict was computed from: the chat messages sent to a
   * model, or the facts the rules read. Anyone holding it can recompute
   * `promptHash`.
   */
  readonly prompt: JsonValue;
  /** Set when the screener could not reach a verdict of its own (the verdict is then `uncertain`). */
  readonly failure: ScreenFailure | null;
}

/**
 * A pre-screen of a proposed tool call. Implementations never throw and never
 * answer `safe` when anything went wrong; what the verdict may do is decided
 * by {@link screeningPolicy}, not by the screener.
 */
export interface Screener {
  /** Model name this screener reports in its results. */
  readonly model: string;
  /**
   * True only when the verdict is a pure function of the input, computed in
   * this process with no I/O and no clock (the rules screener): such a
   * screener is a {@link LocalScreener} and may screen inside the
   * sequencer's transaction. False for anything that asks a service (a
   * model endpoint); it screens on the gate worker only.
   */
  readonly deterministic: boolean;
  screen(input: ScreenInput): Promise<ScreenResult>;
}

/**
 * A screener that declares itself {@link Screener.deterministic}: it also
 * answers synchronously, and `screenNow(input)` is exactly the result
 * `screen(input)` resolves to (the screener contract checks it).
 */
export interface LocalScreener extends Screener {
  readonly deterministic: true;
  /** The verdict `screen(input)` resolves to, now. */
  screenNow(input: ScreenInput): ScreenResult;
}

/** Whether `screener` declares itself deterministic and local, so its verdict may be computed inline. */
export function isLocalScreener(screener: Screener): screener is LocalScreener {
  return screener.deterministic === true && typeof (screener as Partial<LocalScreener>).screenNow === 'function';
}

/** SHA-256 (hex) of the RFC 8785 canonical bytes of a prompt. Throws `LedgerError(SCHEMA_INVALID)` if it is not canonicalisable. */
export function promptHashOf(prompt: JsonValue): string {
  return sha256Hex(canonicalJson(prompt));
}

const HASH = /^[0-9a-f]{64}$/;
const MAX_RULES = 256;
/** 1-256 characters, no lone surrogate (it could not be canonicalised into a prompt hash). */
const RULE_ID = /^(?:[^\ud800-\udfff]|[\ud800-\udbff][\udc00-\udfff]){1,256}$/;

function isRuleId(value: unknown): boolean {
  return typeof value === 'string' && RULE_ID.test(value);
}

/**
 * The reason `input` is not a well-formed screening input, or null when it is.
 * Checked at the screener's edge: callers are in-process, but a screener must
 * still never throw on what it is handed.
 */
export function screenInputProblem(input: ScreenInput): string | null {
  if (typeof input !== 'object' || input === null) return 'input is not an object';
  const { proposal, proposalHash, tier, risk, rules } = input;
  if (typeof proposalHash !== 'string' || !HASH.test(proposalHash)) return 'proposalHash is not 64 lowercase hex characters';
  if (typeof tier !== 'number' || !Number.isInteger(tier) || tier < 0 || tier > 4) return 'tier is not an integer 0-4';
  if (typeof risk !== 'number' || !Number.isFinite(risk) || risk < 0) return 'risk is not a finite non-negative number';
  if (!Array.isArray(rules) || rules.length > MAX_RULES || !rules.every(isRuleId)) return 'rules is not a list of rule ids';
  if (typeof proposal !== 'object' || proposal === null || Array.isArray(proposal)) return 'proposal is not an object';
  return null;
}
