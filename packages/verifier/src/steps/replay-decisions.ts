import type { Statement } from '@agent-ledger/core';
import { evolve as evolveGate, initialState as initialGate, type AuthorityEvent, type GateState } from '@agent-ledger/gate';
import {
  REPLAY_WINDOW,
  evolve,
  initialState,
  judge,
  type JudgeContext,
  type LifeEntry,
  type LifeState,
  type LifeStatement,
  type ReplayLimits,
  type RulesRegistry,
} from '@agent-ledger/rulebook';
import type { EntryResult } from '../line-result.js';

/** Bounds of the replay window (SPEC.md section 9, rules 14 and 15): the rulebook's one bound. */
export type { ReplayLimits };

/** Default {@link ReplayLimits}: the rulebook's {@link REPLAY_WINDOW}, which the sequencer's admission enforces live. */
export const DEFAULT_REPLAY_LIMITS: Required<ReplayLimits> = REPLAY_WINDOW;

/**
 * Decision replay, deadline proofs and fatigue signals (SPEC.md section 9,
 * rules 14 and 15), folded in bundle order beside the other rules. The rules
 * themselves are the rulebook's: each events entry is judged (`judge`) on the
 * partition's proposal-life state, then folded (`evolve`), the same state and
 * the same `firstDecision` / `finalDecision` the live gate signs with.
 *
 * The authority stream (partition 0) comes first in a bundle: its statements
 * are kept so the gate state at any authority index can be rebuilt with the
 * gate's own `evolve`, and key revocations are indexed so a decision can be
 * judged under the registry it cites.
 */
export class DecisionReplay {
  readonly #limits: ReplayLimits;
  readonly #authority: AuthorityEvent[] = [];
  /** `sequencedAt` of each authority entry, ms (never decreasing). */
  readonly #authorityTimes: number[] = [];
  /** Authority index of each key's revocation. */
  readonly #revokedAt = new Map<string, number>();
  /** Gate state after the first `#cursorSize` authority entries (evolve mutates it, so it only moves forward). */
  #cursor: GateState = initialGate();
  #cursorSize = 0;
  #life: LifeState;
  readonly #context: JudgeContext;

  constructor(limits: ReplayLimits = {}, rules?: RulesRegistry) {
    this.#limits = limits;
    this.#life = initialState(limits);
    this.#context = {
      ...(rules === undefined ? {} : { rules }),
      gateAt: (size) => this.#stateAt(size),
      authorityCountAt: (atMs) => this.#authorityCountAt(atMs),
      keyRevokedAt: (keyId, size) => {
        const at = this.#revokedAt.get(keyId);
        return at !== undefined && at < size;
      },
    };
  }

  /** Folds an authority entry (already authorised and applied to the registry). */
  authority(entry: EntryResult, statement: Statement): void {
    this.#authority.push({ statement, index: entry.index, statementHash: entry.statementHash ?? '', sequencedAt: entry.sequencedAtMs });
    this.#authorityTimes.push(entry.sequencedAtMs);
    if (statement.type === 'key.revoked') {
      const keyId = (statement.body as { keyId: string }).keyId;
      if (!this.#revokedAt.has(keyId)) this.#revokedAt.set(keyId, entry.index);
    } else if (statement.type === 'root.rotated') {
      for (const keyId of (statement.body as { revokeKeys: readonly string[] }).revokeKeys) if (!this.#revokedAt.has(keyId)) this.#revokedAt.set(keyId, entry.index);
    }
  }

  /** A new events partition starts: nothing about one agent crosses partitions. */
  beginPartition(): void {
    this.#life = initialState(this.#limits);
  }

  /** Judges, then folds, an events-stream entry (already authorised). */
  event(entry: EntryResult): void {
    if (entry.replayBody === null) return;
    const life: LifeEntry = {
      statement: { type: entry.type, body: entry.replayBody, author: entry.author } as unknown as LifeStatement,
      partition: entry.partition,
      index: entry.index,
      sequencedAtMs: entry.sequencedAtMs,
      authorityIndex: entry.authorityIndex,
      statementHash: entry.statementHash ?? '',
      bytes: entry.bytes,
    };
    judge(this.#life, life, this.#context);
    evolve(this.#life, life);
  }

  /** Number of authority entries sequenced at or before `atMs`. */
  #authorityCountAt(atMs: number): number {
    const times = this.#authorityTimes;
    let lo = 0;
    let hi = times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((times[mid] as number) <= atMs) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The gate state after the first `size` authority entries ("at authority index size", SPEC.md section 7). */
  #stateAt(size: number): GateState {
    if (size < this.#cursorSize) {
      this.#cursor = initialGate();
      this.#cursorSize = 0;
    }
    while (this.#cursorSize < size) {
      this.#cursor = evolveGate(this.#cursor, this.#authority[this.#cursorSize] as AuthorityEvent);
      this.#cursorSize += 1;
    }
    return this.#cursor;
  }
}
