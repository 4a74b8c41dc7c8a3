import { createHmac, timingSafeEqual } from 'node:crypto';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { parseStrictJsonBytes, utf8 } from '@agent-ledger/core';
import { ChannelEvents } from './channel-events.js';
import { ChannelDown } from './errors.js';
import { OutstandingRequests, SHORT_ID_PATTERN } from './outstanding.js';
import { describePendingApproval } from './pending-approval.js';
import { asObject, postJson } from './platform-http.js';
import { describeEscalation } from './escalation.js';
import type { AlertChannel, ApprovalChannel, ChannelAnswer, EscalationNotice, PendingApproval } from './types.js';

/** Header carrying `sha256=<hex HMAC-SHA256 of the raw body>`, both ways. */
export const WEBHOOK_SIGNATURE_HEADER = 'x-ledger-signature';

/** Options of {@link WebhookChannel}. */
export interface WebhookOptions {
  /** Where pending approvals are POSTed. */
  readonly url: string;
  /** Shared secret of the HMAC (at least 32 bytes). */
  readonly secret: string | Uint8Array;
  /** Timeout of the POST in ms (default 10 000). */
  readonly requestTimeoutMs?: number;
  readonly fetch?: typeof fetch;
  readonly now?: () => number;
}

/** Largest callback body accepted. */
const MAX_CALLBACK_BYTES = 16 * 1024;
const HASH = /^[0-9a-f]{64}$/;
const APPROVER = /^[A-Za-z0-9._@-]{1,128}$/;
const SIGNATURE = /^sha256=([0-9a-f]{64})$/;

/** HMAC-SHA256 header value of a body under a secret. */
export function webhookSignature(secret: string | Uint8Array, body: string | Uint8Array): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/**
 * Generic webhook channel: POSTs each pending approval as JSON, signed with
 * HMAC-SHA256 over the exact body bytes under a shared secret
 * (`x-ledger-signature: sha256=<hex>`). The receiver answers by sending back
 * `{"callbackId", "request", "answer", "approver"}`, signed the same way, to
 * whatever HTTP route the service exposes, which hands body and header to
 * {@link WebhookChannel.handleCallback}.
 */
export class WebhookChannel extends ChannelEvents implements ApprovalChannel, AlertChannel {
  readonly name = 'webhook' as const;
  readonly #options: WebhookOptions;
  readonly #secret: Uint8Array;
  readonly #fetch: typeof fetch;
  readonly #outstanding: OutstandingRequests<null>;

