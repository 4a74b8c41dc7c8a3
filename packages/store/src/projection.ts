import type { SqlClient, SqlPool, SqlResult } from './sql.js';
import { ZERO_HASH, type Entry } from '@agent-ledger/core';
import { LedgerError, ReasonCode, isReasonCode } from '@agent-ledger/refusals';
import { StatementBuilder, addCountsPart, insertPart, insertRows, loadRows, updatePart } from './bulk.js';
import { checkLinks, hashEntries, type EntryHashes, type LinkCheck, type LinkFailure, type LinkedEntry, type VerifiedHead } from './chain-check.js';
import { FoldState, entrySeenRow, evolve, lookupsOf, type Lookups } from './fold.js';
import {
  type EntrySeenRow,
  ENFORCEMENT_RECORDS,
  ENTRIES_SEEN,
  GRANT_EVENTS,
  GRANT_POLICY,
  GRANTS,
  KEYS,
  PENDING_APPROVALS,
  PROPOSALS,
  REFUSALS,
  REFUSAL_METRICS,
} from './rows.js';

/** The LISTEN/NOTIFY channel on which every applied decision.recorded announces its proposal hash. */
export const DECISION_CHANNEL = 'ledger_decisions';

/** Where a batch came from: the Kafka topic partition and the offset to resume at after it. */
export interface SourceOffset {
  readonly topic: string;
  readonly partition: number;
  /** Kafka offset (int64, decimal) of the next record to consume. */
  readonly nextOffset: string;
}

/** What one {@link Projection.apply} did. */
export interface ApplyResult {
  /** Entries folded into the tables. */
  readonly applied: number;
  /** Redelivered entries, identical to the ones already applied, skipped. */
  readonly skipped: number;
  /** The partition's verified size after the batch. */
  readonly size: number;
  /** The partition's verified head hash after the batch. */
  readonly head: string;
}

/** Why a partition stopped: set once, cleared only by an operator. */
export interface PartitionHalt {
  readonly code: ReasonCode;
  readonly index: number;
  readonly message: string;
}

/** The verified head of one ledger partition, as {@link Projection.head} reports it. */
export interface PartitionHead {
  readonly size: number;
  readonly head: string;
  readonly halted: null | PartitionHalt;
}

/**
 * Namespace of the per-partition transaction advisory lock (the second key is
 * the ledger partition): applies to one partition run one at a time, even
 * from two projector processes during a consumer-group rebalance.
 */
const APPLY_LOCK_NAMESPACE = 0x4c454447; // "LEDG"

const INT64_MAX = 9223372036854775807n;

/**
 * How many entries are checked and sent to `entries_seen` at a time: about a
 * quarter of the batch, so Postgres has a chunk to insert while the next is
 * hashed, and at least 100, so a chunk's statement costs little beside its rows.
 */
function linkChunkOf(batchSize: number): number {
  return Math.max(100, Math.ceil(batchSize / 4));
}

function ignore(): void {}

/** Inserts `entries_seen` rows through a statement prepared once per connection. */
function insertEntriesSeen(client: SqlClient, rows: readonly EntrySeenRow[]): Promise<unknown> {
  return insertRows(client, ENTRIES_SEEN, rows, 'store_entries_seen');
}

function checkSource(ledgerPartition: number, source: SourceOffset): void {
  if (!Number.isSafeInteger(ledgerPartition) || ledgerPartition < 0 || ledgerPartition > 1024) {
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, `ledger partition ${String(ledgerPartition)} is not an integer from 0 to 1024`);
  }
  if (typeof source.topic !== 'string' || source.topic.length === 0 || source.topic.length > 249) {
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'source topic must be a Kafka topic name');
  }
  if (!Number.isSafeInteger(source.partition) || source.partition < 0 || source.partition > 2147483647) {
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'source partition must be a non-negative integer');
  }
  if (typeof source.nextOffset !== 'string' || !/^(0|[1-9][0-9]{0,18})$/.test(source.nextOffset) || BigInt(source.nextOffset) > INT64_MAX) {
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'source nextOffset must be a decimal int64');
  }
}

interface StoredHead extends VerifiedHead {
  readonly halted: null | PartitionHalt;
}

function readHead(row: Record<string, unknown> | undefined): StoredHead {
  if (row === undefined) return { size: 0, head: ZERO_HASH, sequencedAt: null, authorityIndex: null, halted: null };
  const code = row['halted_code'];
  return {
    size: Number(row['size']),
    head: row['head'] as string,
    sequencedAt: row['sequenced_at'] === null ? null : (row['sequenced_at'] as Date).toISOString(),
    authorityIndex: row['authority_index'] === null ? null : Number(row['authority_index']),
    halted:
      code === null
        ? null
        : {
            code: isReasonCode(code) ? code : ReasonCode.INTEGRITY_FAILURE,
            index: Number(row['halted_index']),
            message: row['halted_message'] as string,
          },
  };
}

