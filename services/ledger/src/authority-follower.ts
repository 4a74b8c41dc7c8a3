import { AuthorityState, EntrySchema, parseStrictJson, statementHash, type Entry, type TrustRoot } from '@agent-ledger/core';
import type { LogBus, Subscription } from '@agent-ledger/kafka';
import type { TopicNames } from './topics.js';
import type { AuthorityView } from './sequencer/partition-sequencer.js';

/** Called for every committed authority entry, in order (the gate folds grants this way). */
export type AuthorityListener = (entry: Entry, statementHash: string) => void;

/**
 * Follows the committed authority stream (read_committed) and folds it into
 * a registry: what events sequencers, the gate and the API judge keys and
 * grants against. Authority entries are checked again as they are folded
 * (the same rules as the verifier); a break stops the follower loudly rather
 * than serving a wrong registry.
 */
export class AuthorityFollower implements AuthorityView {
  readonly #bus: LogBus;
  readonly #topics: TopicNames;
  readonly #state: AuthorityState;
  readonly #listeners: AuthorityListener[] = [];
  #subscription: Subscription | undefined;
  #waiters: { size: number; resolve: () => void }[] = [];
  #failure: Error | undefined;
  #started = false;
  /** Offset after the last authority record read (folded or skipped as already folded). */
  #nextOffset = 0n;

  constructor(bus: LogBus, trustRoot: TrustRoot, topics: TopicNames) {
    this.#bus = bus;
    this.#topics = topics;
    this.#state = new AuthorityState(trustRoot);
  }

  /** Registers a listener; call before start. */
  onEntry(listener: AuthorityListener): void {
    // A listener added later would miss the entries already folded (genesis first of all).
    if (this.#started) throw new Error('authority listeners must be added before the follower starts');
    this.#listeners.push(listener);
  }

  /** The registry and the authority index it stands at. */
  current(): { state: AuthorityState; size: number } {
    if (this.#failure !== undefined) throw this.#failure;
    return { state: this.#state, size: this.#state.size };
  }

  /** Resolves once the follower has folded at least `size` authority entries. */
  waitFor(size: number, timeoutMs = 30_000): Promise<void> {
    if (this.#state.size >= size) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`authority stream did not reach ${size} entries in ${timeoutMs} ms`)), timeoutMs);
      this.#waiters.push({ size, resolve: () => { clearTimeout(timer); resolve(); } });
    });
  }

  /**
   * How many authority entries the log has committed now, read from the log
   * itself past what this follower has folded (it may be behind): "is there
   * really no entry N yet?" asked of the log, not of this follower's progress.
   */
  async committedSize(): Promise<number> {
    let size = this.#state.size;
    for await (const record of this.#bus.readRange(this.#topics.authority, 0, String(this.#nextOffset))) {
      const index = (JSON.parse(record.value.toString('utf8')) as { index?: unknown }).index;
      if (typeof index === 'number' && index + 1 > size) size = index + 1;
    }
    return size;
  }

  /** Starts following from the first entry; resolves when caught up with the committed end. */
  async start(groupId: string): Promise<void> {
    this.#started = true;
    for await (const record of this.#bus.readRange(this.#topics.authority, 0, '0')) this.#fold(record.value, 0, record.offset);
    const caughtUp = this.#state.size;
    this.#subscription = await this.#bus.subscribe({
      groupId,
      topics: [this.#topics.authority],
      fromBeginning: true,
      commitOffsets: false,
      onBatch: async (batch) => {
        for (const record of batch.records) {
          // Entries already folded during catch-up are skipped by index.
          this.#fold(record.value, caughtUp, record.offset);
        }
      },
    });
  }

  #fold(value: Buffer, skipBelow: number, offset: string): void {
    const entry = EntrySchema.parse(parseStrictJson(value.toString('utf8'))) as unknown as Entry;
    const next = BigInt(offset) + 1n;
    if (entry.index < Math.max(skipBelow, this.#state.size)) {
      if (next > this.#nextOffset) this.#nextOffset = next;
      return;
    }
    try {
      this.#state.apply(entry.envelope.statement, entry.index, Date.parse(entry.sequencedAt));
    } catch (err) {
      this.#failure = err as Error;
      throw err;
    }
    const hash = statementHash(entry.envelope.statement);
    for (const listener of this.#listeners) listener(entry, hash);
    if (next > this.#nextOffset) this.#nextOffset = next;
    this.#waiters = this.#waiters.filter((w) => {
      if (this.#state.size < w.size) return true;
      w.resolve();
      return false;
    });
  }

  /** Stops following. */
  async stop(): Promise<void> {
    await this.#subscription?.stop();
  }
}
