import type { IHeaders, KafkaMessage, RecordMetadata, TopicMessages } from 'kafkajs';
import type { InRecord, OutRecord } from '../log-bus.js';

/**
 * The kafkajs form of `records`, one entry per topic in order of first
 * appearance. kafkajs keeps the order of messages within a partition, which is
 * the only order Kafka has.
 */
export function toTopicMessages(records: readonly OutRecord[]): TopicMessages[] {
  const byTopic = new Map<string, TopicMessages>();
  for (const record of records) {
    let entry = byTopic.get(record.topic);
    if (entry === undefined) {
      entry = { topic: record.topic, messages: [] };
      byTopic.set(record.topic, entry);
    }
    entry.messages.push({
      partition: record.partition,
      key: record.key ?? null,
      value: record.value,
      ...(record.headers === undefined ? {} : { headers: { ...record.headers } }),
    });
  }
  return [...byTopic.values()];
}

function headerText(value: Buffer | string): string {
  return typeof value === 'string' ? value : value.toString('utf8');
}

/**
 * Decodes headers as UTF-8. kafkajs gives an array for a key that occurs more
 * than once; the last value wins, as with the Java client's `lastHeader`.
 */
function toHeaders(headers: IHeaders | undefined): Readonly<Record<string, string>> {
  const out: Record<string, string> = {};
  if (headers === undefined) return out;
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const last = Array.isArray(value) ? value.at(-1) : value;
    // defineProperty, not assignment: a header named "__proto__" (untrusted) stays an ordinary own key.
    if (last !== undefined) Object.defineProperty(out, name, { value: headerText(last), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** The adapter-neutral form of a record kafkajs fetched from `topic`/`partition`. */
export function toInRecord(topic: string, partition: number, message: KafkaMessage): InRecord {
  return {
    topic,
    partition,
    offset: message.offset,
    key: message.key === null || message.key === undefined ? null : message.key.toString('utf8'),
    value: message.value ?? Buffer.alloc(0),
    timestamp: message.timestamp,
    headers: toHeaders(message.headers),
  };
}

/**
 * The records of `records` whose partition has no answer in `metadata` (what
 * kafkajs's `sendBatch` resolved with): never written. kafkajs 2.2.4 retries
 * a failed Produce only to brokers that have not answered yet; when a
 * partition's leadership moves to a broker that already answered for other
 * partitions of the same call, the retry sends nothing for it and the call
 * still resolves. Seen on a three-node cluster: a transaction committed
 * without the entries of one partition. Empty when every partition answered.
 */
export function unanswered(records: readonly OutRecord[], metadata: readonly RecordMetadata[]): OutRecord[] {
  const answered = new Set(metadata.filter((m) => m.errorCode === 0).map((m) => `${m.topicName}\u0000${m.partition}`));
  return records.filter((record) => !answered.has(`${record.topic}\u0000${record.partition}`));
}
