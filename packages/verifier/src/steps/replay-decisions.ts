import type { Statement } from '@agent-ledger/core';
import {
  AuthorityHistory,
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
  readonly #history = new AuthorityHistory();
  #life: LifeState;
  readonly #context: JudgeContext;

  constructor(limits: ReplayLimits = {}, rules?: RulesRegistry) {
    this.#limits = limits;
    this.#life = initialState(limits);
    this.#context = this.#history.context(rules);
  }

  /** Folds an authority entry (already authorised and applied to the registry). */
  authority(entry: EntryResult, statement: Statement): void {
    this.#history.add(statement, entry.index, entry.statementHash ?? '', entry.sequencedAtMs);
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
}
