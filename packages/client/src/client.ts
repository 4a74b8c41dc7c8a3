import { LedgerError, OperationalCode, OperationalError, ReasonCode, formatRefusal, isReasonCode } from '@agent-ledger/refusals';
import { apiError, readJson, transportError } from './errors.js';
import {
  EntrySchema,
  canonicalJson,
  createStatement,
  entryHash,
  envelopeHash,
  headerOf,
  nodeEd25519,
  signStatement,
  statementHash,
  verifyEnvelopeSignatures,
  type BodyOf,
  type Ed25519Backend,
  type Entry,
  type Envelope,
  type Signer,
  type StatementType,
} from '@agent-ledger/core';

/** Options of {@link LedgerClient}. */
export interface ClientOptions {
  /** Base URL of the ledger API, e.g. http://127.0.0.1:8787. */
  readonly baseUrl: string;
  /** The principal and private key this client signs with. */
  readonly signer: Signer;
  /** Key ids allowed to sign decisions (the gate's service keys), pinned by the caller. */
  readonly deciderKeys: readonly string[];
  /** Ed25519 implementation (node:crypto by default; nobleEd25519 in a browser). */
  readonly ed25519?: Ed25519Backend;
  /** fetch implementation (global fetch by default). */
  readonly fetch?: typeof fetch;
  /** Longest wait for one answer of the API beyond a long-poll's own wait, in ms (default 30 s): then CLIENT_TIMEOUT. */
  readonly requestTimeoutMs?: number;
}

/** A decision the client verified: signed by a pinned decider, bound to the caller's own proposal. */
export interface VerifiedDecision {
  readonly outcome: 'allow' | 'verify_first' | 'block' | 'deny';
  readonly code: ReasonCode | null;
  readonly refusal: string | null;
  readonly proposal: string;
  readonly entry: Entry;
}

/** Submission receipt from the API. */
export interface Submitted {
  readonly id: string;
  readonly statementHash: string;
  readonly partition: number;
}

/**
 * What became of a statement the API accepted (`GET /v1/statements/:id`):
 * still pending, admitted at a ledger position, rejected by the sequencer
 * (with its code and the `intake.rejected` entry's position), or refused by
 * the API.
 */
export type StatementOutcome =
  | { readonly id: string; readonly status: 'pending' }
  | { readonly id: string; readonly status: 'admitted'; readonly partition: number; readonly index: number }
  | { readonly id: string; readonly status: 'rejected'; readonly code: ReasonCode; readonly detail: string; readonly partition: number; readonly index: number }
  | { readonly id: string; readonly status: 'refused'; readonly code: ReasonCode; readonly detail: string };

async function requestJson(fetchImpl: typeof fetch, url: string, what: string, init: RequestInit, timeoutMs: number): Promise<{ status: number; body: unknown }> {
  let response: Response;
  try {
    response = await fetchImpl(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    throw transportError(err, what);
  }
  return { status: response.status, body: await readJson(response, what) };
}

/**
 * Submits an envelope signed elsewhere (by one key or several: a partly
 * signed statement collected from several admins) to `POST /v1/statements`.
 * @throws LedgerError with the refusal's code; OperationalError when the API cannot be reached or fails.
 */
export async function submitEnvelope(
  baseUrl: string,
  envelope: Envelope,
  options: { readonly fetch?: typeof fetch; readonly requestTimeoutMs?: number } = {},
): Promise<Submitted> {
  const what = `POST /v1/statements (${envelope.statement.type})`;
  const { status, body } = await requestJson(options.fetch ?? fetch, `${baseUrl}/v1/statements`, what, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(envelope),
  }, options.requestTimeoutMs ?? 30_000);
  if (status !== 202) throw apiError(status, body, what);
  const answer = body as Partial<Submitted> | null;
  if (typeof answer?.statementHash !== 'string' || typeof answer.id !== 'string' || typeof answer.partition !== 'number') {
    throw new OperationalError(OperationalCode.INTERNAL, `${what}: HTTP 202 without a statement hash`, { retryable: true });
  }
  if (answer.statementHash !== statementHash(envelope.statement)) {
    throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, 'the API acknowledged a different statement hash');
  }
  return { id: answer.id, statementHash: answer.statementHash, partition: answer.partition };
}

