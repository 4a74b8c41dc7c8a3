import type { ReasonCode } from '@agent-ledger/refusals';
import type { Statement } from '@agent-ledger/core';

/** Risk tiers: 0 safe, 1 low, 2 medium, 3 high, 4 critical. */
export const Tier = { safe: 0, low: 1, medium: 2, high: 3, critical: 4 } as const;
/** One of {@link Tier}. */
export type Tier = (typeof Tier)[keyof typeof Tier];

/** Outcomes of the gate (DESIGN.md section 1). */
export const Outcome = { allow: 'allow', verify_first: 'verify_first', block: 'block' } as const;
/** One of {@link Outcome}. */
export type Outcome = (typeof Outcome)[keyof typeof Outcome];

/** Channels a proposal can arrive on; each has its own risk threshold. */
export const CHANNELS = ['api', 'cli', 'telegram', 'discord', 'web'] as const;
/** One of {@link CHANNELS}. */
export type Channel = (typeof CHANNELS)[number];

/**
 * An authority-stream entry as the gate folds it: the statement, its index on
 * the authority stream (partition 0) and its statement hash (SPEC.md section 4).
 * Signatures, key validity and roles were checked before the entry reached the
 * gate (sequencer, authority follower, verifier); the gate re-checks only what
 * decides whether a grant counts.
 */
export interface AuthorityEvent {
  readonly statement: Statement;
  readonly index: number;
  readonly statementHash: string;
  /** Sequencer time of the entry, Unix ms: co-signing deadlines and lifetimes are judged on it. */
  readonly sequencedAt: number;
}

/**
 * The concrete tool call an agent proposes: the operation tuple the grant
 * table is matched against, the tool and its arguments the classifier reads,
 * and the free text (`query`, `labels`) that is recorded but never authorises.
 * Structurally a `proposal.submitted` body (extra members are ignored).
 */
export interface Proposal {
  readonly agentId: string;
  readonly tool: string;
  readonly actionType: string;
  readonly targetResource: string;
  readonly recipient: string;
  readonly scope: string;
  readonly args: Readonly<Record<string, unknown>>;
  /** Free text from the agent. Untrusted; recorded in reasons, never read by a rule. */
  readonly query: string;
  /** The agent's own labels. Untrusted; recorded in reasons, never read by a rule. */
  readonly labels?: readonly string[];
}

/** Context of a proposal; `environment` and `crisis` feed context rules, other members are ignored. */
export interface DecideContext {
  readonly environment?: string;
  readonly crisis?: boolean;
  readonly [key: string]: unknown;
}

/** The input of {@link decide}: one proposal, the time and the channel it is judged at. */
export interface DecideCommand {
  /** Decision time, Unix milliseconds (the sequencer's `sequencedAt` for a logged proposal). */
  readonly now: number;
  readonly channel: Channel;
  readonly context: DecideContext;
  readonly proposal: Proposal;
}

/** What the gate decided, and why. */
export interface GateDecision {
  readonly outcome: Outcome;
  readonly tier: Tier;
  /** Sum of the weights of every rule that fired (pattern + behavioural + context). */
  readonly risk: number;
  /** Why the call is blocked, or which grant problem left it to a human; null when nothing to report. */
  readonly code: ReasonCode | null;
  /** `formatRefusal(code, detail)` when `code` is set, else null. */
  readonly refusal: string | null;
  /** The grant that allowed or blocked the call. */
  readonly grantId: string | null;
  /** Authority index of that grant's `grant.proposed` entry. */
  readonly grantEntry: number | null;
  /** Ids of the rules that fired, grant findings, the precedence branch taken, then the recorded query and labels. */
  readonly reasons: string[];
}
