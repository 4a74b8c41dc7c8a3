import type { SqlPool } from '@agent-ledger/store';
import type { ReasonCode } from '@agent-ledger/refusals';

/** What the API can say about a statement it accepted (`GET /v1/statements/:id`). */
export type StatementStatus =
  | { readonly status: 'pending'; readonly acceptedAt: string }
  | { readonly status: 'admitted'; readonly partition: number; readonly index: number }
  | { readonly status: 'rejected'; readonly code: ReasonCode; readonly detail: string; readonly partition: number; readonly index: number }
  | { readonly status: 'refused'; readonly code: ReasonCode; readonly detail: string };

/**
 * Outcomes remembered (newest kept); pending statements are never dropped.
 * An admitted statement whose outcome is forgotten (or that another API
 * process accepted) is still found in the projection ({@link sequencedStatus}).
 */
export const MAX_OUTCOMES = 8_192;

interface Pending {
  readonly acceptedAtMs: number;
  readonly inputHash: string;
  /** The intake (and ledger) partition it was published to. */
  readonly partition: number;
}

/**
 * How much earlier than a statement seen sequenced another one on the same
 * partition must have been accepted to count as passed over: concurrent
 * publications may reach intake in another order than they were accepted.
 */
export const PASSED_OVER_MARGIN_MS = 5_000;
/** Pending statements looked at per outcome when looking for passed-over ones (bounded work per entry read). */
const PASSED_OVER_SCAN = 64;

/**
 * The fate of every statement this API accepted or refused: pending until
 * the sequencer's entry for it is seen (admitted at an index, or an
 * `intake.rejected` entry whose input hash is the SHA-256 of exactly the
 * bytes this API published), so the client always learns the outcome, and
 * a statement refused because the ledger could not sequence it in time is
 * told apart from one the API never saw. Memory is bounded by
 * {@link MAX_OUTCOMES} outcomes plus what is pending.
 */
export class StatementTracker {
  readonly #pending = new Map<string, Pending>();
  readonly #byInput = new Map<string, string>();
  readonly #outcomes = new Map<string, StatementStatus>();

  /** Records a statement published to intake partition `partition` as `inputHash` (SHA-256 hex of the published bytes). */
  accepted(id: string, inputHash: string, nowMs: number, partition: number): void {
    this.#pending.set(id, { acceptedAtMs: nowMs, inputHash, partition });
    this.#byInput.set(inputHash, id);
  }

  /** Records a statement the API refused itself. */
  refused(id: string, code: ReasonCode, detail: string): void {
    if (!this.#pending.has(id)) this.#remember(id, { status: 'refused', code, detail });
  }

  /** True when this API has already accepted the statement (pending or sequenced). */
  seen(id: string): boolean {
    const outcome = this.#outcomes.get(id);
    return this.#pending.has(id) || (outcome !== undefined && outcome.status !== 'refused');
  }

  /**
   * An admitted entry carrying statement `id`. Returns the statements passed
   * over ({@link passedOver}), now forgotten.
   */
  admitted(id: string, partition: number, index: number): readonly string[] {
    const pending = this.#pending.get(id);
    if (pending === undefined) return [];
    this.#resolve(id, pending, { status: 'admitted', partition, index });
    return this.#passedOver(pending);
  }

  /** An `intake.rejected` entry about the input with SHA-256 `inputHash`; returns the statements passed over, as {@link admitted}. */
  rejected(inputHash: string, code: ReasonCode, detail: string, partition: number, index: number): readonly string[] {
    const id = this.#byInput.get(inputHash);
    const pending = id === undefined ? undefined : this.#pending.get(id);
    if (id === undefined || pending === undefined) return [];
    this.#resolve(id, pending, { status: 'rejected', code, detail, partition, index });
    return this.#passedOver(pending);
  }

  /**
   * The sequencer reads each intake partition in order: once a statement is
   * seen sequenced, one accepted on the same partition well before it
   * ({@link PASSED_OVER_MARGIN_MS}) and still pending is not waiting for the
   * sequencer any more. Its entry was missed by this API's index, or its
   * record never reached intake. Either way it must not hold the backlog
   * check (which would refuse every statement until it expires): it is
   * forgotten (status unknown, 404) and returned for the caller to report.
   */
  #passedOver(sequenced: Pending): string[] {
    const before = sequenced.acceptedAtMs - PASSED_OVER_MARGIN_MS;
    const passed: string[] = [];
    let looked = 0;
    for (const [id, pending] of this.#pending) {
      if (pending.acceptedAtMs >= before || looked++ >= PASSED_OVER_SCAN) break;
      if (pending.partition === sequenced.partition) passed.push(id);
    }
    for (const id of passed) this.forget(id);
    return passed;
  }