/** `GET /v1/statements/:id` once (the answer is untrusted: checked field by field). */
export async function statementOutcome(baseUrl: string, id: string, options: { readonly fetch?: typeof fetch; readonly requestTimeoutMs?: number } = {}): Promise<StatementOutcome> {
  const what = `GET /v1/statements/${id}`;
  const { status, body } = await requestJson(options.fetch ?? fetch, `${baseUrl}/v1/statements/${encodeURIComponent(id)}`, what, {}, options.requestTimeoutMs ?? 30_000);
  if (status !== 200) throw apiError(status, body, what);
  const answer = (body ?? {}) as { status?: unknown; partition?: unknown; index?: unknown; code?: unknown; detail?: unknown };
  const position = Number.isSafeInteger(answer.partition) && Number.isSafeInteger(answer.index) ? { partition: answer.partition as number, index: answer.index as number } : null;
  const detail = typeof answer.detail === 'string' ? answer.detail : '';
  if (answer.status === 'pending') return { id, status: 'pending' };
  if (answer.status === 'admitted' && position !== null) return { id, status: 'admitted', ...position };
  if (answer.status === 'rejected' && position !== null && isReasonCode(answer.code)) return { id, status: 'rejected', code: answer.code, detail, ...position };
  if (answer.status === 'refused' && isReasonCode(answer.code)) return { id, status: 'refused', code: answer.code, detail };
  throw new OperationalError(OperationalCode.INTERNAL, `${what}: not a statement outcome`, { retryable: true });
}

/**
 * Polls a statement's outcome until it is no longer pending (at most
 * `timeoutMs`, then CLIENT_TIMEOUT). A rejection or refusal is returned,
 * not thrown: the caller decides what it means.
 */
