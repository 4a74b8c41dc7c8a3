import { LedgerError, ReasonCode, formatRefusal } from '@agent-ledger/refusals';
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

async function readError(response: Response): Promise<LedgerError> {
  let body: unknown = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  const error = (body as { error?: { code?: string; message?: string; retryable?: boolean } } | null)?.error;
  const code = (error?.code ?? (response.status >= 500 ? ReasonCode.INTEGRITY_FAILURE : ReasonCode.SCHEMA_INVALID)) as ReasonCode;
  return new LedgerError(code, error?.message ?? `HTTP ${response.status}`, { retryable: error?.retryable ?? response.status >= 500 });
}

/**
 * The TypeScript SDK. Agents sign and submit proposals and wait for the
 * decision; before returning one, the client verifies its signature against
 * the pinned decider keys, that its entry hash matches its content, and that
 * it is bound to the agent's own proposal hash. Approvers and admins sign and
 * submit their statements with {@link LedgerClient.submit}. Errors are
 * LedgerErrors with ReasonCodes.
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

  /** Submits a signed envelope for sequencing. */
  async submit(envelope: Envelope): Promise<Submitted> {
    const response = await this.#fetch(`${this.#options.baseUrl}/v1/statements`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(envelope),
    });
    if (response.status !== 202) throw await readError(response);
    return (await response.json()) as Submitted;
  }

  /** Signs and submits a proposal; returns its hash (what the decision must name). */
  async propose(proposal: Omit<BodyOf<'proposal.submitted'>, 'agentId'>): Promise<Submitted> {
    const envelope = this.sign('proposal.submitted', { ...proposal, agentId: this.#options.signer.principal });
    const submitted = await this.submit(envelope);
    if (submitted.statementHash !== statementHash(envelope.statement)) {
      throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, 'the API acknowledged a different statement hash');
    }
    return submitted;
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
      if (remaining <= 0) throw new LedgerError(ReasonCode.TIMEOUT, `no decision on ${proposalHash.slice(0, 16)} within ${timeoutMs} ms`, { retryable: true });
      const response = await this.#fetch(`${this.#options.baseUrl}/v1/decisions/${proposalHash}?waitMs=${Math.min(remaining, 25_000)}`);
      if (response.status === 202) continue;
      if (response.status !== 200) throw await readError(response);
      const body = (await response.json()) as { entry?: unknown; refusal?: string | null };
      if (body.entry === undefined) continue;
      return this.verifyDecision(body.entry, proposalHash, body.refusal ?? null);
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
