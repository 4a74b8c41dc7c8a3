import { EnvelopeSchema, canonicalJson, parseStrictJson, sha256Hex, type Statement, type StatementType } from '@agent-ledger/core';
import type { ReasonCode } from '@agent-ledger/refusals';
import type { LogBus, OutRecord } from '@agent-ledger/kafka';
import { REFUSED_HEADER } from '../sequencer/partition-sequencer.js';

/** One statement a role published to intake, as the sequencer will answer it. */
export interface SentStatement {
  /** SHA-256 of the intake record's value: what an `intake.rejected` names as its `input`. */
  readonly input: string;
  readonly id: string;
  readonly type: StatementType;
  /** Its type and canonical body: equal for a statement that says the same again ({@link saidKey}). */
  readonly said: string;
}

/** Where an attempt stands in its line of signings. */
export interface AttemptPlace {
  /** Names the first signing (the id of its first statement); every signing again keeps it. */
  readonly key: string;
  /** 1 for the first signing, n + 1 for the n-th signing again. */
  readonly number: number;
  /** When the first signing was signed (ms, the signer's clock). */
  readonly firstMs: number;
}

/** The first rejection of a watched statement of an attempt, as the sequencer recorded it. */
export interface Rejection {
  readonly type: StatementType;
  readonly code: ReasonCode;
  readonly detail: string;
  /** Sequencing time of the `intake.rejected` entry (ms, the sequencer's clock). */
  readonly sequencedAtMs: number;
}

/** One signing of statements that belong together (a group the rulebook said), waiting for the sequencer's answers. */
export interface Attempt<T> extends AttemptPlace {
  /** What the role signs again if the sequencer rejects it (the gate: a proposal; the timer: a request). */
  readonly subject: T;
  readonly statements: readonly SentStatement[];
  /** Inputs the sequencer has not answered yet (admitted or rejected). */
  readonly unanswered: Set<string>;
  /** What of it the sequencer admitted ({@link SentStatement.said}): never signed again. */
  readonly admitted: Set<string>;
  /** The first rejection of a watched statement of it, once read. */
  rejection: Rejection | undefined;
}

/**
 * Whether an attempt whose watched statement was rejected is signed again:
 * `true`, or the reason it is not (logged when the role gives up).
 */
export type RetryPolicy<T> = (attempt: Attempt<T>, rejection: Rejection) => true | string;

/** What to do with an attempt the sequencer has answered in full. */
export type AttemptVerdict =
  | { readonly kind: 'admitted' }
  | { readonly kind: 'again'; readonly rejection: Rejection }
  | { readonly kind: 'abandon'; readonly rejection: Rejection; readonly reason: string };

/** How an attempt with a rejected watched statement ended: signed again, given up, or nothing left to sign (the life had moved on). */
export type RejectionOutcome = 'signed_again' | 'abandoned' | 'moot';

/** Attempts with a rejected watched statement, by how they ended. */
export type RejectionCounters = Record<RejectionOutcome, number>;

/** The {@link SentStatement.said} of a statement: its type and canonical body. */
export function saidKey(type: StatementType, body: unknown): string {
  return `${type} ${canonicalJson(body)}`;
}

/** What the sequencer will answer about `statement`, published as `record`. */
export function sentStatement(record: OutRecord, statement: Pick<Statement, 'id' | 'type' | 'body'>): SentStatement {
  return { input: sha256Hex(record.value), id: statement.id, type: statement.type, said: saidKey(statement.type, statement.body) };
}

/** The place of a new signing: the next after `previous`, or a first one named by its first statement. */
export function nextPlace(previous: AttemptPlace | undefined, firstId: string, nowMs: number): AttemptPlace {
  return previous === undefined ? { key: firstId, number: 1, firstMs: nowMs } : { key: previous.key, number: previous.number + 1, firstMs: previous.firstMs };
}

/**
 * Intake record header naming the signing a statement belongs to
 * (`<key> <number> <firstMs>`), so a restarted role reads its attempts back
 * from intake ({@link publishedAttempts}). The sequencer ignores it; it is
 * not part of any signed statement.
 */