export async function awaitStatement(baseUrl: string, id: string, timeoutMs = 30_000, options: { readonly fetch?: typeof fetch; readonly pollMs?: number } = {}): Promise<Exclude<StatementOutcome, { status: 'pending' }>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const outcome = await statementOutcome(baseUrl, id, options);
    if (outcome.status !== 'pending') return outcome;
    if (Date.now() >= deadline) throw new OperationalError(OperationalCode.CLIENT_TIMEOUT, `statement ${id} still pending after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 100));
  }
}

/**
 * The TypeScript SDK. Agents sign and submit proposals and wait for the
 * decision; before returning one, the client verifies its signature against
 * the pinned decider keys, that its entry hash matches its content, and that
 * it is bound to the agent's own proposal hash. Approvers and admins sign and
 * submit their statements with {@link LedgerClient.submit}. A refusal is a
 * LedgerError with its ReasonCode; an unreachable API or a 5xx is an
 * OperationalError (UNAVAILABLE, INTERNAL), and a wait that runs out is
 * CLIENT_TIMEOUT: an outage never reads as a refusal or as tampering.
 */
export class LedgerClient {
  readonly #options: ClientOptions;
  readonly #fetch: typeof fetch;
  readonly #ed25519: Ed25519Backend;

  constructor(options: ClientOptions) {
    this.#options = options;
    this.#fetch = options.fetch ?? fetch;
    this.#ed25519 = options.ed25519 ?? nodeEd25519;
  }

  /** Signs a statement of any type as this client's principal. */
  sign<T extends StatementType>(type: T, body: BodyOf<T>): Envelope<T> {
    const signer = this.#options.signer;
    return signStatement(createStatement(type, body, signer), [signer], this.#ed25519);
  }

  /** One request to the API; the answer's status and JSON body, or a typed transport error. */
  #request(path: string, what: string, init: RequestInit = {}, waitMs = 0): Promise<{ status: number; body: unknown }> {
    return requestJson(this.#fetch, `${this.#options.baseUrl}${path}`, what, init, waitMs + (this.#options.requestTimeoutMs ?? 30_000));
  }

  /**
   * Submits a signed envelope for sequencing. The API's 202 names the
   * statement hash; {@link awaitStatement} tells what became of it.
   * @throws LedgerError with the refusal's code; OperationalError when the API cannot be reached or fails.
   */
  submit(envelope: Envelope): Promise<Submitted> {
    return submitEnvelope(this.#options.baseUrl, envelope, { fetch: this.#fetch, requestTimeoutMs: this.#options.requestTimeoutMs ?? 30_000 });
  }

  /** Signs and submits a proposal; returns its hash (what the decision must name). */
  async propose(proposal: Omit<BodyOf<'proposal.submitted'>, 'agentId'>): Promise<Submitted> {
    const envelope = this.sign('proposal.submitted', { ...proposal, agentId: this.#options.signer.principal });
    return this.submit(envelope);
  }

  /**
   * Waits for the final decision on a proposal (long-polls the API until
   * `timeoutMs`), verifies it, and returns it. A `verify_first` stays
   * pending until a human answers or the deadline passes.
   */
  async awaitDecision(proposalHash: string, timeoutMs = 60_000): Promise<VerifiedDecision> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const remaining = deadline - Date.now();
      // The caller's own wait ran out: nothing was decided by that (not the TIMEOUT refusal, which a timer signs).
      if (remaining <= 0) throw new OperationalError(OperationalCode.CLIENT_TIMEOUT, `no decision on ${proposalHash.slice(0, 16)} within ${timeoutMs} ms`);
      const waitMs = Math.min(remaining, 25_000);
      const what = `GET /v1/decisions/${proposalHash.slice(0, 16)}`;
      const { status, body } = await this.#request(`/v1/decisions/${proposalHash}?waitMs=${waitMs}`, what, {}, waitMs);
      if (status === 202) continue;
      if (status !== 200) throw apiError(status, body, what);
      const answer = (body ?? {}) as { entry?: unknown; refusal?: unknown };
      if (answer.entry === undefined) continue;
      return this.verifyDecision(answer.entry, proposalHash, typeof answer.refusal === 'string' ? answer.refusal : null);
    }
  }

  /** Proposes and waits: the common agent call. */
  async proposeAndWait(proposal: Omit<BodyOf<'proposal.submitted'>, 'agentId'>, timeoutMs = 60_000): Promise<VerifiedDecision> {
    const { statementHash: hash } = await this.propose(proposal);
    return this.awaitDecision(hash, timeoutMs);
  }

  /** Verifies a decision entry (untrusted: it came over the network). */
  verifyDecision(value: unknown, proposalHash: string, refusal: string | null = null): VerifiedDecision {
    const parsed = EntrySchema.safeParse(value);
    if (!parsed.success) throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'decision entry does not match the schema');
    const entry = parsed.data as unknown as Entry;
    const statement = entry.envelope.statement;
    if (statement.type !== 'decision.recorded') throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'not a decision');
    const canonical = canonicalJson(statement);
    const signers = verifyEnvelopeSignatures(entry.envelope, canonical, this.#ed25519);
    if (signers.length !== 1 || !this.#options.deciderKeys.includes(signers[0] as string)) {
      throw new LedgerError(ReasonCode.KEY_UNKNOWN, 'decision is not signed by a pinned decider key');
    }
    if (entryHash(headerOf(entry, envelopeHash(entry.envelope, canonical))) !== entry.hash) {
      throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, 'decision entry hash does not match its content');
    }
    const body = statement.body as BodyOf<'decision.recorded'>;
    if (body.proposal !== proposalHash) throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, 'decision is bound to another proposal');
    const text = body.code === null ? null : (refusal ?? formatRefusal(body.code, `${body.outcome} by the gate`));
    return { outcome: body.outcome, code: body.code, refusal: text, proposal: body.proposal, entry };
  }
}
