import { LedgerError } from '@agent-ledger/refusals';
import { Kafka } from 'kafkajs';
import type { Admin, KafkaConfig, Producer } from 'kafkajs';
import { invalidArgument, unavailable } from '../errors.js';
import type { InRecord, LogBus, OutRecord, SubscribeOptions, Subscription, TopicSpec, TransactionalWriter } from '../log-bus.js';
import { fromKafkaError } from './errors.js';
import { kafkaLogLevel, ledgerLogCreator, subscriptionReporter, type KafkaLogSinkFor, type LogLevelName, type SubscriptionReporter } from './logging.js';
import { PartitionCounts } from './partition-counts.js';
import { producerSettings } from './producer-settings.js';
import { STEP_LIMIT_MS, withDeadline } from './deadline.js';
import { quietly } from './quietly.js';
import { readRange } from './range-reader.js';
import { toTopicMessages, unanswered } from './records.js';
import { KafkajsSubscription } from './subscription.js';
import { committedOffsets, endOffsets, ensureTopics, offsetsForTime, partitionCounts } from './topic-admin.js';
import { KafkajsTransactionalWriter } from './writer.js';
import { reuseCoordinatorLookups } from './coordinator-cache.js';

/**
 * TLS and SASL of every connection (absent: plain text, no authentication).
 * Values, not file names: the caller reads its files.
 */
export interface KafkaSecurity {
  /** TLS with the cluster's CA (PEM); `cert` and `key` (PEM) for client-certificate authentication. */
  readonly ssl?: { readonly ca: string; readonly cert?: string; readonly key?: string };
  /** SASL/SCRAM credentials. */
  readonly sasl?: { readonly mechanism: 'scram-sha-256' | 'scram-sha-512'; readonly username: string; readonly password: string };
}

/** How to reach the cluster. */
export interface KafkaBusOptions {
  /** Bootstrap brokers, `host:port`. */
  readonly brokers: readonly string[];
  /** Names this process to the brokers; also prefixes the throwaway groups of `readRange`. */
  readonly clientId: string;
  /** kafkajs's log level; `LEDGER_LOG_LEVEL`, else `error`, when absent. */
  readonly logLevel?: LogLevelName;
  /**
   * Where kafkajs's entries go, by source (`kafkajs.<namespace>`), after the
   * level filter: a service passes its own logger's children so they share
   * its format and destination. Absent: JSON lines on stderr.
   */
  readonly logSink?: KafkaLogSinkFor;
  /** TLS and SASL; plain text when absent. */
  readonly security?: KafkaSecurity;
}

/** kafkajs's `ssl` and `sasl` settings for `security`: server certificates always checked. */
function securitySettings(security: KafkaSecurity | undefined): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  const settings: Pick<KafkaConfig, 'ssl' | 'sasl'> = {};
  if (security?.ssl !== undefined) {
    const { ca, cert, key } = security.ssl;
    settings.ssl = { rejectUnauthorized: true, ca: [ca], ...(cert === undefined ? {} : { cert }), ...(key === undefined ? {} : { key }) };
  }
  if (security?.sasl !== undefined) {
    const { mechanism, username, password } = security.sasl;
    // Two branches only because kafkajs types each mechanism apart.
    settings.sasl = mechanism === 'scram-sha-256' ? { mechanism, username, password } : { mechanism, username, password };
  }
  return settings;
}

function closedError(): Error {
  return unavailable('the log bus is closed', { retryable: false });
}

/** The kafkajs 2.2.4 adapter of `LogBus`. */
class KafkajsBus implements LogBus {
  readonly #clientId: string;
  /**
   * A fresh kafkajs client. Each writer gets its own: kafkajs keeps one
   * "committed offsets" map per client, shared by its consumers, and a
   * transaction's sendOffsets marks offsets there before the transaction
   * commits. Kept apart, a writer's aborted transaction cannot move a
   * consumer's idea of its group's position.
   */
  readonly #newKafka: () => Kafka;
  readonly #kafka: Kafka;
  readonly #partitions: PartitionCounts;
  readonly #writers = new Set<KafkajsTransactionalWriter>();
  readonly #subscriptions = new Set<KafkajsSubscription>();
  /** Where a subscription without its own `onError` reports. */
  readonly #report: SubscriptionReporter;
  #admin: Promise<Admin> | undefined;
  #publisher: Promise<Producer> | undefined;
  #closing: Promise<void> | undefined;
  /** Set once subscriptions and writers are done, just before the admin client disconnects. */
  #adminRetired = false;

