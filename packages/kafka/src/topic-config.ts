import { readFile } from 'node:fs/promises';
import { OperationalCode, OperationalError } from '@agent-ledger/refusals';
import { LedgerTopic } from './topic-names.js';

/** Topic settings by Kafka name (`retention.ms`), values as Kafka takes them: strings. */
export type TopicSettings = Readonly<Record<string, string>>;

/** Kinds of Kafka deployment `deploy/topics.json` describes. */
export const DEPLOYMENTS = ['single-broker', 'cluster'] as const;
/** One of {@link DEPLOYMENTS}. */
export type DeploymentName = (typeof DEPLOYMENTS)[number];

/**
 * What a deployment needs of every ledger topic: the replication factor it is
 * created with (an existing topic with fewer replicas is refused) and
 * `min.insync.replicas` (at least this many replicas hold a record before the
 * producer, which always asks for acks from all of them, hears it is written).
 */
export interface Durability {
  readonly replicationFactor: number;
  readonly minInsyncReplicas: number;
}

/** The shared topic configuration of a deployment (`deploy/topics.json`). */
export interface TopicConfig {
  /** N: the number of events partitions (ledger partitions 1..N). */
  readonly eventPartitions: number;
  /** Replication of every topic the ledger creates, per kind of deployment. */
  readonly deployments: Readonly<Record<DeploymentName, Durability>>;
  /** Settings of each ledger topic; all four are present. */
  readonly topics: Readonly<Record<LedgerTopic, TopicSettings>>;
  /** Partition count and settings shared by every `ledger.refusals.<CODE>` topic. */
  readonly refusalTopic: { readonly partitions: number; readonly settings: TopicSettings };
}

/** Bounds that catch a typo, not limits of Kafka. */
const MAX_EVENT_PARTITIONS = 1024;
const MAX_REPLICATION_FACTOR = 16;
const MAX_REFUSAL_PARTITIONS = 64;
/** Kafka setting names: lowercase words joined by dots (`min.insync.replicas`). */
const SETTING_NAME = /^[a-z][a-z0-9]*(\.[a-z0-9]+)*$/;

/**
 * `deploy/topics.json` of this checkout, found from the compiled file
 * (packages/kafka/dist/src/topic-config.js). A deployment outside the
 * repository passes its own path.
 */
const DEFAULT_PATH = new URL('../../../../deploy/topics.json', import.meta.url);

function invalid(source: string, message: string, cause?: unknown): OperationalError {
  return new OperationalError(OperationalCode.BAD_CONFIGURATION, `${source}: ${message}`, cause === undefined ? {} : { cause });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Checks that `value` is an object with exactly `keys`. */
function exactObject(value: unknown, keys: readonly string[], where: string, source: string): Record<string, unknown> {
  if (!isObject(value)) throw invalid(source, `${where} must be an object`);
  for (const key of Object.keys(value)) if (!keys.includes(key)) throw invalid(source, `${where} has an unknown key ${JSON.stringify(key)}`);
  for (const key of keys) if (!Object.hasOwn(value, key)) throw invalid(source, `${where} lacks ${JSON.stringify(key)}`);
  return value;
}

function integer(value: unknown, min: number, max: number, where: string, source: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw invalid(source, `${where} must be an integer from ${min} to ${max}`);
  }
  return value;
}

function settings(value: unknown, where: string, source: string): TopicSettings {
  if (!isObject(value)) throw invalid(source, `${where} must be an object of settings`);
  const entries: [string, string][] = [];
  for (const [name, setting] of Object.entries(value)) {
    if (!SETTING_NAME.test(name)) throw invalid(source, `${where} has a malformed setting name ${JSON.stringify(name)}`);
    if (typeof setting !== 'string') throw invalid(source, `${where}.${name} must be a string (Kafka settings are strings)`);
    entries.push([name, setting]);
  }
  return Object.freeze(Object.fromEntries(entries));
}

/**
 * Parses and checks a topic configuration document strictly: exactly the
 * documented keys, integers in range, every setting a string. Throws
 * BAD_CONFIGURATION naming `source` and the first problem. JSON.parse keeps the
 * last of duplicate keys; the file is our own, so that is accepted here.
 */
export function parseTopicConfig(text: string, source = 'topic config'): TopicConfig {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (err) {
    throw invalid(source, 'not JSON', err);
  }
  const root = exactObject(document, ['eventPartitions', 'deployments', 'topics', 'refusalTopic'], 'the document', source);
  const deploymentsDocument = exactObject(root['deployments'], DEPLOYMENTS, 'deployments', source);
  const deployments = Object.fromEntries(
    DEPLOYMENTS.map((name) => {
      const entry = exactObject(deploymentsDocument[name], ['replicationFactor', 'minInsyncReplicas'], `deployments.${name}`, source);
      const replicationFactor = integer(entry['replicationFactor'], 1, MAX_REPLICATION_FACTOR, `deployments.${name}.replicationFactor`, source);
      const minInsyncReplicas = integer(entry['minInsyncReplicas'], 1, replicationFactor, `deployments.${name}.minInsyncReplicas`, source);
      return [name, Object.freeze({ replicationFactor, minInsyncReplicas })];
    }),
  ) as Record<DeploymentName, Durability>;
  const names = Object.values(LedgerTopic);
  const topics = exactObject(root['topics'], names, 'topics', source);
  const refusal = exactObject(root['refusalTopic'], ['partitions', 'config'], 'refusalTopic', source);
  return Object.freeze({
    eventPartitions: integer(root['eventPartitions'], 1, MAX_EVENT_PARTITIONS, 'eventPartitions', source),
    deployments: Object.freeze(deployments),
    topics: Object.freeze({
      [LedgerTopic.intake]: settings(topics[LedgerTopic.intake], `topics.${LedgerTopic.intake}`, source),
      [LedgerTopic.authority]: settings(topics[LedgerTopic.authority], `topics.${LedgerTopic.authority}`, source),
      [LedgerTopic.events]: settings(topics[LedgerTopic.events], `topics.${LedgerTopic.events}`, source),
      [LedgerTopic.checkpoints]: settings(topics[LedgerTopic.checkpoints], `topics.${LedgerTopic.checkpoints}`, source),
    }),
    refusalTopic: Object.freeze({
      partitions: integer(refusal['partitions'], 1, MAX_REFUSAL_PARTITIONS, 'refusalTopic.partitions', source),
      settings: settings(refusal['config'], 'refusalTopic.config', source),
    }),
  });
}

/**
 * Reads and parses a topic configuration file, by default this checkout's
 * `deploy/topics.json`. Throws BAD_CONFIGURATION when the file cannot be read or
 * does not parse.
 */
export async function loadTopicConfig(path: string | URL = DEFAULT_PATH): Promise<TopicConfig> {
  const source = path instanceof URL ? path.pathname : path;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw invalid(source, 'cannot be read', err);
  }
  return parseTopicConfig(text, source);
}
