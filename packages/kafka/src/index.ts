export type {
  ConsumedOffset,
  InBatch,
  InRecord,
  LogBus,
  OutRecord,
  SubscribeOptions,
  Subscription,
  TopicSpec,
  TransactionalWriter,
} from './log-bus.js';
export { WriterFencedError, UNREACHABLE_CODE } from './errors.js';
export type { BusError } from './errors.js';
export { ChunkedCommitter, TRANSACTION_BYTES } from './chunked-commit.js';
export { DEFAULT_BROKERS, brokersFromEnv } from './brokers.js';
export { createKafkaBus } from './kafkajs/bus.js';
export type { KafkaBusOptions } from './kafkajs/bus.js';
export type { KafkaLogFields, KafkaLogSink, KafkaLogSinkFor, LogLevelName } from './kafkajs/logging.js';
export { LedgerTopic, refusalTopicName } from './topic-names.js';
export { durabilitySettings, ledgerTopics } from './ledger-topics.js';
export { DEPLOYMENTS, loadTopicConfig, parseTopicConfig } from './topic-config.js';
export type { DeploymentName, Durability, TopicConfig, TopicSettings } from './topic-config.js';
export type { KafkaSecurity } from './kafkajs/bus.js';
export { createEmbeddedBus, readEmbeddedLayout } from './embedded/bus.js';
export type { EmbeddedBusOptions, EmbeddedLayout } from './embedded/bus.js';
export type { FsyncPolicy } from './embedded/log-store.js';
