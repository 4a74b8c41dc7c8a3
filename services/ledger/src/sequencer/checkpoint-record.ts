import type { ChainHead } from '@agent-ledger/core';
import type { LogBus } from '@agent-ledger/kafka';

/** Checkpoint-topic offsets read back from its end to find the newest checkpoint (each checkpoint takes two: record and commit marker). */
const CHECKPOINT_TAIL = 64;

/**
 * A record of the checkpoints topic: the signed note, and what a restarted
 * role resumes from (the chain head and, on an events partition, the
 * sequencing time of the oldest proposal still open then, null when none).
 * Written by the partition's sequencer beside the signed note; the head is
 * checked against the note's root before a sequencer trusts it.
 */
export interface CheckpointRecord {
  readonly partition: number;
  readonly size: number;
  readonly note: string;
  readonly head?: ChainHead;
  readonly sealedAt?: string;
  readonly lifeFromMs?: number | null;
}

/**
 * The newest checkpoint record of ledger partition `partition` (read from
 * the tail of the checkpoints topic, whose partition p holds ledger
 * partition p), if any. Records that are not JSON objects with a numeric
 * size are skipped.
 */
export async function newestCheckpoint(bus: LogBus, checkpointsTopic: string, partition: number): Promise<CheckpointRecord | undefined> {
  const end = BigInt((await bus.endOffsets(checkpointsTopic)).get(partition) ?? '0');
  const from = end > BigInt(CHECKPOINT_TAIL) ? end - BigInt(CHECKPOINT_TAIL) : 0n;
  let newest: CheckpointRecord | undefined;
  for await (const record of bus.readRange(checkpointsTopic, partition, from.toString())) {
    let cp: CheckpointRecord;
    try {
      cp = JSON.parse(record.value.toString('utf8')) as CheckpointRecord;
    } catch {
      continue;
    }
    if (typeof cp !== 'object' || cp === null || typeof cp.size !== 'number') continue;
    if (newest === undefined || cp.size >= newest.size) newest = cp;
  }
  return newest;
}
