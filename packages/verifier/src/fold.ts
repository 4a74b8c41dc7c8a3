import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import {
  AUTHORITY_PARTITION,
  AuthorityState,
  MerkleAccumulator,
  ZERO_HASH,
  bytesEqual,
  checkCheckpointSigners,
  checkRouting,
  checkpointVerifiers,
  ReplayWindow,
  fromHex,
  nodeEd25519,
  openNote,
  parseCheckpoint,
  parseTrailer,
  toBase64,
  uuidv7Millis,
  type Checkpoint,
  type NoteVerifier,
  type TrustRoot,
} from '@agent-ledger/core';
import type { CheckpointResult, EntryResult, LineResult, TrailerResult } from './line-result.js';
import { FoldFailure, type VerificationReport } from './report.js';
import type { RulesRegistry } from '@agent-ledger/rulebook';
import { DecisionReplay, type ReplayLimits } from './steps/replay-decisions.js';

/** Options of the sequential fold. */
export interface FoldOptions {
  /** Accept entries after the last checkpoint of a partition. */
  readonly allowUncoveredTail?: boolean;
  /** A checkpoint the auditor saw earlier (signed note text); the bundle must extend it. */
  readonly knownCheckpoint?: string;
  /** Bounds of the decision replay's window of undecided proposals (replay itself is always on). */
  readonly replay?: ReplayLimits;
  /** Released decision rules versions to replay with (default: every version the rulebook releases). */
  readonly rules?: RulesRegistry;
}

interface PartitionState {
  readonly partition: number;
  size: number;
  head: string;
  lastSequencedAtMs: number;
  lastAuthorityIndex: number;
  /** Authority index each entry was sequenced against, for the latest entry only. */
  checkpointed: number;
  /** Checkpoint lines read. */
  checkpoints: number;
  readonly tree: MerkleAccumulator;
  /** Freshness and duplicate ids (created once genesis fixed freshnessMs). */
  replay: ReplayWindow | undefined;
}

/** 64 lowercase hex characters: exactly the texts `fromHex(text, 32)` accepts. */
const LOWER_HEX_32_BYTES = /^[0-9a-f]{64}$/;
/** The accumulator copies each leaf it is given, so one buffer serves every entry. */
const leafScratch = Buffer.alloc(32);

/** An entry hash's 32 bytes, as `fromHex(hash, 32)` gives them (and refuses them), without a fresh array per entry. */
function leafOf(hash: string): Uint8Array {
  if (!LOWER_HEX_32_BYTES.test(hash)) return fromHex(hash, 32);
  leafScratch.write(hash, 0, 32, 'hex');
  return leafScratch;
}

function newPartition(partition: number): PartitionState {
  return {
    partition,
    size: 0,
    head: ZERO_HASH,
    lastSequencedAtMs: -Infinity,
    lastAuthorityIndex: 0,
    checkpointed: 0,
    checkpoints: 0,
    tree: new MerkleAccumulator(),
    replay: undefined,
  };
}

/**
 * Step 2 of verification, on one thread in bundle order: everything that
 * depends on other lines. Each `check*` method is one named rule of SPEC.md
 * section 8, called in the order written there.
 */
