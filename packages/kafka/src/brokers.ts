/** The local broker of `scripts/kafka.sh`. */
const LOCAL_BROKER = '127.0.0.1:9092';

/**
 * Bootstrap brokers from `LEDGER_KAFKA_BROKERS` (comma-separated `host:port`,
 * blanks ignored), or the local broker when unset or empty.
 */
export function brokersFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): readonly string[] {
  const listed = (env['LEDGER_KAFKA_BROKERS'] ?? '')
    .split(',')
    .map((broker) => broker.trim())
    .filter((broker) => broker !== '');
  return Object.freeze(listed.length > 0 ? listed : [LOCAL_BROKER]);
}

/** The brokers this process talks to by default (`LEDGER_KAFKA_BROKERS`, read once at load). */
export const DEFAULT_BROKERS: readonly string[] = brokersFromEnv();
