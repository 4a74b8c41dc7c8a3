import { pino, type Logger, type LevelWithSilent } from 'pino';
import type { KafkaLogSinkFor } from '@agent-ledger/kafka';

/**
 * The ledger's process log: one JSON object a line on stderr, written by
 * pino, with `time` (ISO 8601), `level` (a word), `source` (the role or
 * library that speaks: `api`, `ledger`, `kafkajs.Connection`...) and
 * `message`, then the line's own fields. kafkajs's entries come through the
 * same logger ({@link kafkaLogSink}), so one query
 * (`jq 'select(.level=="error")'`) reads all of them, and so does any log
 * shipper that expects JSON lines.
 *
 * The level comes from `LEDGER_LOG_LEVEL` (`error`, `warn`, `info`, `debug`,
 * or `nothing`); unset, the ledger logs at `info` and kafkajs at `error`
 * (packages/kafka `kafkaLogLevel`: kafkajs logs every join, commit and
 * reconnect at info).
 */
const LEVELS: Readonly<Record<string, LevelWithSilent>> = { nothing: 'silent', silent: 'silent', error: 'error', warn: 'warn', info: 'info', debug: 'debug' };

/** The pino level for a `LEDGER_LOG_LEVEL` value (case-insensitive); `info` when unset or unknown. */
export function ledgerLogLevel(name: string | undefined = process.env['LEDGER_LOG_LEVEL']): LevelWithSilent {
  return LEVELS[(name ?? '').trim().toLowerCase()] ?? 'info';
}

let root: Logger | undefined;

/** The process's root logger (created on first use, writing synchronously to stderr so a crash loses nothing). */
export function rootLogger(): Logger {
  root ??= pino(
    {
      level: ledgerLogLevel(),
      messageKey: 'message',
      base: undefined,
      timestamp: () => `,"time":"${new Date().toISOString()}"`,
      formatters: { level: (label) => ({ level: label }) },
    },
    pino.destination({ dest: 2, sync: true }),
  );
  return root;
}

/** A logger whose lines name `source` (a role: `api`, `sequencer`...). */
export function loggerFor(source: string): Logger {
  return rootLogger().child({ source });
}

/**
 * The `(message) => void` the roles take, writing through `logger` at
 * `info`; a message that reports a failure (it names an error code, or says
 * failed / lost / unreachable / fenced) is written at `warn`, and an internal
 * error at `error`, so an operator filtering on level sees what needs them.
 */
export function lineLogger(logger: Logger): (message: string) => void {
  return (message: string) => {
    if (/internal error/i.test(message)) logger.error(message);
    else if (/\b(failed|lost|unreachable|fenced|not reachable|could not|halted|INTEGRITY_FAILURE|UNAVAILABLE)\b/.test(message)) logger.warn(message);
    else logger.info(message);
  };
}

/**
 * The kafka bus's log sink: each kafkajs source (`kafkajs.<namespace>`)
 * writes through a child of the process's logger that names it, so kafkajs
 * lines have the same members, time format, level filter and destination as
 * the ledger's own.
 */
export function kafkaLogSink(): KafkaLogSinkFor {
  return (source: string) => loggerFor(source);
}
