import { KNOWN_CODES } from '@agent-ledger/refusals';
import type { TopicSpec } from './log-bus.js';
import type { TopicConfig } from './topic-config.js';
import { LedgerTopic, refusalTopicName } from './topic-names.js';

/**
 * Every topic the ledger needs under `config`: the four ledger topics with
 * their partition counts, then one refusal topic per registered ReasonCode in
 * registry order. Each spec carries the shared replication factor and a copy
 * of its settings.
 */
export function ledgerTopics(config: TopicConfig): TopicSpec[] {
  const n = config.eventPartitions;
  const spec = (name: string, partitions: number, settings: Readonly<Record<string, string>>): TopicSpec => ({
    name,
    partitions,
    replicationFactor: config.replicationFactor,
    config: { ...settings },
  });
  return [
    spec(LedgerTopic.intake, 1 + n, config.topics[LedgerTopic.intake]),
    spec(LedgerTopic.authority, 1, config.topics[LedgerTopic.authority]),
    spec(LedgerTopic.events, n, config.topics[LedgerTopic.events]),
    spec(LedgerTopic.checkpoints, 1 + n, config.topics[LedgerTopic.checkpoints]),
    ...KNOWN_CODES.map((code) => spec(refusalTopicName(code), config.refusalTopic.partitions, config.refusalTopic.settings)),
  ];
}