function haltedError(partition: number, halt: PartitionHalt): LedgerError {
  return new LedgerError(halt.code, `ledger partition ${partition} is halted at index ${halt.index}: ${halt.message}`);
}

/** SQLSTATE class 23: integrity constraint violation. */
function isConstraintViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('23');
}

/**
 * The projection of the ledger into Postgres: folds batches of entries, one
 * ledger partition at a time, each batch in one transaction together with
 * the source offset it brings the consumer to.
 */
export class Projection {
  readonly #pool: SqlPool;

  constructor(pool: SqlPool) {
    this.#pool = pool;
  }

  /**
   * In one database transaction: checks the entries of one ledger partition
   * against its verified head, folds the new ones in index order into the
   * tables, stores the new head and the source offset, and announces each
   * decision on {@link DECISION_CHANNEL} (delivered at commit).
   *
   * Redelivered entries (index below the verified size) are skipped when
   * identical to the stored ones. Anything that does not link (a changed
   * entry, a broken `prev`, a gap, an entry of another partition) halts the
   * partition: the halt is committed on its own, nothing of the batch is
   * applied, and this and every later apply throw INTEGRITY_FAILURE.
   *
   * A batch that links but breaks a table constraint (a key or grant the
   * sequencer should have refused to register twice) commits nothing and
   * throws INTEGRITY_FAILURE with `retryable: false` and the database error
   * as `cause`; the partition is not halted. Other database errors (lost
   * connection) are rethrown unchanged, and the batch may be retried.
   */
  async apply(ledgerPartition: number, entries: readonly Entry[], source: SourceOffset): Promise<ApplyResult> {
    checkSource(ledgerPartition, source);
    const client = await this.#pool.connect();
    let usable = true;
    try {
      let failure: LinkFailure;
      try {
        // One round trip opens the transaction, takes the partition's lock and reads its head (the partition is a
        // checked integer, safe to inline; a multi-statement text runs in the simple protocol). While Postgres
        // answers, the first chunk's hashes are recomputed: they depend on content alone.
        const opening = client.query(
          `BEGIN; SELECT pg_advisory_xact_lock(${APPLY_LOCK_NAMESPACE}, ${ledgerPartition}); SELECT * FROM partition_heads WHERE partition = ${ledgerPartition}`,
        );
        opening.catch(ignore); // awaited below; this only keeps a rejection from counting as unhandled meanwhile
        const firstHashes = hashEntries(entries.slice(0, linkChunkOf(entries.length)));
        const results = (await opening) as unknown as SqlResult[];
        const stored = readHead(results[2]?.rows[0] as Record<string, unknown> | undefined);
        if (stored.halted !== null) throw haltedError(ledgerPartition, stored.halted);
        const linked = await this.#link(client, ledgerPartition, stored, entries, firstHashes);
        if (linked.ok) {
          const state = new FoldState();
          await this.#load(client, state, lookupsOf(linked.fresh));
          for (const entry of linked.fresh) evolve(state, entry);
          await this.#write(client, ledgerPartition, state, linked.fresh.length > 0 ? linked.head : null, source);
          await client.query('COMMIT');
          return { applied: linked.fresh.length, skipped: linked.skipped, size: linked.head.size, head: linked.head.head };
        }
        failure = linked.failure;
        await client.query('ROLLBACK');
      } catch (err) {
        try {
          await client.query('ROLLBACK');
        } catch {
          usable = false;
        }
        if (isConstraintViolation(err)) {
          throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `ledger partition ${ledgerPartition}: the batch breaks a projection constraint`, {
            cause: err,
            retryable: false,
          });
        }
        throw err;
      }
      // The halt outlives the rolled-back batch: it is committed on its own.
      const halt: PartitionHalt = { code: ReasonCode.INTEGRITY_FAILURE, index: failure.index, message: failure.message };
      await client.query(
        `INSERT INTO partition_heads (partition, size, head, halted_code, halted_index, halted_message) VALUES ($1, 0, $2, $3, $4, $5)
         ON CONFLICT (partition) DO UPDATE SET halted_code = EXCLUDED.halted_code, halted_index = EXCLUDED.halted_index,
           halted_message = EXCLUDED.halted_message
         WHERE partition_heads.halted_code IS NULL`,
        [ledgerPartition, ZERO_HASH, halt.code, halt.index, halt.message],
      );
      throw haltedError(ledgerPartition, halt);
    } finally {
      client.release(!usable);
    }
  }

  /** The offset a consumer of this topic partition resumes at, or null when none was stored. */
  async offsetOf(topic: string, partition: number): Promise<string | null> {
    const result = await this.#pool.query<{ next_offset: string }>(
      'SELECT next_offset FROM projector_offsets WHERE topic = $1 AND partition = $2',
      [topic, partition],
    );
    return result.rows[0]?.next_offset ?? null;
  }

  /** The verified size and head of a ledger partition, and its halt if it is halted. */
  async head(ledgerPartition: number): Promise<PartitionHead> {
    const result = await this.#pool.query('SELECT * FROM partition_heads WHERE partition = $1', [ledgerPartition]);
    const { size, head, halted } = readHead(result.rows[0]);
    return { size, head, halted };
  }

  /**
   * Checks the batch chunk by chunk (the same verdict, and the same first
   * failing entry, as one {@link checkLinks} over the whole batch) and sends
   * each chunk's `entries_seen` rows as soon as it links, without waiting:
   * Postgres inserts one chunk while the next one's hashes are recomputed.
   * On a failure the rows already sent are left to the caller's ROLLBACK.
   */
  async #link(
    client: SqlClient,
    partition: number,
    stored: VerifiedHead,
    entries: readonly Entry[],
    firstHashes: readonly (EntryHashes | null)[],
  ): Promise<LinkCheck> {
    const known = await this.#storedHashes(client, partition, stored.size, entries);
    const fresh: LinkedEntry[] = [];
    // The inserts sent so far, chained: a connection runs one query at a time, so each goes out when the one before
    // it has answered (a failed one stops the chain; the transaction is lost anyway).
    let sent: Promise<unknown> = Promise.resolve();
    let head = stored;
    let skipped = 0;
    const chunkSize = linkChunkOf(entries.length);
    for (let from = 0; from < entries.length; from += chunkSize) {
      const chunk = entries.slice(from, from + chunkSize);
      const check = checkLinks(partition, head, chunk, known, from === 0 ? firstHashes : hashEntries(chunk));
      if (!check.ok) {
        await sent.catch(ignore); // the caller rolls back; what the inserts said no longer matters
        return check;
      }
      head = check.head;
      skipped += check.skipped;
      for (const linked of check.fresh) {
        fresh.push(linked);
        known.set(linked.entry.index, linked.entry.hash);
      }
      if (check.fresh.length === 0) continue;
      const rows = check.fresh.map(entrySeenRow);
      sent = sent.then(() => insertEntriesSeen(client, rows));
      sent.catch(ignore); // awaited below
      // Lets the event loop hand a ready insert to the server before the next chunk's hashing blocks the thread.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    await sent;
    return { ok: true, fresh, skipped, head };
  }

  /** Stored hashes of the batch's entries that fall below the verified size (redeliveries). */
  async #storedHashes(client: SqlClient, partition: number, size: number, entries: readonly Entry[]): Promise<Map<number, string>> {
    const indexes = [...new Set(entries.filter((e) => e.index < size).map((e) => e.index))];
    if (indexes.length === 0) return new Map();
    const result = await client.query<{ index: string; hash: string }>({
      name: 'store_stored_hashes',
      text: 'SELECT index, hash FROM entries_seen WHERE partition = $1 AND index = ANY($2::bigint[])',
      values: [partition, indexes],
    });
    return new Map(result.rows.map((r) => [Number(r.index), r.hash]));
  }

  async #load(client: SqlClient, state: FoldState, lookups: Lookups): Promise<void> {
    for (const row of await loadRows(client, KEYS, lookups.keyIds)) state.keys.load(row.keyId, row);
    for (const row of await loadRows(client, GRANTS, lookups.grantIds)) state.grants.load(row.grantId, row);
    if (lookups.grantSubtrees.size > 0) {
      // Each revoked grant with every grant derived from it, transitively (UNION: a malformed cycle ends).
      const result = await client.query({
        name: 'store_load_grant_subtrees',
        text: `WITH RECURSIVE subtree AS (
                 SELECT * FROM grants WHERE grant_id = ANY($1::text[])
                 UNION
                 SELECT g.* FROM grants AS g JOIN subtree AS s ON g.parent_grant_id = s.grant_id
               )
               SELECT * FROM subtree`,
        values: [[...lookups.grantSubtrees]],
      });
      for (const stored of result.rows as Record<string, unknown>[]) {
        const row = GRANTS.read(stored);
        state.grants.load(row.grantId, row);
      }
    }
    if (lookups.grantWrites.size > 0) {
      const result = await client.query({
        name: 'store_load_grant_writes',
        text: `SELECT * FROM grant_events WHERE statement_hash = ANY($1::text[]) AND kind IN ('proposed', 'reauthorized') ORDER BY authority_index`,
        values: [[...lookups.grantWrites]],
      });
      for (const stored of result.rows as Record<string, unknown>[]) {
        const row = GRANT_EVENTS.read(stored);
        state.grantWrites.load(row.statementHash, row);
      }
    }
    if (lookups.policy) {
      const result = await client.query({ name: 'store_load_grant_policy', text: 'SELECT * FROM grant_policy ORDER BY authority_index LIMIT 1' });
      const stored = result.rows[0] as Record<string, unknown> | undefined;
      if (stored !== undefined) state.policy = GRANT_POLICY.read(stored);
    }
    for (const row of await loadRows(client, PROPOSALS, lookups.proposalHashes)) state.proposals.load(row.proposalHash, row);
    for (const row of await loadRows(client, PENDING_APPROVALS, lookups.requestHashes)) state.approvals.load(row.requestHash, row);
  }

  /**
   * Writes the folded batch in one statement: every table's rows (but
   * `entries_seen`, written as the entries link), the partition's new
   * head (when the batch brought new entries), the source offset (never moved
   * backwards) and a NOTIFY per decision in entry order (delivered at commit),
   * as data-modifying CTEs. The text depends on no value, so it is prepared
   * once per connection.
   */
  async #write(client: SqlClient, ledgerPartition: number, state: FoldState, head: VerifiedHead | null, source: SourceOffset): Promise<void> {
    const params = new StatementBuilder();
    // Buckets in key order: concurrent applies of different partitions then lock shared buckets in one order (no deadlock).
    const buckets = [...state.refusalCounts.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
    const parts = [
      insertPart(params, KEYS, state.keys.inserted),
      updatePart(params, KEYS, state.keys.updated()),
      insertPart(params, GRANTS, state.grants.inserted),
      updatePart(params, GRANTS, state.grants.updated()),
      insertPart(params, GRANT_POLICY, state.policies),
      insertPart(params, GRANT_EVENTS, state.grantWrites.inserted),
      updatePart(params, GRANT_EVENTS, state.grantWrites.updated()),
      insertPart(params, GRANT_EVENTS, state.grantEvents),
      insertPart(params, PROPOSALS, state.proposals.inserted),
      updatePart(params, PROPOSALS, state.proposals.updated()),
      insertPart(params, PENDING_APPROVALS, state.approvals.inserted),
      updatePart(params, PENDING_APPROVALS, state.approvals.updated()),
      insertPart(params, ENFORCEMENT_RECORDS, state.decisions),
      insertPart(params, REFUSALS, state.refusals),
      addCountsPart(params, REFUSAL_METRICS, 'count', buckets),
      `INSERT INTO partition_heads (partition, size, head, sequenced_at, authority_index)
         SELECT ${params.add(ledgerPartition, 'integer')}, ${params.add(head?.size ?? 0, 'bigint')}, ${params.add(head?.head ?? ZERO_HASH, 'text')},
           ${params.add(head?.sequencedAt ?? null, 'timestamptz')}, ${params.add(head?.authorityIndex ?? null, 'bigint')}
         WHERE ${params.add(head !== null, 'boolean')}
       ON CONFLICT (partition) DO UPDATE SET size = EXCLUDED.size, head = EXCLUDED.head,
         sequenced_at = EXCLUDED.sequenced_at, authority_index = EXCLUDED.authority_index`,
      `INSERT INTO projector_offsets (topic, partition, next_offset)
         VALUES (${params.add(source.topic, 'text')}, ${params.add(source.partition, 'integer')}, ${params.add(source.nextOffset, 'bigint')})
       ON CONFLICT (topic, partition) DO UPDATE SET next_offset = GREATEST(projector_offsets.next_offset, EXCLUDED.next_offset)`,
    ];
    const notify = `SELECT pg_notify(${params.add(DECISION_CHANNEL, 'text')}, d.hash) FROM unnest(${params.add(state.decided, 'text[]')}) WITH ORDINALITY AS d(hash, n) ORDER BY d.n`;
    await client.query({
      name: 'store_apply_write',
      text: `WITH ${parts.map((part, i) => `w${i} AS (${part})`).join(',\n')}\n${notify}`,
      values: params.values,
    });
  }
}
