import { KNOWN_CODES, type ReasonCode } from '@agent-ledger/refusals';
import type { Entry } from '@agent-ledger/core';
import { durabilitySettings, type Durability } from '@agent-ledger/kafka';

/**
 * Topic and consumer-group names of one installation. Every name starts with
 * the installation's prefix (`ledger` by default), so several ledgers (a
 * demo, a test run) can share one broker without seeing each other.
 */
export interface TopicNames {
  readonly prefix: string;
  readonly intake: string;
  readonly authority: string;
  readonly events: string;
  readonly checkpoints: string;
  /** The refusal topic a SIEM subscribes to for one code. */
  refusal(code: ReasonCode): string;
  /** Every refusal topic. */
  readonly refusals: readonly string[];
  /** A consumer group or transactional id of this installation. */
  group(name: string): string;
}

/** Names for an installation prefix. */
export function topicNames(prefix = 'ledger'): TopicNames {
  const refusal = (code: ReasonCode): string => `${prefix}.refusals.${code}`;
  return {
    prefix,
    intake: `${prefix}.intake`,
    authority: `${prefix}.authority`,
    events: `${prefix}.events`,
    checkpoints: `${prefix}.checkpoints`,
    refusal,
    refusals: KNOWN_CODES.map(refusal),
    group: (name) => `${prefix}-${name}`,
  };
}

/** Kafka topic and partition that hold ledger partition p. */
export function entryLocation(topics: TopicNames, ledgerPartition: number): { topic: string; partition: number } {
  return ledgerPartition === 0 ? { topic: topics.authority, partition: 0 } : { topic: topics.events, partition: ledgerPartition - 1 };
}

/** Ledger partition of a record read from the authority or events topic. */
export function ledgerPartitionOf(topics: TopicNames, topic: string, partition: number): number {
  return topic === topics.authority ? 0 : partition + 1;
}

/** Kafka value of an entry record: the entry as JSON (SPEC.md section 5). */
export function entryRecordValue(entry: Entry): string {
  return JSON.stringify(entry);
}

/** Settings of each topic kind (deploy/topics.json documents the same values for operators). */
const LOG_FOREVER = { 'cleanup.policy': 'delete', 'retention.ms': '-1', 'retention.bytes': '-1' };
const INTAKE = { 'cleanup.policy': 'delete', 'retention.ms': String(7 * 86_400_000) };
const REFUSALS = { 'cleanup.policy': 'delete', 'retention.ms': String(30 * 86_400_000) };

/**
 * Every topic of an installation with its partition count and settings. With
 * `durability` (a Kafka deployment, deploy/topics.json), each topic also gets
 * its replication factor, min.insync.replicas and no unclean leader election;
 * without it (the embedded log, one process) none of those.
 */
export function topicSpecs(topics: TopicNames, eventPartitions: number, durability?: Durability): { name: string; partitions: number; replicationFactor?: number; config: Record<string, string> }[] {
  const spec = (name: string, partitions: number, config: Record<string, string>): { name: string; partitions: number; replicationFactor?: number; config: Record<string, string> } =>
    durability === undefined ? { name, partitions, config } : { name, partitions, replicationFactor: durability.replicationFactor, config: { ...config, ...durabilitySettings(durability) } };
  return [
    spec(topics.intake, eventPartitions + 1, INTAKE),
    spec(topics.authority, 1, LOG_FOREVER),
    spec(topics.events, eventPartitions, LOG_FOREVER),
    spec(topics.checkpoints, eventPartitions + 1, LOG_FOREVER),
    ...topics.refusals.map((name) => spec(name, 1, REFUSALS)),
  ];
}