  /** What is known about `id`, or undefined when this API never saw it (or forgot its outcome). */
  status(id: string): StatementStatus | undefined {
    const pending = this.#pending.get(id);
    if (pending !== undefined) return { status: 'pending', acceptedAt: new Date(pending.acceptedAtMs).toISOString() };
    return this.#outcomes.get(id);
  }

  /** How long the oldest statement still waiting for the sequencer has waited (0 when none waits). */
  oldestPendingMs(nowMs: number): number {
    const first = this.#pending.values().next();
    return first.done === true ? 0 : Math.max(0, nowMs - first.value.acceptedAtMs);
  }

  /** Forgets a statement whose publication failed (the client was told so). */
  forget(id: string): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    this.#pending.delete(id);
    this.#byInput.delete(pending.inputHash);
  }

  /**
   * Drops statements pending for longer than `maxAgeMs`: by then the
   * sequencer has either written their entry or can only refuse them as
   * stale, and a lost observation must not hold the API's backlog check up
   * for ever. Their status becomes unknown (404).
   */
  expire(nowMs: number, maxAgeMs: number): number {
    let dropped = 0;
    for (const [id, pending] of this.#pending) {
      if (nowMs - pending.acceptedAtMs <= maxAgeMs) break;
      this.forget(id);
      dropped += 1;
    }
    return dropped;
  }

  /** Statements accepted and not yet sequenced. */
  get pendingCount(): number {
    return this.#pending.size;
  }

  #resolve(id: string, pending: Pending, outcome: StatementStatus): void {
    this.#pending.delete(id);
    this.#byInput.delete(pending.inputHash);
    this.#remember(id, outcome);
  }

  #remember(id: string, outcome: StatementStatus): void {
    this.#outcomes.delete(id);
    this.#outcomes.set(id, outcome);
    if (this.#outcomes.size > MAX_OUTCOMES) {
      const oldest = this.#outcomes.keys().next();
      if (oldest.done !== true) this.#outcomes.delete(oldest.value);
    }
  }
}

/**
 * Where statement `id` was sequenced, and who wrote it, from the projection
 * (`entries_seen`, filled by the projector from every applied entry): what
 * any API process answers for a statement it did not accept itself, or whose
 * outcome it no longer keeps. `author` is null on rows applied before
 * migration 007. Undefined when the projection has no entry carrying it (not
 * sequenced yet, refused, or rejected by the sequencer: a rejection's
 * `intake.rejected` entry names the input's hash, which only the API that
 * published the bytes can match).
 */
export async function sequencedStatus(pool: SqlPool, id: string): Promise<{ readonly status: StatementStatus; readonly author: string | null } | undefined> {
  const result = await pool.query<{ partition: number; index: string; author: string | null }>('SELECT partition, index, author FROM entries_seen WHERE statement_id = $1 ORDER BY partition, index LIMIT 1', [id]);
  const row = result.rows[0];
  return row === undefined ? undefined : { status: { status: 'admitted', partition: row.partition, index: Number(row.index) }, author: row.author };
}