  constructor(options: KafkaBusOptions) {
    this.#clientId = options.clientId;
    const level = kafkaLogLevel(options.logLevel);
    const brokers = [...options.brokers];
    const security = securitySettings(options.security);
    const logCreator = ledgerLogCreator(options.logSink);
    this.#report = subscriptionReporter(level, options.logSink);
    // The one place this package makes a kafkajs client: every producer, consumer and admin client gets the same TLS and SASL settings.
    this.#newKafka = () => reuseCoordinatorLookups(new Kafka({ clientId: options.clientId, brokers, logLevel: level, logCreator, ...security }));
    this.#kafka = this.#newKafka();
    this.#partitions = new PartitionCounts((topic) =>
      withDeadline(
        (async () => (await partitionCounts(await this.#adminClient(), [topic])).get(topic) ?? 0)(),
        STEP_LIMIT_MS,
        `reading the partition count of ${topic}`,
      ),
    );
  }

  #open(): void {
    if (this.#closing !== undefined) throw closedError();
  }

  /**
   * The shared admin client, connected on first use (and again after a failed
   * connect). Refused once it is retired, so that late clean-up (a range
   * reader finishing after `close`) cannot open a connection nobody closes.
   */
  #adminClient(): Promise<Admin> {
    if (this.#adminRetired) return Promise.reject(closedError());
    this.#admin ??= (async () => {
      const admin = this.#kafka.admin();
      try {
        await withDeadline(admin.connect(), STEP_LIMIT_MS, 'connecting the admin client');
        return admin;
      } catch (err) {
        this.#admin = undefined;
        throw fromKafkaError(err, 'cannot connect to the cluster');
      }
    })();
    return this.#admin;
  }