  constructor(options: WebhookOptions) {
    super();
    this.#secret = typeof options.secret === 'string' ? utf8(options.secret) : options.secret;
    if (this.#secret.length < 32) throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'the webhook secret must be at least 32 bytes');
    this.#options = options;
    this.#fetch = options.fetch ?? fetch;
    this.#outstanding = new OutstandingRequests({ now: options.now ?? Date.now });
  }

  /** POSTs the pending approval. @throws ChannelDown unless the receiver answers 2xx. */
  async notify(pending: PendingApproval): Promise<void> {
    const entry = this.#outstanding.issue(pending);
    const body = JSON.stringify({
      kind: 'agent-ledger.approval.pending',
      callbackId: entry.shortId,
      text: describePendingApproval(pending),
      pending,
    });
    try {
      await this.#postSigned(body);
    } catch (error) {
      this.#outstanding.discard(entry.shortId);
      throw error;
    }
  }

  /**
   * POSTs an escalation notice (`kind: agent-ledger.escalation`), signed like
   * a pending approval; nothing is answered. @throws ChannelDown unless the receiver answers 2xx.
   */
  async alert(notice: EscalationNotice): Promise<void> {
    await this.#postSigned(JSON.stringify({ kind: 'agent-ledger.escalation', text: describeEscalation(notice), escalation: notice }));
  }

  /** POSTs `body` to the receiver with its HMAC signature. @throws ChannelDown unless the receiver answers 2xx. */
  async #postSigned(body: string): Promise<void> {
    const reply = await postJson({
      channel: this.name,
      url: this.#options.url,
      headers: { [WEBHOOK_SIGNATURE_HEADER]: webhookSignature(this.#secret, body) },
      body,
      timeoutMs: this.#options.requestTimeoutMs ?? 10_000,
      fetch: this.#fetch,
      ignoreBody: true,
    });
    if (reply.status < 200 || reply.status > 299) throw new ChannelDown(this.name, `receiver answered HTTP ${reply.status}`);
  }

  /**
   * Checks and applies an answer sent back by the receiver (untrusted: it
   * came over the network). The HMAC is checked first, in constant time,
   * over the raw bytes; then the body is parsed strictly.
   *
   * @throws LedgerError INVALID_SIGNATURE (missing or wrong HMAC), SCHEMA_INVALID (malformed body),
   *   REPLAY (already answered), STALE_APPROVAL (unknown id or past the deadline), INTEGRITY_FAILURE
   *   (the id belongs to another request).
   */
  handleCallback(body: string | Uint8Array, signatureHeader: string | undefined): ChannelAnswer {
    try {
      return this.#apply(typeof body === 'string' ? utf8(body) : body, signatureHeader);
    } catch (error) {
      const code = error instanceof LedgerError ? error.code : ReasonCode.SCHEMA_INVALID;
      this.emitRefusal({ channel: this.name, code, platformIdentity: null, detail: error instanceof Error ? error.message : 'refused' });
      throw error instanceof LedgerError ? error : new LedgerError(ReasonCode.SCHEMA_INVALID, 'callback refused', { cause: error });
    }
  }

  #apply(bytes: Uint8Array, signatureHeader: string | undefined): ChannelAnswer {
    const claimed = typeof signatureHeader === 'string' ? SIGNATURE.exec(signatureHeader) : null;
    if (claimed === null) throw new LedgerError(ReasonCode.INVALID_SIGNATURE, 'missing or malformed callback signature');
    const expected = createHmac('sha256', this.#secret).update(bytes).digest();
    if (!timingSafeEqual(expected, Buffer.from(claimed[1] as string, 'hex'))) {
      throw new LedgerError(ReasonCode.INVALID_SIGNATURE, 'callback signature does not verify');
    }
    if (bytes.length > MAX_CALLBACK_BYTES) throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'callback body too large');
    let parsed: unknown;
    try {
      parsed = parseStrictJsonBytes(bytes);
    } catch (cause) {
      throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'callback body is not strict JSON', { cause });
    }
    const fields = asObject(parsed);
    const keys = fields === undefined ? [] : Object.keys(fields).sort();
    if (
      fields === undefined ||
      keys.join(',') !== 'answer,approver,callbackId,request' ||
      typeof fields.callbackId !== 'string' ||
      !SHORT_ID_PATTERN.test(fields.callbackId) ||
      typeof fields.request !== 'string' ||
      !HASH.test(fields.request) ||
      (fields.answer !== 'approve' && fields.answer !== 'deny') ||
      typeof fields.approver !== 'string' ||
      !APPROVER.test(fields.approver)
    ) {
      throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'callback must be {callbackId, request, answer: approve|deny, approver}');
    }
    const entry = this.#outstanding.peek(fields.callbackId);
    if (entry !== undefined && entry.pending.request !== fields.request) {
      throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, 'callback id belongs to another request');
    }
    const settled = this.#outstanding.settle(fields.callbackId);
    if (!settled.ok) throw new LedgerError(settled.code, settled.detail);
    const answer: ChannelAnswer = {
      channel: this.name,
      request: settled.entry.pending.request,
      answer: fields.answer,
      platformIdentity: `webhook:${fields.approver}`,
    };
    this.emitAnswer(answer);
    return answer;
  }
}
