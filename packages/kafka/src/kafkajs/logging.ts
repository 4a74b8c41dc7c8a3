import { logLevel as KafkaLogLevel } from 'kafkajs';
import type { LogEntry, logCreator } from 'kafkajs';

/** Log levels a deployment can choose with `LEDGER_LOG_LEVEL`. */
export type LogLevelName = 'nothing' | 'error' | 'warn' | 'info' | 'debug';

const LEVELS: Readonly<Record<LogLevelName, KafkaLogLevel>> = {
  nothing: KafkaLogLevel.NOTHING,
  error: KafkaLogLevel.ERROR,
  warn: KafkaLogLevel.WARN,
  info: KafkaLogLevel.INFO,
  debug: KafkaLogLevel.DEBUG,
};

const LABELS: ReadonlyMap<KafkaLogLevel, string> = new Map([
  [KafkaLogLevel.ERROR, 'error'],
  [KafkaLogLevel.WARN, 'warn'],
  [KafkaLogLevel.INFO, 'info'],
  [KafkaLogLevel.DEBUG, 'debug'],
]);

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

/**
 * A kafkajs logCreator that writes one JSON line per entry to stderr, at or
 * below the level kafkajs hands it (the bus's level, or `KAFKAJS_LOG_LEVEL`
 * when set, as kafkajs decides) after `effectiveLevel`.
 */
export function ledgerLogCreator(): logCreator {
  return (level: KafkaLogLevel) => (entry: LogEntry) => {
    const effective = effectiveLevel(entry);
    if (effective > level) return;
    const { timestamp, message, logger: _logger, ...extra } = entry.log;
    const line = { time: timestamp, level: LABELS.get(effective) ?? entry.label, source: `kafkajs.${entry.namespace}`, message, ...extra };
    process.stderr.write(`${JSON.stringify(line)}\n`);
  };
}
