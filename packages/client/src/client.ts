import { LedgerError, OperationalCode, OperationalError, ReasonCode, formatRefusal, isReasonCode, parseRefusal } from '@agent-ledger/refusals';
import { apiError, readJson, transportError } from './errors.js';
import { ToolRefusedError, type RefusalRecord } from './refused.js';
import { verifyReceipt, type Receipt, type ReceiptDecision, type ReceiptVerdict } from './receipt.js';
import { fetchTrust, ledgerSettings, pinTrust, type Trust } from './trust.js';
import { fetchInstallation, installationOf, signedFetch } from './read-auth.js';
import {
  EntrySchema,
  canonicalJson,
  createStatement,
  entryHash,
  envelopeHash,
  headerOf,
  nodeEd25519,
  sha256Hex,
  signStatement,
  statementHash,
  utf8,
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
  /**
   * Key ids allowed to sign decisions (the gate's keys), pinned by the
   * caller. Derived from `trust` when absent (its gate keys; service keys on
   * an authority-rules-1 ledger).
   */
  readonly deciderKeys?: readonly string[];
  /**
   * The pinned trust document ({@link fetchTrust}, {@link loadTrust}): with
   * it the client checks each decision's receipt ({@link LedgerClient.decide}).
   */
  readonly trust?: Trust;
  /** Where the trust document is pinned: a refresh (a decision signed by a key newer than the pinned registry) is written back there. */
  readonly trustFile?: string;
  /** Ed25519 implementation (node:crypto by default; nobleEd25519 in a browser). */
  readonly ed25519?: Ed25519Backend;
  /** fetch implementation (global fetch by default); the client signs every request it sends through it with `signer` (signed reads). */
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

/** The operation a proposal names (a `proposal.submitted` body without `agentId`: the client adds its own principal). */
export type ProposalInput = Omit<BodyOf<'proposal.submitted'>, 'agentId'>;

/** Options of {@link LedgerClient.decide}. */
export interface DecideOptions {
  /** Longest wait for the decision and its receipt, a human's answer included (default 60 s): then CLIENT_TIMEOUT. */
  readonly timeoutMs?: number;
  /** Oldest decision accepted (default: the ledger's freshness window). */
  readonly maxAgeMs?: number;
  /** Record a refused receipt on the log as `execution.refused` (default true). */
  readonly record?: boolean;
}

/** A decision whose receipt verified against the pinned trust. */
export interface CheckedDecision {
  readonly outcome: 'allow' | 'verify_first' | 'block' | 'deny';
  readonly code: ReasonCode | null;
  /** The refusal text (formatRefusal) of a block or deny. */
  readonly refusal: string | null;
  readonly proposal: string;
  /** The decision's log position. */
  readonly position: { readonly partition: number; readonly index: number };
  readonly decision: ReceiptDecision;
  /** The verified receipt: keep it as the executor's proof of why it ran the tool. */
  readonly receipt: Receipt;
}

/** The key ids that may sign decisions under a trust document: gate keys (service keys under authority rules 1). */
export function deciderKeysOf(trust: Trust): string[] {
  const role = ledgerSettings(trust).authorityRulesVersion >= 2 ? 'gate' : 'service';
  return trust.keys.filter((k) => k.roles.includes(role)).map((k) => k.keyId);
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

 /** Options of the free functions that read the API: the key reads are signed with (the API refuses unsigned reads unless it runs with `readAuth: 'open'`). */
export interface ReadOptions {
  readonly fetch?: typeof fetch;
  readonly requestTimeoutMs?: number;
  /** The principal's key that signs the read. */
  readonly signer?: Signer;
  /** The installation the read is signed for ({@link installationOf} of the pinned genesis); absent: asked of the API once. */
  readonly audience?: string;
}

function readFetch(options: ReadOptions): typeof fetch {
  const inner = options.fetch ?? fetch;
  return options.signer === undefined ? inner : signedFetch(options.signer, { fetch: inner, ...(options.audience === undefined ? {} : { audience: options.audience }) });
}

/** `GET /v1/statements/:id` once, signed by `options.signer` (the answer is untrusted: checked field by field). */
export async function statementOutcome(baseUrl: string, id: string, options: ReadOptions = {}): Promise<StatementOutcome> {
  const what = `GET /v1/statements/${id}`;
  const { status, body } = await requestJson(readFetch(options), `${baseUrl}/v1/statements/${encodeURIComponent(id)}`, what, {}, options.requestTimeoutMs ?? 30_000);
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
export async function awaitStatement(baseUrl: string, id: string, timeoutMs = 30_000, options: ReadOptions & { readonly pollMs?: number } = {}): Promise<Exclude<StatementOutcome, { status: 'pending' }>> {
  const deadline = Date.now() + timeoutMs;
  // One signing fetch for every poll (its audience, when asked of the API, is asked once).
  const once: ReadOptions = { fetch: readFetch(options), ...(options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs }) };
  for (;;) {
    const outcome = await statementOutcome(baseUrl, id, once);
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
  /** Signs every request (reads). */
  readonly #fetch: typeof fetch;
  /** Signs nothing: statement submission (each statement carries its own signature) and the trust document are public. */
  readonly #plainFetch: typeof fetch;
  readonly #ed25519: Ed25519Backend;

  #deciderKeys: readonly string[];
  #trust: Trust | undefined;

  constructor(options: ClientOptions) {
    this.#options = options;
    this.#ed25519 = options.ed25519 ?? nodeEd25519;
    this.#plainFetch = options.fetch ?? fetch;
    // Every read is signed by the client's own key: the API answers reads only to a registered principal, within its role.
    // Signed for the pinned installation when there is a trust document (else the API's own id, asked once).
    this.#fetch = signedFetch(options.signer, { fetch: options.fetch ?? fetch, ed25519: this.#ed25519, ...(options.trust === undefined ? {} : { audience: installationOf(options.trust.genesis) }) });
    this.#trust = options.trust;
    this.#deciderKeys = options.deciderKeys ?? (options.trust === undefined ? [] : deciderKeysOf(options.trust));
  }

  /** This client's principal (the agent it proposes as). */
  get principal(): string {
    return this.#options.signer.principal;
  }

  /** The pinned trust document, if any. */
  get trust(): Trust | undefined {
    return this.#trust;
  }

  /**
   * Fetches the API's trust document again, checks that it extends the
   * pinned one ({@link checkTrustExtends}: same root and genesis, keys only
   * added, revocations only added), pins it (in `trustFile` when given) and
   * returns it.
   */
  async refreshTrust(): Promise<Trust> {
    const pinned = this.#trust;
    const next = await fetchTrust(this.#options.baseUrl, { fetch: this.#plainFetch, ed25519: this.#ed25519, ...(pinned === undefined ? {} : { pinned }), ...(this.#options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: this.#options.requestTimeoutMs }) });
    this.#trust = next;
    if (this.#options.deciderKeys === undefined) this.#deciderKeys = deciderKeysOf(next);
    if (this.#options.trustFile !== undefined) pinTrust(this.#options.trustFile, next);
    return next;
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
    return submitEnvelope(this.#options.baseUrl, envelope, { fetch: this.#plainFetch, requestTimeoutMs: this.#options.requestTimeoutMs ?? 30_000 });
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

  /**
   * Waits for the final decision on a proposal and returns what the API
   * served, unverified: the decision entry (whatever it is) and its receipt.
   * {@link LedgerClient.decide} verifies them.
   */
  async fetchDecisionReceipt(proposalHash: string, timeoutMs = 60_000): Promise<{ entry: unknown; receipt: unknown; refusal: string | null }> {
    const deadline = Date.now() + timeoutMs;
    let answer: { entry?: unknown; refusal?: unknown } | undefined;
    while (answer?.entry === undefined) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new OperationalError(OperationalCode.CLIENT_TIMEOUT, `no decision on ${proposalHash.slice(0, 16)} within ${timeoutMs} ms`);
      const waitMs = Math.min(remaining, 25_000);
      const what = `GET /v1/decisions/${proposalHash.slice(0, 16)}`;
      const { status, body } = await this.#request(`/v1/decisions/${proposalHash}?waitMs=${waitMs}`, what, {}, waitMs);
      if (status === 202) continue;
      if (status !== 200) throw apiError(status, body, what);
      answer = (body ?? {}) as { entry?: unknown; refusal?: unknown };
      // A 200 without an entry is not an answer: ask again, without hammering the API.
      if (answer.entry === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const refusal = typeof answer.refusal === 'string' ? answer.refusal : null;
    // Untrusted: only where to look. The receipt's own entry is what gets verified.
    const claimed = answer.entry as { partition?: unknown; index?: unknown } | null;
    if (typeof claimed !== 'object' || claimed === null || !Number.isSafeInteger(claimed.partition) || !Number.isSafeInteger(claimed.index) || (claimed.partition as number) < 0 || (claimed.index as number) < 0) {
      return { entry: answer.entry, receipt: null, refusal };
    }
    for (;;) {
      const remaining = Math.max(1, deadline - Date.now());
      const waitMs = Math.min(remaining, 25_000);
      const what = `GET /v1/receipts/${String(claimed.partition)}/${String(claimed.index)}`;
      const { status, body } = await this.#request(`/v1/receipts/${String(claimed.partition)}/${String(claimed.index)}?waitMs=${waitMs}`, what, {}, waitMs);
      if (status === 200) return { entry: answer.entry, receipt: body, refusal };
      const err = apiError(status, body, what);
      if (!(err instanceof OperationalError && err.code === OperationalCode.NOT_FOUND && err.retryable) || Date.now() >= deadline) throw err;
    }
  }

  /**
   * Proposes (or takes a proposal hash already submitted), waits for the
   * final decision with its receipt, and verifies the receipt offline
   * against the pinned trust ({@link verifyReceipt}): the log, the signed
   * checkpoint, the inclusion proof, the gate key valid at the entry's
   * authority index, the binding to THIS proposal, freshness. A decision
   * signed by a key newer than the pinned registry refreshes the trust once.
   * What does not verify is refused: recorded on the log as an
   * `execution.refused` signed by this agent (unless `record: false`) and
   * thrown as a {@link ToolRefusedError} by the executor. A verified block or
   * deny is returned, not thrown: {@link guard} throws it.
   */
  async decide(proposal: ProposalInput | { readonly proposalHash: string }, options: DecideOptions = {}): Promise<CheckedDecision> {
    const trust = this.#trust;
    if (trust === undefined) throw new OperationalError(OperationalCode.BAD_CONFIGURATION, 'decide() verifies receipts: the client needs a pinned trust document (loadTrust / fetchTrust)');
    const proposalHash = 'proposalHash' in proposal ? proposal.proposalHash : (await this.propose(proposal)).statementHash;
    let fetched: Awaited<ReturnType<LedgerClient['fetchDecisionReceipt']>>;
    try {
      fetched = await this.fetchDecisionReceipt(proposalHash, options.timeoutMs ?? 60_000);
    } catch (err) {
      // Reads are signed for the pinned installation: an API of another one refuses them. Said so, and refused as such.
      if (err instanceof OperationalError && err.code === OperationalCode.UNAUTHENTICATED) await this.#refuseForeignApi(trust, proposalHash, options);
      throw err;
    }
    const { receipt, refusal } = fetched;
    const check = (pinned: Trust): ReceiptVerdict => verifyReceipt(receipt, pinned, { proposalHash, agentId: this.principal, ed25519: this.#ed25519, ...(options.maxAgeMs === undefined ? {} : { maxAgeMs: options.maxAgeMs }) });
    let verdict = check(trust);
    const claimedIndex = (receipt as { entry?: { authorityIndex?: unknown } } | null)?.entry?.authorityIndex;
    if (!verdict.ok && verdict.code === ReasonCode.KEY_UNKNOWN && typeof claimedIndex === 'number' && claimedIndex > trust.authoritySize) {
      verdict = check(await this.refreshTrust());
    }
    if (!verdict.ok) {
      const recorded = options.record === false ? null : await this.recordRefusal(proposalHash, verdict.code, verdict.detail, receipt);
      throw new ToolRefusedError({ code: verdict.code, detail: verdict.detail, proposal: proposalHash, by: 'executor', position: verdict.position, record: recorded });
    }
    const decision = verdict.decision;
    const text = decision.code === null
      ? null
      : (refusal !== null && parseRefusal(refusal)?.code === decision.code ? refusal : ((await this.#gateRefusal(decision)) ?? formatRefusal(decision.code, `${decision.outcome} by the gate`)));
    return { outcome: decision.outcome, code: decision.code, refusal: text, proposal: proposalHash, position: { partition: decision.partition, index: decision.index }, decision, receipt: receipt as Receipt };
  }

  /**
   * After a read was refused as unauthenticated: when the API serves another
   * installation than the pinned trust's (`GET /v1/installation`), the
   * decision can never verify here. Recorded on the log (`execution.refused`,
   * INTEGRITY_FAILURE) and thrown as a {@link ToolRefusedError}; otherwise
   * returns, and the caller's own error stands.
   */
  async #refuseForeignApi(trust: Trust, proposalHash: string, options: DecideOptions): Promise<void> {
    let served: string;
    try {
      served = await fetchInstallation(this.#options.baseUrl, { fetch: this.#plainFetch, ...(this.#options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: this.#options.requestTimeoutMs }) });
    } catch {
      return;
    }
    const pinned = installationOf(trust.genesis);
    if (served === pinned) return;
    const detail = `the API at ${this.#options.baseUrl} serves installation ${served.slice(0, 16)}, not the pinned trust's ${pinned.slice(0, 16)}`;
    // The status of the refusal just recorded is read as that API asks: a read of this agent's own statement, useless anywhere else.
    const recorded = options.record === false ? null : await this.recordRefusal(proposalHash, ReasonCode.INTEGRITY_FAILURE, detail, null, { audience: served });
    throw new ToolRefusedError({ code: ReasonCode.INTEGRITY_FAILURE, detail, proposal: proposalHash, by: 'executor', position: null, record: recorded });
  }

  /**
   * The refusal text the gate signed beside a verified block or deny (its
   * `refusal.recorded` follows the decision in the partition): read from the
   * entries after the decision, and used only when it is signed by the key
   * that signed the decision and names the same proposal and code. Best
   * effort: null when it cannot be found or does not check (the code is the
   * verified decision's in any case).
   */
  async #gateRefusal(decision: ReceiptDecision): Promise<string | null> {
    for (let index = decision.index + 1; index <= decision.index + 4; index++) {
      let body: unknown;
      try {
        // The first entry after the decision may still wait for its checkpoint; the decision's own covers most.
        const waitMs = index === decision.index + 1 ? 2000 : 500;
        const answer = await this.#request(`/v1/receipts/${decision.partition}/${index}?waitMs=${waitMs}`, 'GET /v1/receipts', {}, waitMs);
        // Another agent's entry in between is not this agent's to read (answered as NOT_FOUND, at once): look further.
        if (answer.status === 404) continue;
        if (answer.status !== 200) return null;
        body = answer.body;
      } catch {
        return null;
      }
      const parsed = EntrySchema.safeParse((body as { entry?: unknown } | null)?.entry);
      if (!parsed.success) return null;
      const entry = parsed.data as unknown as Entry;
      const statement = entry.envelope.statement;
      if (statement.type !== 'refusal.recorded') continue;
      const said = statement.body as BodyOf<'refusal.recorded'>;
      if (said.proposal !== decision.proposal) continue;
      try {
        const signers = verifyEnvelopeSignatures(entry.envelope, canonicalJson(statement), this.#ed25519);
        if (signers.length !== 1 || signers[0] !== decision.signer || said.code !== decision.code) return null;
      } catch {
        return null;
      }
      return said.refusal;
    }
    return null;
  }

  /**
   * Records on the log that this agent's executor refused to run a proposal
   * (an `execution.refused` statement signed by the agent, SPEC.md section
   * 10.2) and waits briefly for its position. Never throws: a refusal that
   * cannot be recorded is still a refusal (the record is then null, or has
   * no position). `options.audience` signs the status read for another
   * installation than the pinned one.
   */
  async recordRefusal(proposalHash: string, code: ReasonCode, detail: string, evidence: unknown, options: { readonly audience?: string } = {}): Promise<RefusalRecord | null> {
    try {
      const claimedEntry = (evidence as { entry?: { partition?: unknown; index?: unknown; hash?: unknown } } | null)?.entry;
      const claimed = claimedEntry !== undefined && Number.isSafeInteger(claimedEntry.partition) && Number.isSafeInteger(claimedEntry.index) && (claimedEntry.partition as number) >= 0 && (claimedEntry.index as number) >= 0 && typeof claimedEntry.hash === 'string' && /^[0-9a-f]{64}$/.test(claimedEntry.hash)
        ? { partition: claimedEntry.partition as number, index: claimedEntry.index as number, hash: claimedEntry.hash }
        : null;
      let evidenceHash: string | null = null;
      try {
        evidenceHash = evidence === null || evidence === undefined ? null : sha256Hex(utf8(canonicalJson(evidence)));
      } catch {
        evidenceHash = null; // not representable as canonical JSON: nothing to hash
      }
      const envelope = this.sign('execution.refused', {
        agentId: this.principal,
        proposal: proposalHash,
        code,
        refusal: formatRefusal(code, `the executor refused the decision: ${detail}`.slice(0, 2000)),
        claimed,
        evidence: evidenceHash,
      });
      const submitted = await this.submit(envelope);
      const read = options.audience === undefined ? this.#fetch : signedFetch(this.#options.signer, { fetch: this.#plainFetch, ed25519: this.#ed25519, audience: options.audience });
      const outcome = await awaitStatement(this.#options.baseUrl, submitted.id, 10_000, { fetch: read }).catch(() => null);
      return { id: submitted.id, statementHash: submitted.statementHash, position: outcome?.status === 'admitted' ? { partition: outcome.partition, index: outcome.index } : null };
    } catch {
      return null;
    }
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
    if (signers.length !== 1 || !this.#deciderKeys.includes(signers[0] as string)) {
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
