import { logLevel as KafkaLogLevel } from 'kafkajs';
import type { LogEntry, logCreator } from 'kafkajs';

/** Log levels a deployment can choose with `LEDGER_LOG_LEVEL`. */
export type LogLevelName = 'nothing' | 'error' | 'warn' | 'info' | 'debug';

/** The levels a kafkajs entry is written at, after `effectiveLevel`. */
export type KafkaLogLevelName = Exclude<LogLevelName, 'nothing'>;

/**
 * The members of one kafkajs entry besides its message and timestamp: the
 * broker, client id, error text, retry counts... whatever kafkajs attached
 * (untrusted: a broker's error message can end up here).
 */
export type KafkaLogFields = Readonly<Record<string, unknown>>;

/**
 * Where a bus's kafkajs entries go instead of its own stderr lines: one
 * method per level, each called with the entry's fields and its message.
 * That is pino's `logger.warn(object, message)` shape, so a pino logger or
 * child is a sink as it is; this package does not depend on pino.
 */
export interface KafkaLogSink {
  error(fields: KafkaLogFields, message: string): void;
  warn(fields: KafkaLogFields, message: string): void;
  info(fields: KafkaLogFields, message: string): void;
  debug(fields: KafkaLogFields, message: string): void;
}

/**
 * The sink for the entries of one source, `kafkajs.<namespace>`
 * (`kafkajs.Connection`, `kafkajs.Consumer`...), asked once per source and
 * client: a service returns a child logger that names the source.
 */
export type KafkaLogSinkFor = (source: string) => KafkaLogSink;

const LEVELS: Readonly<Record<LogLevelName, KafkaLogLevel>> = {
  nothing: KafkaLogLevel.NOTHING,
  error: KafkaLogLevel.ERROR,
  warn: KafkaLogLevel.WARN,
  info: KafkaLogLevel.INFO,
  debug: KafkaLogLevel.DEBUG,
};

const LABELS: ReadonlyMap<KafkaLogLevel, KafkaLogLevelName> = new Map([
  [KafkaLogLevel.ERROR, 'error'],
  [KafkaLogLevel.WARN, 'warn'],
  [KafkaLogLevel.INFO, 'info'],
  [KafkaLogLevel.DEBUG, 'debug'],
]);

/**
 * Members every line of the ledger's log has (or that a JSON logger writes
 * itself): an entry's field of the same name is renamed `kafkajs_<name>`, so
 * it can neither overwrite them nor be written twice in one object.
 */
const RESERVED: ReadonlySet<string> = new Set(['time', 'level', 'source', 'message', 'msg']);

/**
 * The kafkajs log level for `LEDGER_LOG_LEVEL` (case-insensitive), `error`
 * when unset or unknown: kafkajs logs every join, commit and reconnect at info,
 * which drowns a service's own log.
 */
export function kafkaLogLevel(name: string | undefined = process.env['LEDGER_LOG_LEVEL']): KafkaLogLevel {
  const key = (name ?? '').trim().toLowerCase();
  return Object.hasOwn(LEVELS, key) ? LEVELS[key as LogLevelName] : KafkaLogLevel.ERROR;
}

/**
 * The level an entry is really worth. Some kafkajs errors are logged at error
 * and then handed to the adapter, which retries them or reports them to its
 * caller as typed errors, so here they are warnings: the Connection's log of
 * every error response (including COORDINATOR_LOAD_IN_PROGRESS and
 * CONCURRENT_TRANSACTIONS, which kafkajs retries by itself, and
 * INVALID_PRODUCER_EPOCH when a writer is fenced), and the Producer's log of a
 * failed send. A consumer's crash or a failing batch handler stays an error:
 * nobody may be waiting on those.
 */
function effectiveLevel(entry: LogEntry): KafkaLogLevel {
  if (entry.level !== KafkaLogLevel.ERROR) return entry.level;
  if (entry.namespace === 'Connection' && entry.log.message.startsWith('Response ')) return KafkaLogLevel.WARN;
  if (entry.namespace === 'Producer') return KafkaLogLevel.WARN;
  return entry.level;
}

/** One kafkajs entry as the ledger logs it: its level after `effectiveLevel`, source, message and fields. */
interface LedgerLogEntry {
  readonly level: KafkaLogLevelName;
  readonly source: string;
  readonly message: string;
  readonly fields: KafkaLogFields;
}

/** `entry` as the ledger logs it at `level` (kafkajs's level for the client), or undefined when it is filtered out. */
function ledgerEntry(level: KafkaLogLevel, entry: LogEntry): LedgerLogEntry | undefined {
  const effective = effectiveLevel(entry);
  const label = LABELS.get(effective);
  if (effective > level || label === undefined) return undefined;
  const { timestamp: _timestamp, message, logger: _logger, ...extra } = entry.log;
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(extra)) fields[RESERVED.has(key) ? `kafkajs_${key}` : key] = value;
  // The root kafkajs logger has no namespace.
  const source = typeof entry.namespace === 'string' && entry.namespace !== '' ? `kafkajs.${entry.namespace}` : 'kafkajs';
  return { level: label, source, message: String(message), fields };
}

/**
 * A kafkajs logCreator that writes each entry at or below the level kafkajs
 * hands it (the bus's level, or `KAFKAJS_LOG_LEVEL` when set, as kafkajs
 * decides) after `effectiveLevel`: to the sink `sinkFor` gives for its source,
 * or, with no sink, as one JSON line on stderr (`time`, `level`, `source`,
 * `message`, then the entry's fields).
 */
export function ledgerLogCreator(sinkFor?: KafkaLogSinkFor): logCreator {
  return (level: KafkaLogLevel) => {
    const sinks = new Map<string, KafkaLogSink>();
    return (entry: LogEntry) => {
      const logged = ledgerEntry(level, entry);
      if (logged === undefined) return;
      if (sinkFor === undefined) {
        const line = { time: entry.log.timestamp, level: logged.level, source: logged.source, message: logged.message, ...logged.fields };
        process.stderr.write(`${JSON.stringify(line)}\n`);
        return;
      }
      let sink = sinks.get(logged.source);
      if (sink === undefined) {
        sink = sinkFor(logged.source);
        sinks.set(logged.source, sink);
      }
      sink[logged.level](logged.fields, logged.message);
    };
  };
}

/** Says what befell a subscription whose caller gave no `onError`. */
export type SubscriptionReporter = (groupId: string, error: { readonly code: string; readonly message: string }, stopped: boolean) => void;

/**
 * The reporter of a bus's subscriptions without an `onError`: every report is
 * logged (source `ledger.subscription`, an error when consumption stopped, a
 * warning otherwise) to the sink, or as a JSON line on stderr, unless the
 * bus's level is `nothing`. No subscription problem goes unsaid: a role that
 * forgot to listen is still seen to be stuck.
 */
export function subscriptionReporter(level: KafkaLogLevel, sinkFor?: KafkaLogSinkFor): SubscriptionReporter {
  const source = 'ledger.subscription';
  let sink: KafkaLogSink | undefined;
  return (groupId, error, stopped) => {
    if (level === KafkaLogLevel.NOTHING) return;
    const label: KafkaLogLevelName = stopped ? 'error' : 'warn';
    const fields = { groupId, code: error.code, stopped };
    if (sinkFor === undefined) {
      process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: label, source, message: error.message, ...fields })}\n`);
      return;
    }
    sink ??= sinkFor(source);
    sink[label](fields, error.message);
  };
}