  /** The shared non-transactional producer, created on first use and replaced after any failure. */
  #publisherClient(): Promise<Producer> {
    this.#publisher ??= (async () => {
      const producer = this.#kafka.producer(producerSettings());
      try {
        await withDeadline(producer.connect(), STEP_LIMIT_MS, 'connecting the producer');
        return producer;
      } catch (err) {
        this.#publisher = undefined;
        await quietly(producer.disconnect());
        throw fromKafkaError(err, 'cannot connect the producer');
      }
    })();
    return this.#publisher;
  }

  async ensureTopics(specs: readonly TopicSpec[]): Promise<void> {
    this.#open();
    const counts = await ensureTopics(await this.#adminClient(), specs);
    for (const [topic, count] of counts) this.#partitions.remember(topic, count);
  }

  async clusterSize(): Promise<number> {
    this.#open();
    const admin = await this.#adminClient();
    try {
      return (await admin.describeCluster()).brokers.length;
    } catch (err) {
      throw fromKafkaError(err, 'cannot describe the cluster');
    }
  }

  async defaultReplicationFactor(): Promise<number | undefined> {
    this.#open();
    try {
      const admin = await this.#adminClient();
      const broker = (await admin.describeCluster()).brokers[0];
      if (broker === undefined) return undefined;
      // Resource type 4 is BROKER (kafkajs's ConfigResourceTypes).
      const { resources } = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: 4, name: String(broker.nodeId), configNames: ['default.replication.factor'] }] });
      const value = Number(resources[0]?.configEntries.find((e) => e.configName === 'default.replication.factor')?.configValue);
      return Number.isSafeInteger(value) && value > 0 ? value : undefined;
    } catch {
      return undefined;
    }
  }

  async writer(transactionalId: string): Promise<TransactionalWriter> {
    this.#open();
    if (typeof transactionalId !== 'string' || transactionalId === '') throw invalidArgument('transactionalId must be a non-empty string');
    const writer = await KafkajsTransactionalWriter.open(
      { kafka: this.#newKafka(), partitions: this.#partitions, admin: () => this.#adminClient(), onClose: (w) => this.#writers.delete(w) },
      transactionalId,
    );
    this.#writers.add(writer);
    return writer;
  }

  async publish(records: readonly OutRecord[]): Promise<void> {
    this.#open();
    await this.#partitions.check(records);
    if (records.length === 0) return;
    const producer = await this.#publisherClient();
    try {
      // What kafkajs reports sent without writing (see `unanswered`) is sent again: it was never written, and the
      // idempotent producer's sequence numbers let the broker drop a copy if it was after all.
      let pending: readonly OutRecord[] = records;
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt === 3) throw unavailable(`publishing: the client reported ${pending.length} records sent without writing them, three times`, { retryable: true });
        const metadata = await withDeadline(producer.sendBatch({ topicMessages: toTopicMessages(pending), acks: -1 }), STEP_LIMIT_MS, 'publishing');
        pending = unanswered(pending, metadata);
      }
    } catch (err) {
      // A fresh producer (new producer id) next time: kafkajs's sequence numbers
      // may no longer match the broker's after a failed idempotent send.
      this.#publisher = undefined;
      await quietly(producer.disconnect());
      throw fromKafkaError(err, 'publish failed');
    }
  }

  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    this.#open();
    const subscription = await KafkajsSubscription.start(this.#kafka, options, { onStop: (s) => this.#subscriptions.delete(s), admin: () => this.#adminClient(), report: this.#report });
    this.#subscriptions.add(subscription);
    return subscription;
  }

  readRange(topic: string, partition: number, fromOffset: string): AsyncIterable<InRecord> {
    this.#open();
    return readRange({ kafka: this.#kafka, admin: () => this.#adminClient(), clientId: this.#clientId }, topic, partition, fromOffset);
  }

  async endOffsets(topic: string): Promise<ReadonlyMap<number, string>> {
    this.#open();
    return withDeadline((async () => endOffsets(await this.#adminClient(), topic))(), STEP_LIMIT_MS, `reading the end offsets of ${topic}`);
  }

  async offsetsForTime(topic: string, timestampMs: number): Promise<ReadonlyMap<number, string>> {
    this.#open();
    return withDeadline((async () => offsetsForTime(await this.#adminClient(), topic, timestampMs))(), STEP_LIMIT_MS, `reading the offsets of ${topic} by time`);
  }

  async committedOffsets(groupId: string, topic: string): Promise<ReadonlyMap<number, string | null>> {
    this.#open();
    return withDeadline((async () => committedOffsets(await this.#adminClient(), groupId, topic))(), 2 * STEP_LIMIT_MS, `reading the offsets group ${groupId} committed on ${topic}`);
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      await Promise.all([...this.#subscriptions].map((s) => quietly(s.stop())));
      await Promise.all([...this.#writers].map((w) => quietly(w.close())));
      this.#adminRetired = true;
      const publisher = this.#publisher;
      const admin = this.#admin;
      this.#publisher = undefined;
      this.#admin = undefined;
      if (publisher !== undefined) await quietly(publisher.then((p) => p.disconnect()));
      if (admin !== undefined) await quietly(admin.then((a) => a.disconnect()));
    })();
    return this.#closing;
  }
}

/**
 * A `LogBus` over kafkajs 2.2.4. Connections open on first use; nothing is
 * contacted here. Throws SCHEMA_INVALID for an empty broker list or client id.
 */
export function createKafkaBus(options: KafkaBusOptions): LogBus {
  if (!Array.isArray(options.brokers) || options.brokers.length === 0 || options.brokers.some((b) => typeof b !== 'string' || b === '')) {
    throw invalidArgument('brokers must be a non-empty list of host:port strings');
  }
  if (typeof options.clientId !== 'string' || options.clientId === '') throw invalidArgument('clientId must be a non-empty string');
  const sasl = options.security?.sasl;
  if (sasl !== undefined && (!['scram-sha-256', 'scram-sha-512'].includes(sasl.mechanism) || sasl.username === '' || sasl.password === '')) {
    throw invalidArgument('sasl needs a mechanism scram-sha-256 or scram-sha-512, a username and a password');
  }
  if (options.security?.ssl !== undefined && options.security.ssl.ca === '') throw invalidArgument('ssl needs the CA certificate (PEM)');
  return new KafkajsBus(options);
}
