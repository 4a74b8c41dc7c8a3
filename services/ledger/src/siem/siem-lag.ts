import type { LogBus } from '@agent-ledger/kafka';
import { ledgerPartitionOf, type TopicNames } from '../topics.js';

/** How long a lag reading may take before it is reported as unknown (the dashboard and a scrape wait for it). */
export const SIEM_LAG_TIMEOUT_MS = 2_000;

/** How far the SIEM exporter is behind on one ledger partition. */
export interface SiemPartitionLag {
  /** Ledger partition (0: authority; p: events Kafka partition p - 1). */
  readonly partition: number;
  /** The exporter's committed position (the next offset it reads), null when it committed none. */
  readonly committed: string | null;
  /** The partition's last stable offset: the end a read_committed reader sees now. */
  readonly end: string;
  /**
   * Entries at or after the committed position, at most: log offsets from
   * it to the end, less the end's commit marker on a log that writes them.
   * Exact when 0; otherwise an upper bound (offsets of aborted transactions
   * and earlier commit markers count too).
   */
  readonly behind: number;
}

/** A lag reading: per partition, or unknown with the reason (never a guessed number). */
export type SiemLag = { readonly known: true; readonly partitions: readonly SiemPartitionLag[] } | { readonly known: false; readonly reason: string };

/** Where the exporter's position is read from. */
export interface SiemLagSource {
  readonly bus: LogBus;
  readonly topics: TopicNames;
  /**
   * Whether the log writes a commit marker after each transaction, taking an
   * offset (Kafka does; the embedded log does not). The ledger topics are
   * written in transactions only, so on such a log the offset just below the
   * last stable offset is a marker, never an entry: a caught-up exporter's
   * committed position is one below the end.
   */
  readonly commitMarkers: boolean;
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from the log within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Reads how far the SIEM exporter is behind the log it exports refusals from:
 * its consumer group's committed offsets on the authority and events topics
 * against their last stable offsets (the same group the exporter's
 * transactions commit to, so a position counts only once its output is on
 * the refusal topics). Unknown when the log does not answer in time.
 */
export async function measureSiemLag(source: SiemLagSource, timeoutMs = SIEM_LAG_TIMEOUT_MS): Promise<SiemLag> {
  const group = source.topics.group('siem');
  const read = async (topic: string): Promise<SiemPartitionLag[]> => {
    const [ends, committed] = await Promise.all([source.bus.endOffsets(topic), source.bus.committedOffsets(group, topic)]);
    return [...ends].map(([kp, endText]) => {
      const end = BigInt(endText);
      const position = committed.get(kp) ?? null;
      const marker = source.commitMarkers && end > 0n ? 1n : 0n;
      const gap = end - (position === null ? 0n : BigInt(position)) - marker;
      return { partition: ledgerPartitionOf(source.topics, topic, kp), committed: position, end: endText, behind: gap > 0n ? Number(gap) : 0 };
    });
  };
  try {
    const [authority, events] = await withTimeout(Promise.all([read(source.topics.authority), read(source.topics.events)]), timeoutMs);
    return { known: true, partitions: [...authority, ...events].sort((a, b) => a.partition - b.partition) };
  } catch (err) {
    return { known: false, reason: err instanceof Error ? err.message : String(err) };
  }
}