export const ATTEMPT_HEADER = 'ledger-attempt';

/** Headers of an intake record of the signing at `place`. */
export function attemptHeaders(place: AttemptPlace): Record<string, string> {
  return { [ATTEMPT_HEADER]: `${place.key} ${place.number} ${place.firstMs}` };
}

/** A signing read back from intake, with its statements in order. */
export interface PublishedAttempt extends AttemptPlace {
  readonly statements: readonly (SentStatement & { readonly statement: Statement })[];
}

/**
 * The signings by key `keyId` on intake partition `partition` from
 * `fromMs` on, grouped by their {@link ATTEMPT_HEADER}: what a restarted
 * role may still wait for the sequencer to answer. Intake is untrusted: a
 * record that is not a well-formed envelope by that key, or one the API
 * already refused, is skipped.
 */
export async function publishedAttempts(bus: LogBus, topic: string, partition: number, fromMs: number, keyId: string): Promise<PublishedAttempt[]> {
  const from = (await bus.offsetsForTime(topic, fromMs)).get(partition) ?? '0';
  const found = new Map<string, { place: AttemptPlace; statements: (SentStatement & { statement: Statement })[] }>();
  for await (const record of bus.readRange(topic, partition, from)) {
    const header = record.headers[ATTEMPT_HEADER];
    const place = header === undefined ? null : /^(\S{1,64}) ([1-9]\d{0,5}) (\d{1,16})$/.exec(header);
    if (place === null || record.headers[REFUSED_HEADER] !== undefined) continue;
    let statement: Statement;
    try {
      const parsed = EnvelopeSchema.safeParse(parseStrictJson(record.value.toString('utf8')));
      if (!parsed.success) continue;
      statement = (parsed.data as unknown as { statement: Statement }).statement;
    } catch {
      continue;
    }
    if (statement.author.keyId !== keyId) continue;
    const at = `${place[1]} ${place[2]}`;
    let attempt = found.get(at);
    if (attempt === undefined) {
      attempt = { place: { key: place[1] as string, number: Number(place[2]), firstMs: Number(place[3]) }, statements: [] };
      found.set(at, attempt);
    }
    attempt.statements.push({ input: sha256Hex(record.value), id: statement.id, type: statement.type, said: saidKey(statement.type, statement.body), statement });
  }
  return [...found.values()].map(({ place, statements }) => ({ ...place, statements }));
}

/**
 * The feedback loop from the sequencer to a role that signs statements
 * (the gate, the timer): it remembers each signing it published (an
 * attempt: the statements of one group), reads the sequencer's answer to
 * each statement from the log (an entry with its id: admitted; an
 * `intake.rejected` naming its input hash: rejected), and once the
 * sequencer has answered every statement of an attempt tells the role
 * whether to sign it again: only when a watched statement was rejected and
 * the policy allows. Waiting for every answer means an attempt is signed
 * again at most once, never while part of it is still in flight, and
 * without what of it was admitted. Reading an entry twice changes nothing.
 * Memory is bounded: past `memory` attempts the oldest is forgotten.
 */
export class RejectionWatch<T> {
  readonly #watched: ReadonlySet<StatementType>;
  readonly #policy: RetryPolicy<T>;
  readonly #memory: number;
  readonly #attempts = new Map<string, Attempt<T>>();
  readonly #byInput = new Map<string, Attempt<T>>();
  readonly #byId = new Map<string, Attempt<T>>();
  readonly counters: RejectionCounters = { signed_again: 0, abandoned: 0, moot: 0 };

  constructor(settings: { readonly watched: readonly StatementType[]; readonly policy: RetryPolicy<T>; readonly memory: number }) {
    this.#watched = new Set(settings.watched);
    this.#policy = settings.policy;
    this.#memory = settings.memory;
  }

  /** Attempts waiting for an answer or a decision about them. */
  get size(): number {
    return this.#attempts.size;
  }

