import type { Admin, ITopicConfig } from 'kafkajs';
import { OperationalCode, OperationalError } from '@agent-ledger/refusals';
import { integrityFailure, invalidArgument, unavailable } from '../errors.js';
import type { TopicSpec } from '../log-bus.js';
import { fromKafkaError, protocolErrorTypes } from './errors.js';

/** ConfigResourceTypes.TOPIC (Kafka's DescribeConfigs resource type 2); kafkajs's enum is not reachable from ESM. */
const TOPIC_RESOURCE = 2;

function checkSpecs(specs: readonly TopicSpec[]): void {
  const names = new Set<string>();
  for (const spec of specs) {
    if (typeof spec.name !== 'string' || spec.name === '') throw invalidArgument('a topic name must be a non-empty string');
    if (names.has(spec.name)) throw invalidArgument(`topic ${spec.name} is listed twice`);
    names.add(spec.name);
    if (!Number.isSafeInteger(spec.partitions) || spec.partitions < 1) throw invalidArgument(`topic ${spec.name}: partitions must be a positive integer`);
    if (spec.replicationFactor !== undefined && (!Number.isSafeInteger(spec.replicationFactor) || spec.replicationFactor < 1)) {
      throw invalidArgument(`topic ${spec.name}: replicationFactor must be a positive integer`);
    }
    for (const [name, value] of Object.entries(spec.config ?? {})) {
      if (typeof value !== 'string') throw invalidArgument(`topic ${spec.name}: setting ${name} must be a string`);
    }
  }
}

function toCreateRequest(spec: TopicSpec): ITopicConfig {
  return {
    topic: spec.name,
    numPartitions: spec.partitions,
    ...(spec.replicationFactor === undefined ? {} : { replicationFactor: spec.replicationFactor }),
    configEntries: Object.entries(spec.config ?? {}).map(([name, value]) => ({ name, value })),
  };
}

/**
 * Creates the missing topics, then checks every listed topic as the cluster
 * now has it (so a topic another process created at the same moment is
 * checked too). Returns the partition counts it saw.
 */
export async function ensureTopics(admin: Admin, specs: readonly TopicSpec[]): Promise<ReadonlyMap<string, number>> {
  checkSpecs(specs);
  if (specs.length === 0) return new Map();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = specs.filter((spec) => !existing.has(spec.name));
    // createTopics resolves false when another process created them first; the checks below cover that case.
    if (missing.length > 0) await admin.createTopics({ topics: missing.map(toCreateRequest), waitForLeaders: true });
  } catch (err) {
    // Just after a topic is made, a node whose metadata has not caught up yet answers that it does not
    // host it: a passing state of the cluster, not a missing topic. Retryable, so startup waits it out.
    if (protocolErrorTypes(err).has('UNKNOWN_TOPIC_OR_PARTITION')) {
      throw unavailable(`cannot create topics: the cluster does not know a topic it is making yet (UNKNOWN_TOPIC_OR_PARTITION): ${(err as Error).message}`, { cause: err, retryable: true });
    }
    throw fromKafkaError(err, 'cannot create topics');
  }

  const shapes = await topicShapes(admin, specs.map((spec) => spec.name));
  const problems: string[] = [];
  const weaker: string[] = [];
  for (const spec of specs) {
    const shape = shapes.get(spec.name);
    if (shape?.partitions !== spec.partitions) problems.push(`${spec.name} has ${shape?.partitions ?? 'no'} partitions, the ledger needs ${spec.partitions}`);
    if (shape !== undefined && spec.replicationFactor !== undefined && shape.replicas < spec.replicationFactor) {
      weaker.push(`topic ${spec.name}: replication factor ${shape.replicas} found, ${spec.replicationFactor} required`);
    }
  }
  const settings = await settingMismatches(admin, specs);
  problems.push(...settings.problems);
  weaker.push(...settings.weaker);
  if (problems.length > 0) throw integrityFailure(`topics do not match the ledger's configuration: ${problems.join('; ')}`);
  if (weaker.length > 0) {
    throw new OperationalError(OperationalCode.BAD_CONFIGURATION, `topics are less durable than this deployment requires (fix them with kafka-configs / kafka-reassign-partitions, or choose the deployment they were made for): ${weaker.join('; ')}`);
  }
  return new Map([...shapes].map(([name, shape]) => [name, shape.partitions]));
}

/** Partition count and the smallest replica count over the partitions of each topic. */
async function topicShapes(admin: Admin, topics: readonly string[]): Promise<Map<string, { partitions: number; replicas: number }>> {
  try {
    const { topics: metadata } = await admin.fetchTopicMetadata({ topics: [...topics] });
    return new Map(metadata.map((topic) => [topic.name, { partitions: topic.partitions.length, replicas: Math.min(...topic.partitions.map((p) => p.replicas.length)) }]));
  } catch (err) {
    if (protocolErrorTypes(err).has('UNKNOWN_TOPIC_OR_PARTITION')) throw unavailable(`cannot read the metadata of ${topics.join(', ')} yet: ${(err as Error).message}`, { cause: err, retryable: true });
    throw fromKafkaError(err, `cannot read the metadata of ${topics.join(', ')}`);
  }
}

/** Partition counts of `topics` as the cluster's metadata has them. */
export async function partitionCounts(admin: Admin, topics: readonly string[]): Promise<Map<string, number>> {
  try {
    const { topics: metadata } = await admin.fetchTopicMetadata({ topics: [...topics] });
    return new Map(metadata.map((topic) => [topic.name, topic.partitions.length]));
  } catch (err) {
    if (protocolErrorTypes(err).has('UNKNOWN_TOPIC_OR_PARTITION')) throw unavailable(`cannot read the metadata of ${topics.join(', ')} yet: ${(err as Error).message}`, { cause: err, retryable: true });
    throw fromKafkaError(err, `cannot read the metadata of ${topics.join(', ')}`);
  }
}

