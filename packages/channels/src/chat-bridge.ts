import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { BODY_SCHEMAS, createStatement, nodeEd25519, signStatement, type BodyOf, type Ed25519Backend, type Envelope, type Signer } from '@agent-ledger/core';
import type { ChannelAnswer, PendingApproval } from './types.js';

/** Options of {@link ChatBridge}. */
export interface ChatBridgeOptions {
  /** The bridge's principal and key: registered with the `bridge` role (authority rules 2), the approver role under rules 1. */
  readonly signer: Signer;
  readonly ed25519?: Ed25519Backend;
  readonly now?: () => Date;
}

/**
 * Turns an answer received on a chat platform into a signed `human.response`.
 * A chat platform cannot hold the approver's key, so the bridge signs on the
 * approver's behalf with its own service key, and says so in the statement:
 * `assurance: 'platform'` and the platform identity that pressed the button.
 * Under authority rules 2 the assurance is the key's role, not the bridge's
 * say: a bridge key's response claiming anything but `platform` is refused
 * (KEY_ROLE, SPEC.md section 7.3), so a bridge never counts as a distinct
 * approver above MAX_PLATFORM_ASSURANCE_TIER. Whether such an answer counts
 * for the request's tier is the policy's call (see requireSelfSignedAbove).
 */
export class ChatBridge {
  readonly #signer: Signer;
  readonly #ed25519: Ed25519Backend;
  readonly #now: () => Date;

  constructor(options: ChatBridgeOptions) {
    this.#signer = options.signer;
    this.#ed25519 = options.ed25519 ?? nodeEd25519;
    this.#now = options.now ?? (() => new Date());
  }

  /**
   * The signed response for `answer` to `pending`.
   * @throws LedgerError INTEGRITY_FAILURE when the answer is for another request or its identity is not of its channel,
   *   STALE_APPROVAL past the deadline, SCHEMA_INVALID when the body would not be a valid `human.response`.
   */
  respond(pending: PendingApproval, answer: ChannelAnswer): Envelope<'human.response'> {
    if (answer.request !== pending.request) throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, 'the answer is for another request');
    if (!answer.platformIdentity.startsWith(`${answer.channel}:`)) {
      throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, 'the platform identity is not of the channel the answer came through');
    }
    const issuedAt = this.#now();
    if (issuedAt.getTime() >= Date.parse(pending.deadline)) throw new LedgerError(ReasonCode.STALE_APPROVAL, 'the confirmation deadline has passed');
    const candidate: BodyOf<'human.response'> = {
      agentId: pending.agentId,
      proposal: pending.proposal,
      request: pending.request,
      answer: answer.answer,
      assurance: 'platform',
      platformIdentity: answer.platformIdentity,
    };
    const parsed = BODY_SCHEMAS['human.response'].safeParse(candidate);
    if (!parsed.success) throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'the answer does not make a valid human.response');
    return signStatement(createStatement('human.response', parsed.data, this.#signer, issuedAt), [this.#signer], this.#ed25519);
  }
}