  /**
   * Starts watching one signing of `subject` at `place`. A group without a
   * watched statement is not watched (undefined).
   */
  track(subject: T, place: AttemptPlace, statements: readonly SentStatement[]): Attempt<T> | undefined {
    if (!statements.some((s) => this.#watched.has(s.type))) return undefined;
    const attempt: Attempt<T> = { ...place, subject, statements, unanswered: new Set(statements.map((s) => s.input)), admitted: new Set(), rejection: undefined };
    const name = `${place.key} ${place.number}`;
    const older = this.#attempts.get(name);
    if (older !== undefined) this.#forget(older);
    this.#attempts.set(name, attempt);
    for (const s of statements) {
      this.#byInput.set(s.input, attempt);
      this.#byId.set(s.id, attempt);
    }
    while (this.#attempts.size > this.#memory) {
      const oldest = this.#attempts.values().next();
      if (oldest.done === true) break;
      this.#forget(oldest.value);
    }
    return attempt;
  }

  /**
   * Reads one sequenced entry's statement: an answer to a statement of a
   * watched attempt, or nothing. Returns the attempt when the sequencer has
   * answered all of it (also when this entry is read again).
   */
  observe(statement: Pick<Statement, 'id' | 'type' | 'body'>, sequencedAtMs: number): Attempt<T> | undefined {
    let attempt: Attempt<T> | undefined;
    if (statement.type === 'intake.rejected') {
      const body = statement.body as { input: string; code: ReasonCode; detail: string };
      attempt = this.#byInput.get(body.input);
      if (attempt === undefined) return undefined;
      attempt.unanswered.delete(body.input);
      const sent = attempt.statements.find((s) => s.input === body.input);
      if (sent !== undefined && attempt.rejection === undefined && this.#watched.has(sent.type)) attempt.rejection = { type: sent.type, code: body.code, detail: body.detail, sequencedAtMs };
    } else {
      attempt = this.#byId.get(statement.id);
      const sent = attempt?.statements.find((s) => s.id === statement.id);
      if (attempt === undefined || sent === undefined) return undefined;
      attempt.unanswered.delete(sent.input);
      attempt.admitted.add(sent.said);
    }
    return attempt.unanswered.size === 0 ? attempt : undefined;
  }

  /** What to do with an attempt the sequencer has answered in full. */
  verdict(attempt: Attempt<T>): AttemptVerdict {
    const rejection = attempt.rejection;
    if (rejection === undefined) return { kind: 'admitted' };
    const allowed = this.#policy(attempt, rejection);
    return allowed === true ? { kind: 'again', rejection } : { kind: 'abandon', rejection, reason: allowed };
  }

  /** Statements of a signing again that do not repeat what the sequencer admitted of `attempt`. */
  unadmitted<S extends { readonly type: StatementType; readonly body: unknown }>(attempt: Attempt<T>, statements: readonly S[]): S[] {
    return statements.filter((s) => !attempt.admitted.has(saidKey(s.type, s.body)));
  }

  /**
   * Forgets an answered attempt and counts how it ended (an attempt with no
   * rejection counts nothing). True when it was still watched: closing it
   * again does nothing.
   */
  close(attempt: Attempt<T>, outcome?: RejectionOutcome): boolean {
    if (this.#attempts.get(`${attempt.key} ${attempt.number}`) !== attempt) return false;
    this.#forget(attempt);
    if (outcome !== undefined) this.counters[outcome] += 1;
    return true;
  }

  /**
   * Forgets every attempt already answered in full, counting nothing: a
   * restarted role read those answers below its committed offset, where its
   * predecessor acted on them.
   */
  closeAnswered(): void {
    for (const attempt of [...this.#attempts.values()]) if (attempt.unanswered.size === 0) this.#forget(attempt);
  }

  #forget(attempt: Attempt<T>): void {
    this.#attempts.delete(`${attempt.key} ${attempt.number}`);
    for (const s of attempt.statements) {
      if (this.#byInput.get(s.input) === attempt) this.#byInput.delete(s.input);
      if (this.#byId.get(s.id) === attempt) this.#byId.delete(s.id);
    }
  }
}
