import { KNOWN_CODES } from '@agent-ledger/refusals';
import type { TopicSpec } from './log-bus.js';
import type { DeploymentName, Durability, TopicConfig } from './topic-config.js';
import { LedgerTopic, refusalTopicName } from './topic-names.js';

/**
 * The settings that make a topic as durable as `durability` says:
 * `min.insync.replicas`, and no unclean leader election (a replica that missed
 * acknowledged records never becomes leader). `ensureTopics` treats both as
 * minimums on an existing topic.
 */
export function durabilitySettings(durability: Durability): Record<string, string> {
  return { 'min.insync.replicas': String(durability.minInsyncReplicas), 'unclean.leader.election.enable': 'false' };
}

/**
 * Every topic the ledger needs under `config` on a `deployment`: the four
 * ledger topics with their partition counts, then one refusal topic per
 * registered ReasonCode in registry order. Each spec carries the deployment's
 * replication factor, a copy of its settings and the durability settings.
 */
export function ledgerTopics(config: TopicConfig, deployment: DeploymentName): TopicSpec[] {
  const n = config.eventPartitions;
  const durability = config.deployments[deployment];
  const spec = (name: string, partitions: number, settings: Readonly<Record<string, string>>): TopicSpec => ({
    name,
    partitions,
    replicationFactor: durability.replicationFactor,
    config: { ...settings, ...durabilitySettings(durability) },
  });
  return [
    spec(LedgerTopic.intake, 1 + n, config.topics[LedgerTopic.intake]),
    spec(LedgerTopic.authority, 1, config.topics[LedgerTopic.authority]),
    spec(LedgerTopic.events, n, config.topics[LedgerTopic.events]),
    spec(LedgerTopic.checkpoints, 1 + n, config.topics[LedgerTopic.checkpoints]),
    ...KNOWN_CODES.map((code) => spec(refusalTopicName(code), config.refusalTopic.partitions, config.refusalTopic.settings)),
  ];
}