export class LedgerFold {
  readonly #authority: AuthorityState;
  readonly #options: FoldOptions;
  #line = 0;
  #sawHeader = false;
  #sawTrailer = false;
  #current: PartitionState = newPartition(AUTHORITY_PARTITION);
  readonly #done: PartitionState[] = [];
  #entries = 0;
  #known: { checkpoint: Checkpoint; note: string; partition: number } | undefined;
  /** Entry count of each partition, as the header declares (confirmed by the trailer). */
  #declared: readonly number[] = [];
  /** Events partition of each agent seen (routing cache). */
  readonly #routes = new Map<string, number>();
  /** Rules 14 and 15: every gate decision re-derived, every deadline proved, every fatigue signal re-derived. */
  readonly #replay: DecisionReplay;
  /** What rule 6 reads of an events statement, filled in for each entry. */
  readonly #eventView: { type: string; author: EntryResult['author']; body: { agentId: string | null; assurance: unknown; rulesVersion: unknown } } = {
    type: '',
    author: { principal: '', keyId: '' },
    body: { agentId: null, assurance: undefined, rulesVersion: undefined },
  };

  constructor(trustRoot: TrustRoot, options: FoldOptions = {}) {
    this.#authority = new AuthorityState(trustRoot);
    this.#options = options;
    this.#replay = new DecisionReplay(options.replay, options.rules);
  }

  /** Entries fully verified so far. */
  get entries(): number {
    return this.#entries;
  }

  #fail(code: ReasonCode, message: string, at?: { partition: number; index: number }, line: number | null = this.#line): never {
    const partition = at?.partition ?? this.#current.partition;
    const index = at?.index ?? this.#current.size;
    throw new FoldFailure({ partition, index, code, message, line });
  }

  /** A rule that threw: a LedgerError becomes the failure at `at`; anything else passes on. */
  #rethrow(err: unknown, at?: { partition: number; index: number }): never {
    if (err instanceof FoldFailure) throw err;
    if (err instanceof LedgerError) this.#fail(err.code, err.message, at);
    throw err;
  }

  #guard<T>(fn: () => T, at?: { partition: number; index: number }): T {
    try {
      return fn();
    } catch (err) {
      this.#rethrow(err, at);
    }
  }

  /** Folds one line's result; throws FoldFailure at the first broken rule. */
  accept(result: LineResult): void {
    this.#line = result.line;
    if (this.#sawTrailer) this.#fail(ReasonCode.SCHEMA_INVALID, 'content after the trailer');
    if (!this.#sawHeader && result.kind !== 'header') {
      this.#fail(ReasonCode.SCHEMA_INVALID, result.kind === 'error' ? `header: ${result.message}` : 'bundle does not start with a header');
    }
    switch (result.kind) {
      case 'header':
        if (this.#sawHeader) this.#fail(ReasonCode.SCHEMA_INVALID, 'second header');
        if (result.origin !== this.#authority.trustRoot.origin) {
          this.#fail(ReasonCode.INTEGRITY_FAILURE, `bundle origin ${result.origin} is not the trust root's`);
        }
        this.#declared = result.partitions;
        this.#sawHeader = true;
        return;
      case 'error':
        this.#failLine(result.code, result.message, result.claimed);
        return;
      case 'entry':
        this.#acceptEntry(result);
        return;
      case 'checkpoint':
        this.#acceptCheckpoint(result);
        return;
      case 'trailer':
        this.#acceptTrailer(result);
        return;
    }
  }

  /**
   * The position the next entry line must have: the current partition until
   * it holds its declared count, then the next partition declared non-empty;
   * null when every declared entry has been read.
   */
  #expected(): { partition: number; index: number } | null {
    const current = this.#current;
    if (current.size < (this.#declared[current.partition] ?? 0)) return { partition: current.partition, index: current.size };
    for (let p = current.partition + 1; p < this.#declared.length; p++) {
      if ((this.#declared[p] ?? 0) > 0) return { partition: p, index: 0 };
    }
    return null;
  }

  /** A line that failed alone: reported where the next entry was expected. */
  #failLine(code: ReasonCode, message: string, claimed: { partition: number; index: number } | null): never {
    const current = this.#current;
    if (claimed !== null && claimed.index === -1 && current.size > 0) {
      // A damaged checkpoint line: reported at the last entry it would seal.
      this.#fail(code, message, { partition: current.partition, index: current.size - 1 });
    }
    this.#fail(code, message, this.#expected() ?? undefined);
  }

  // The rules of one entry, in order. The hot path allocates nothing it can
  // avoid (no closures, no positions until a rule fails): it runs once per entry.
  #acceptEntry(entry: EntryResult): void {
    this.#checkPosition(entry);
    this.#checkLink(entry);
    this.#checkSequencing(entry);
    this.#checkFreshness(entry);
    this.#checkRouting(entry);
    try {
      this.#checkAuthority(entry);
      if (entry.partition !== AUTHORITY_PARTITION) this.#replay.event(entry);
    } catch (err) {
      this.#rethrow(err, { partition: entry.partition, index: entry.index });
    }
    this.#current.tree.append(leafOf(entry.hash));
    this.#current.size += 1;
    this.#current.head = entry.hash;
    this.#current.lastSequencedAtMs = entry.sequencedAtMs;
    this.#current.lastAuthorityIndex = entry.authorityIndex;
    this.#entries += 1;
    this.#checkKnownCheckpoint();
  }

  /** Rule 1: every entry sits at the position the header's partition sizes give its line. */
  #checkPosition(entry: EntryResult): void {
    const current = this.#current;
    if (current.size < (this.#declared[current.partition] ?? 0)) {
      // Within the current partition: what #expected() gives, without building it.
      if (entry.partition !== current.partition || entry.index !== current.size) {
        this.#fail(ReasonCode.INTEGRITY_FAILURE, `expected entry ${current.partition}/${current.size}, found ${entry.partition}/${entry.index}`, {
          partition: current.partition,
          index: current.size,
        });
      }
      return;
    }
    const expected = this.#expected();
    if (expected === null) this.#fail(ReasonCode.INTEGRITY_FAILURE, 'more entries than the header declares');
    if (entry.partition !== expected.partition || entry.index !== expected.index) {
      this.#fail(ReasonCode.INTEGRITY_FAILURE, `expected entry ${expected.partition}/${expected.index}, found ${entry.partition}/${entry.index}`, expected);
    }
    if (expected.partition !== this.#current.partition) {
      this.#checkTailCovered();
      this.#done.push(this.#current);
      this.#current = newPartition(expected.partition);
      this.#replay.beginPartition();
    }
  }

  /** Rule 2: the entry's hash is its content's, and it links to the previous entry. */
  #checkLink(entry: EntryResult): void {
    if (!entry.hashMatches) {
      this.#fail(ReasonCode.INTEGRITY_FAILURE, 'entry hash does not match its content');
    }
    if (entry.prev !== this.#current.head) {
      this.#fail(ReasonCode.INTEGRITY_FAILURE, 'entry does not link to the previous entry');
    }
  }

  /** Rule 3: sequencing time never goes back; authority index is real and never goes back. */
  #checkSequencing(entry: EntryResult): void {
    const current = this.#current;
    if (entry.sequencedAtMs < current.lastSequencedAtMs) {
      this.#fail(ReasonCode.INTEGRITY_FAILURE, 'sequencedAt goes backwards');
    }
    if (entry.partition === AUTHORITY_PARTITION) {
      if (entry.authorityIndex !== entry.index) this.#fail(ReasonCode.INTEGRITY_FAILURE, 'authority entry must cite its own index');
    } else if (entry.authorityIndex > this.#authority.size || entry.authorityIndex < current.lastAuthorityIndex) {
      this.#fail(ReasonCode.INTEGRITY_FAILURE, `authority index ${entry.authorityIndex} is not a valid position`);
    }
  }

  /** Rule 4: the statement was fresh when sequenced, and its id is not a replay. */
  #checkFreshness(entry: EntryResult): void {
    if (entry.type === 'genesis') {
      if (uuidv7Millis(entry.id) !== entry.issuedAtMs) this.#fail(ReasonCode.SCHEMA_INVALID, 'statement id does not carry its issuedAt time');
      return;
    }
    const current = this.#current;
    current.replay ??= new ReplayWindow(this.#authority.config?.freshnessMs ?? 0);
    try {
      current.replay.admit(entry.id, entry.issuedAtMs, entry.sequencedAtMs);
    } catch (err) {
      this.#rethrow(err);
    }
  }

  /** Rule 5: the statement sits in the partition its type and agent decide. */
  #checkRouting(entry: EntryResult): void {
    const config = this.#authority.config;
    if (config === undefined) {
      if (entry.type === 'genesis' && entry.partition === AUTHORITY_PARTITION) return;
      this.#fail(ReasonCode.INTEGRITY_FAILURE, 'entries before genesis');
    }
    // Agents are few and their entries many: remember each agent's partition (one hash per agent, not per entry).
    // Only events-stream types are cached (workers keep the statement of authority types and rejections).
    const cacheable = entry.statement === null && entry.agentId !== null;
    if (cacheable && this.#routes.get(entry.agentId) === entry.partition) return;
    try {
      checkRouting(entry.type, entry.agentId, entry.partition, config.eventPartitions);
    } catch (err) {
      this.#rethrow(err);
    }
    if (cacheable) {
      if (this.#routes.size >= 65_536) this.#routes.clear();
      this.#routes.set(entry.agentId, entry.partition);
    }
  }

  /** Rule 6: the signing keys held the needed role at the cited authority index; authority entries are folded. */
  #checkAuthority(entry: EntryResult): void {
    if (entry.partition === AUTHORITY_PARTITION) {
      const statement = entry.statement;
      if (statement === null) this.#fail(ReasonCode.INTEGRITY_FAILURE, `${entry.type} does not belong on the authority stream`);
      this.#authority.authorize(statement, entry.signers, entry.index);
      this.#authority.apply(statement, entry.index, entry.sequencedAtMs);
      this.#replay.authority(entry, statement);
      const config = this.#authority.config;
      if (statement.type === 'genesis' && config !== undefined && this.#declared.length !== config.eventPartitions + 1) {
        this.#fail(ReasonCode.INTEGRITY_FAILURE, `header declares ${this.#declared.length} partitions, genesis ${config.eventPartitions + 1}`);
      }
      return;
    }
    // Events statements: the fold needs only the author and type, which the
    // worker checked against the signatures; a minimal statement view, reused
    // from entry to entry (authorize reads it and keeps nothing).
    const view = this.#eventView;
    view.type = entry.type;
    view.author = entry.author;
    view.body.agentId = entry.agentId;
    // A response's assurance is bound to its signer's role (authority rules 2, SPEC.md section 7.3).
    view.body.assurance = entry.type === 'human.response' ? entry.replayBody?.assurance : undefined;
    view.body.rulesVersion = entry.type === 'decision.recorded' ? entry.replayBody?.rulesVersion : undefined;
    this.#authority.authorize(view as never, entry.signers, entry.authorityIndex);
  }

  /**
   * Sequencer keys valid at authority index `atIndex`, as note verifiers: for
   * a checkpoint of `partition`, under both of its key names (SPEC.md section
   * 6); for the trailer, under the ledger origin.
   */
  #sequencerVerifiers(atIndex: number, partition?: number): NoteVerifier[] {
    const origin = this.#authority.trustRoot.origin;
    const publicKeys: Uint8Array[] = [];
    for (const key of this.#authority.keys()) {
      const valid = key.registeredAt < atIndex && (key.revokedAt === undefined || key.revokedAt >= atIndex);
      if (valid && key.roles.includes('sequencer')) publicKeys.push(fromHex(key.keyId, 32));
    }
    const verify: NoteVerifier['verify'] = (pk, msg, sig) => nodeEd25519.verify(pk, msg, sig);
    if (partition !== undefined) return checkpointVerifiers(origin, partition, publicKeys, verify);
    return publicKeys.map((publicKey) => ({ name: origin, publicKey, verify }));
  }

  /** Rule 7: a checkpoint is signed by a sequencer key and seals exactly the entries before it. */
  #acceptCheckpoint(result: CheckpointResult): void {
    const current = this.#current;
    const at = { partition: current.partition, index: Math.max(current.size - 1, 0) };
    if (result.partition !== current.partition || current.size === 0) {
      this.#fail(ReasonCode.CHECKPOINT_INVALID, `checkpoint for partition ${result.partition} out of place`, at);
    }
    // SPEC.md section 8: a checkpoint line sits directly after the entry that makes its size; a second one there is out of place.
    if (current.checkpointed === current.size) this.#fail(ReasonCode.CHECKPOINT_INVALID, `a second checkpoint of size ${current.size} in partition ${current.partition}`, at);
    const atAuthority = current.partition === AUTHORITY_PARTITION ? current.size : current.lastAuthorityIndex;
    const checkpoint = this.#guard(() => {
      const opened = openNote(result.note, this.#sequencerVerifiers(atAuthority, current.partition));
      checkCheckpointSigners(opened, this.#authority.trustRoot.origin, current.partition, this.#authority.config?.authorityRulesVersion ?? 1);
      return parseCheckpoint(opened.text);
    }, at);
    const origin = `${this.#authority.trustRoot.origin}/${current.partition}`;
    if (checkpoint.origin !== origin) this.#fail(ReasonCode.CHECKPOINT_INVALID, `checkpoint origin ${checkpoint.origin}, expected ${origin}`, at);
    if (checkpoint.size > current.size && checkpoint.size <= (this.#declared[current.partition] ?? 0)) {
      this.#fail(ReasonCode.INTEGRITY_FAILURE, `entry ${current.partition}/${current.size} is missing before its checkpoint`, {
        partition: current.partition,
        index: current.size,
      });
    }
    if (checkpoint.size !== current.size) {
      this.#fail(ReasonCode.CHECKPOINT_INVALID, `checkpoint of size ${checkpoint.size} placed after entry ${current.size - 1}`, at);
    }
    if (!bytesEqual(checkpoint.rootHash, current.tree.root())) {
      this.#fail(ReasonCode.CHECKPOINT_INVALID, 'checkpoint root does not match the entries', at);
    }
    current.checkpointed = current.size;
    current.checkpoints += 1;
  }

  /** Rule 8: every partition's entries end under a checkpoint, unless the caller allows a tail. */
  #checkTailCovered(): void {
    const current = this.#current;
    if (this.#options.allowUncoveredTail === true || current.checkpointed === current.size) return;
    this.#fail(ReasonCode.UNCOVERED_TAIL, `entries ${current.checkpointed}..${current.size - 1} are not covered by a checkpoint`, {
      partition: current.partition,
      index: current.checkpointed,
    });
  }

  /** Rule 9: the bundle extends a checkpoint the auditor already holds. */
  #loadKnownCheckpoint(): void {
    const note = this.#options.knownCheckpoint;
    if (note === undefined || this.#known !== undefined) return;
    const checkpoint = this.#guard(() => parseCheckpoint(note.slice(0, note.indexOf('\n\n') + 1)), { partition: 0, index: 0 });
    const prefix = `${this.#authority.trustRoot.origin}/`;
    const partition = checkpoint.origin.startsWith(prefix) ? Number(checkpoint.origin.slice(prefix.length)) : Number.NaN;
    if (!Number.isSafeInteger(partition)) {
      this.#fail(ReasonCode.INCONSISTENT_HISTORY, `known checkpoint is for another log (${checkpoint.origin})`, { partition: 0, index: 0 });
    }
    this.#known = { checkpoint, note, partition };
  }

  #checkKnownCheckpoint(): void {
    if (this.#options.knownCheckpoint === undefined) return;
    this.#loadKnownCheckpoint();
    const known = this.#known;
    const current = this.#current;
    if (known === undefined || known.partition !== current.partition || known.checkpoint.size !== current.size) return;
    const at = { partition: current.partition, index: current.size - 1 };
    this.#guard(() => checkCheckpointSigners(openNote(known.note, this.#sequencerVerifiers(this.#authority.size, known.partition)), this.#authority.trustRoot.origin, known.partition, this.#authority.config?.authorityRulesVersion ?? 1), at);
    if (!bytesEqual(known.checkpoint.rootHash, current.tree.root())) {
      this.#fail(ReasonCode.INCONSISTENT_HISTORY, 'the bundle rewrites history the known checkpoint sealed', at);
    }
    this.#known = { ...known, partition: -1 };
  }

  /** Rule 10: the trailer, signed by a sequencer key, names every partition's final size and root. */
  #acceptTrailer(result: TrailerResult): void {
    const missing = this.#expected();
    if (missing !== null) this.#fail(ReasonCode.INTEGRITY_FAILURE, `entry ${missing.partition}/${missing.index} is missing (truncated)`, missing);
    this.#checkTailCovered();
    this.#done.push(this.#current);
    const config = this.#authority.config;
    if (config === undefined) this.#fail(ReasonCode.INTEGRITY_FAILURE, 'bundle has no authority stream');
    const trailer = this.#guard(() => parseTrailer(openNote(result.note, this.#sequencerVerifiers(this.#authority.size)).text));
    if (trailer.origin !== config.origin || trailer.partitions.length !== config.eventPartitions + 1) {
      this.#fail(ReasonCode.INTEGRITY_FAILURE, 'trailer does not list every partition of this ledger');
    }
    const byPartition = new Map(this.#done.map((p) => [p.partition, p]));
    for (const summary of trailer.partitions) {
      const state = byPartition.get(summary.partition) ?? newPartition(summary.partition);
      if (state.checkpoints !== summary.checkpoints) {
        this.#fail(ReasonCode.INTEGRITY_FAILURE, `partition ${summary.partition} holds ${state.checkpoints} checkpoints, the trailer says ${summary.checkpoints}`, {
          partition: summary.partition,
          index: Math.max(state.size - 1, 0),
        });
      }
      if (state.size !== summary.size || summary.size !== this.#declared[summary.partition] || toBase64(state.tree.root()) !== summary.root) {
        this.#fail(ReasonCode.INTEGRITY_FAILURE, `partition ${summary.partition} holds ${state.size} entries, the trailer says ${summary.size}`, {
          partition: summary.partition,
          index: Math.min(state.size, summary.size),
        });
      }
    }
    this.#sawTrailer = true;
  }

  /** Ends the fold: the bundle must have ended with its trailer. */
  finish(): VerificationReport {
    if (!this.#sawTrailer) {
      this.#fail(ReasonCode.INTEGRITY_FAILURE, 'bundle ends without its trailer (truncated)', this.#expected() ?? undefined, null);
    }
    const known = this.#known;
    if (this.#options.knownCheckpoint !== undefined && (known === undefined || known.partition !== -1)) {
      this.#loadKnownCheckpoint();
      const k = this.#known;
      this.#fail(ReasonCode.INCONSISTENT_HISTORY, 'the bundle is shorter than the known checkpoint', {
        partition: k?.partition ?? 0,
        index: k?.checkpoint.size ?? 0,
      }, null);
    }
    return { ok: true, entries: this.#entries, failure: null, partitions: this.partitions() };
  }

  /** Sizes reached so far, per partition. */
  partitions(): { partition: number; size: number; checkpointed: number }[] {
    const all = this.#sawTrailer ? this.#done : [...this.#done, this.#current];
    return all.map((p) => ({ partition: p.partition, size: p.size, checkpointed: p.checkpointed }));
  }
}

/**
 * Folds already-checked line results (step 2 alone, synchronously). The
 * streaming {@link verifyBundle} is this plus worker threads; tests and tools
 * that hold results in memory use it directly.
 */
export function foldLineResults(results: Iterable<LineResult>, trustRoot: TrustRoot, options: FoldOptions = {}): VerificationReport {
  const fold = new LedgerFold(trustRoot, options);
  try {
    for (const result of results) fold.accept(result);
    return fold.finish();
  } catch (err) {
    if (err instanceof FoldFailure) return { ok: false, entries: fold.entries, failure: err.failure, partitions: fold.partitions() };
    throw err;
  }
}
