import type { ReasonCode } from '@agent-ledger/refusals';

/** Channel names, in the default failover order, plus the web page. */
export const ChannelName = { telegram: 'telegram', discord: 'discord', cli: 'cli', webhook: 'webhook', web: 'web' } as const;
/** One of {@link ChannelName}; the same names the `confirmation.requested` statement lists. */
export type ChannelName = (typeof ChannelName)[keyof typeof ChannelName];

/** The exact operation an approver is asked about: the proposal's operation tuple and arguments. */
export interface ExactOperation {
  readonly tool: string;
  readonly actionType: string;
  readonly targetResource: string;
  readonly recipient: string;
  readonly scope: string;
  readonly args: Readonly<Record<string, unknown>>;
}

/** A confirmation request waiting for a human, as channels present it. */
export interface PendingApproval {
  /** Hash of the `proposal.submitted` statement. */
  readonly proposal: string;
  /** Hash of the `confirmation.requested` statement (what a `human.response` names). */
  readonly request: string;
  /** The agent that proposed the operation. */
  readonly agentId: string;
  /** Risk tier 0-4. */
  readonly tier: number;
  /** ISO 8601 deadline; no answer by then means deny. */
  readonly deadline: string;
  /** The operation itself, field for field. */
  readonly operation: ExactOperation;
}

/** An approver's answer as a channel received it (not yet signed). */
export interface ChannelAnswer {
  /** The channel it came through. */
  readonly channel: ChannelName;
  /** Hash of the confirmation request answered. */
  readonly request: string;
  readonly answer: 'approve' | 'deny';
  /** Who answered, as the platform vouches: `telegram:12345`, `discord:6789`, `webhook:alice`, `cli:alice`. */
  readonly platformIdentity: string;
}

/** An input a channel refused (wrong user, bad signature, replay, garbage), kept for the record. */
export interface ChannelRefusal {
  readonly channel: ChannelName;
  readonly code: ReasonCode;
  /** The platform identity claimed by the input, when it named one. */
  readonly platformIdentity: string | null;
  readonly detail: string;
}

/** Receives answers from a channel. */
export type AnswerListener = (answer: ChannelAnswer) => void;
/** Receives refusals from a channel. */
export type RefusalListener = (refusal: ChannelRefusal) => void;

/**
 * A way to reach a human approver. `notify` delivers a pending approval or
 * throws {@link ChannelDown}; answers arrive later through `onAnswer`. A
 * channel never answers on its own: silence stays silence.
 */
export interface ApprovalChannel {
  readonly name: ChannelName;
  /** Delivers the pending approval. @throws ChannelDown when the channel cannot deliver it. */
  notify(request: PendingApproval): Promise<void>;
  /** Subscribes to answers; returns the unsubscribe function. */
  onAnswer(listener: AnswerListener): () => void;
  /** Subscribes to refused inputs; returns the unsubscribe function. */
  onRefusal(listener: RefusalListener): () => void;
}

/** How loud an escalation is (the `level` of `escalation.raised`). */
export type EscalationLevel = 'notify' | 'admin' | 'emergency';

/** An escalation raised on the log, as channels tell people about it (no buttons: nothing to answer). */
export interface EscalationNotice {
  /** The agent whose proposal was escalated. */
  readonly agentId: string;
  /** Hash of the `proposal.submitted` statement. */
  readonly proposal: string;
  /** Hash of the `escalation.raised` statement. */
  readonly escalation: string;
  readonly level: EscalationLevel;
  /** Why, as the escalation says. */
  readonly reason: string;
  /** The operation, when the proposal is known; null otherwise. */
  readonly operation: ExactOperation | null;
}

/**
 * A way to tell people about an escalation. `alert` delivers the notice or
 * throws {@link ChannelDown}; nobody answers an alert.
 */
export interface AlertChannel {
  /** A routed channel (the web page is not one). */
  readonly name: Exclude<ChannelName, 'web'>;
  /** Delivers the notice. @throws ChannelDown when the channel cannot deliver it. */
  alert(notice: EscalationNotice): Promise<void>;
}
