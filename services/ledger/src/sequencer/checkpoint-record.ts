import type { ChainHead } from '@agent-ledger/core';
import type { LogBus } from '@agent-ledger/kafka';
import { ledgerPartitionOf, type TopicNames } from '../topics.js';

/** Extra time read back before a checkpoint's times, for clock skew between the sequencer and the broker's record timestamps. */
export const WINDOW_MARGIN_MS = 60_000;

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

/**
 * Where a role that folds proposal lives (gate, timer) starts reading events
 * Kafka partition `kp`: at the time its newest checkpoint says the open
 * proposals begin (`lifeFromMs`, or the seal time when none was open), less
 * {@link WINDOW_MARGIN_MS}. Every proposal sequenced before then had its
 * final decision on the log at the checkpoint, and everything about an open
 * one (its requests, answers, timeouts, decisions) comes after it. '0' when
 * there is no checkpoint that says so.
 */
export async function openProposalsStart(bus: LogBus, topics: TopicNames, kp: number): Promise<string> {
  const checkpoint = await newestCheckpoint(bus, topics.checkpoints, ledgerPartitionOf(topics, topics.events, kp));
  const sealedAtMs = checkpoint?.sealedAt === undefined ? Number.NaN : Date.parse(checkpoint.sealedAt);
  if (checkpoint?.lifeFromMs === undefined || !Number.isFinite(sealedAtMs)) return '0';
  const fromMs = Math.max(0, Math.min(sealedAtMs, checkpoint.lifeFromMs ?? sealedAtMs) - WINDOW_MARGIN_MS);
  return (await bus.offsetsForTime(topics.events, fromMs)).get(kp) ?? '0';
}
