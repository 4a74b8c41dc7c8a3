import type pg from 'pg';
import { ZERO_HASH, type Entry } from '@agent-ledger/core';
import { LedgerError, ReasonCode, isReasonCode } from '@agent-ledger/refusals';
import { addCounts, insertRows, loadRows, updateRows } from './bulk.js';
import { checkLinks, type LinkFailure, type VerifiedHead } from './chain-check.js';
import { FoldState, evolve, lookupsOf, type Lookups } from './fold.js';
import {
  ENFORCEMENT_RECORDS,
  ENTRIES_SEEN,
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
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
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
      await client.query('BEGIN');
      try {
        await client.query('SELECT pg_advisory_xact_lock($1, $2)', [APPLY_LOCK_NAMESPACE, ledgerPartition]);
        const stored = readHead((await client.query('SELECT * FROM partition_heads WHERE partition = $1', [ledgerPartition])).rows[0]);
        if (stored.halted !== null) throw haltedError(ledgerPartition, stored.halted);
        const check = checkLinks(ledgerPartition, stored, entries, await this.#storedHashes(client, ledgerPartition, stored.size, entries));
        if (check.ok) {
          const state = new FoldState();
          await this.#load(client, state, lookupsOf(check.fresh));
          for (const linked of check.fresh) evolve(state, linked);
          await this.#write(client, state);
          if (check.fresh.length > 0) {
            const { size, head, sequencedAt, authorityIndex } = check.head;
            await client.query(
              `INSERT INTO partition_heads (partition, size, head, sequenced_at, authority_index) VALUES ($1, $2, $3, $4, $5)
               ON CONFLICT (partition) DO UPDATE SET size = EXCLUDED.size, head = EXCLUDED.head,
                 sequenced_at = EXCLUDED.sequenced_at, authority_index = EXCLUDED.authority_index`,
              [ledgerPartition, size, head, sequencedAt, authorityIndex],
            );
          }
          await client.query(
            `INSERT INTO projector_offsets (topic, partition, next_offset) VALUES ($1, $2, $3)
             ON CONFLICT (topic, partition) DO UPDATE SET next_offset = GREATEST(projector_offsets.next_offset, EXCLUDED.next_offset)`,
            [source.topic, source.partition, source.nextOffset],
          );
          if (state.decided.length > 0) {
            await client.query('SELECT pg_notify($1, hash) FROM unnest($2::text[]) WITH ORDINALITY AS d(hash, n) ORDER BY n', [
              DECISION_CHANNEL,
              state.decided,
            ]);
          }
          await client.query('COMMIT');
          return { applied: check.fresh.length, skipped: check.skipped, size: check.head.size, head: check.head.head };
        }
        failure = check.failure;
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

  /** Stored hashes of the batch's entries that fall below the verified size (redeliveries). */
  async #storedHashes(client: pg.PoolClient, partition: number, size: number, entries: readonly Entry[]): Promise<Map<number, string>> {
    const indexes = [...new Set(entries.filter((e) => e.index < size).map((e) => e.index))];
    if (indexes.length === 0) return new Map();
    const result = await client.query<{ index: string; hash: string }>(
      'SELECT index, hash FROM entries_seen WHERE partition = $1 AND index = ANY($2::bigint[])',
      [partition, indexes],
    );
    return new Map(result.rows.map((r) => [Number(r.index), r.hash]));
  }

  async #load(client: pg.PoolClient, state: FoldState, lookups: Lookups): Promise<void> {
    for (const row of await loadRows(client, KEYS, lookups.keyIds)) state.keys.load(row.keyId, row);
    for (const row of await loadRows(client, GRANTS, lookups.grantIds)) state.grants.load(row.grantId, row);
    for (const row of await loadRows(client, PROPOSALS, lookups.proposalHashes)) state.proposals.load(row.proposalHash, row);
    for (const row of await loadRows(client, PENDING_APPROVALS, lookups.requestHashes)) state.approvals.load(row.requestHash, row);
  }

  async #write(client: pg.PoolClient, state: FoldState): Promise<void> {
    await insertRows(client, ENTRIES_SEEN, state.entries);
    await insertRows(client, KEYS, state.keys.inserted);
    await updateRows(client, KEYS, state.keys.updated());
    await insertRows(client, GRANTS, state.grants.inserted);
    await updateRows(client, GRANTS, state.grants.updated());
    await insertRows(client, PROPOSALS, state.proposals.inserted);
    await updateRows(client, PROPOSALS, state.proposals.updated());
    await insertRows(client, PENDING_APPROVALS, state.approvals.inserted);
    await updateRows(client, PENDING_APPROVALS, state.approvals.updated());
    await insertRows(client, ENFORCEMENT_RECORDS, state.decisions);
    await insertRows(client, REFUSALS, state.refusals);
    // Buckets in key order: concurrent applies of different partitions then lock shared buckets in one order (no deadlock).
    const buckets = [...state.refusalCounts.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
    await addCounts(client, REFUSAL_METRICS, 'count', buckets);
  }
}