/**
 * An existing value of a durability setting that is weaker than `wanted`, as
 * a message, or undefined when it is as strong or stronger. Values compared
 * are Kafka's strings.
 */
function weakerDurability(topic: string, name: string, actual: string | undefined, wanted: string): string | undefined {
  if (name === 'min.insync.replicas') {
    const found = Number(actual);
    if (actual === undefined || !Number.isSafeInteger(found) || found < Number(wanted)) return `topic ${topic}: min.insync.replicas ${actual ?? '(unset)'} found, at least ${wanted} required`;
    return undefined;
  }
  if (name === 'unclean.leader.election.enable' && wanted === 'false' && actual !== 'false') {
    return `topic ${topic}: unclean.leader.election.enable ${actual ?? '(unset)'} found, false required`;
  }
  return undefined;
}

const DURABILITY_SETTINGS: ReadonlySet<string> = new Set(['min.insync.replicas', 'unclean.leader.election.enable']);

/**
 * Listed settings whose value on the cluster differs. A ledger topic whose
 * retention someone shortened loses history, so it is refused like a wrong
 * partition count (`problems`); a durability setting weaker than listed goes
 * to `weaker`, a stronger one is accepted. Settings the spec does not list
 * are not looked at.
 */
async function settingMismatches(admin: Admin, specs: readonly TopicSpec[]): Promise<{ problems: string[]; weaker: string[] }> {
  const withSettings = specs.filter((spec) => Object.keys(spec.config ?? {}).length > 0);
  if (withSettings.length === 0) return { problems: [], weaker: [] };
  let described: Awaited<ReturnType<Admin['describeConfigs']>>;
  try {
    described = await admin.describeConfigs({
      includeSynonyms: false,
      resources: withSettings.map((spec) => ({ type: TOPIC_RESOURCE, name: spec.name, configNames: Object.keys(spec.config ?? {}) })),
    });
  } catch (err) {
    throw fromKafkaError(err, 'cannot read topic settings');
  }
  const problems: string[] = [];
  const weaker: string[] = [];
  for (const spec of withSettings) {
    const resource = described.resources.find((r) => r.resourceName === spec.name);
    for (const [name, wanted] of Object.entries(spec.config ?? {})) {
      const actual = resource?.configEntries.find((entry) => entry.configName === name)?.configValue;
      if (DURABILITY_SETTINGS.has(name)) {
        const weak = weakerDurability(spec.name, name, actual, wanted);
        if (weak !== undefined) weaker.push(weak);
      } else if (actual !== wanted) problems.push(`${spec.name} has ${name}=${actual ?? '(unset)'}, the ledger needs ${wanted}`);
    }
  }
  return { problems, weaker };
}

/** Per partition, the last stable offset (see `partitionBounds` in range-reader.ts for why it is the LSO). */
/** The first offset at or after a time, per partition (kafkajs answers -1 past the end: the end offset then). */
export async function offsetsForTime(admin: Admin, topic: string, timestampMs: number): Promise<ReadonlyMap<number, string>> {
  if (typeof topic !== 'string' || topic === '') throw invalidArgument('topic must be a non-empty string');
  if (!Number.isSafeInteger(timestampMs) || timestampMs < 0) throw invalidArgument('timestampMs must be a non-negative integer');
  try {
    const [byTime, ends] = await Promise.all([admin.fetchTopicOffsetsByTimestamp(topic, timestampMs), admin.fetchTopicOffsets(topic)]);
    const end = new Map(ends.map((entry) => [entry.partition, entry.offset]));
    return new Map(byTime.map((entry) => [entry.partition, entry.offset === '-1' ? (end.get(entry.partition) ?? '0') : entry.offset]));
  } catch (err) {
    throw fromKafkaError(err, `cannot read the offsets of ${topic} by time`);
  }
}

/** A group's committed offsets on a topic (kafkajs answers -1 for none: null here). */
export async function committedOffsets(admin: Admin, groupId: string, topic: string): Promise<ReadonlyMap<number, string | null>> {
  if (typeof groupId !== 'string' || groupId === '') throw invalidArgument('groupId must be a non-empty string');
  if (typeof topic !== 'string' || topic === '') throw invalidArgument('topic must be a non-empty string');
  // A new broker or group answers "coordinator loading / not available" for a while: wait for it, bounded.
  const deadline = Date.now() + 60_000;
  for (let delay = 100; ; delay = Math.min(2_000, delay * 2)) {
    try {
      const [found] = await admin.fetchOffsets({ groupId, topics: [topic] });
      return new Map((found?.partitions ?? []).map((p) => [p.partition, p.offset === '-1' ? null : p.offset]));
    } catch (err) {
      const error = fromKafkaError(err, `cannot read the committed offsets of ${groupId} on ${topic}`);
      if (!error.retryable || Date.now() + delay > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

export async function endOffsets(admin: Admin, topic: string): Promise<ReadonlyMap<number, string>> {
  if (typeof topic !== 'string' || topic === '') throw invalidArgument('topic must be a non-empty string');
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    return new Map(offsets.map((entry) => [entry.partition, entry.offset]));
  } catch (err) {
    throw fromKafkaError(err, `cannot read the offsets of ${topic}`);
  }
}
