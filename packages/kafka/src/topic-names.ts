import type { ReasonCode } from '@agent-ledger/refusals';

/**
 * The live ledger's topics. Ledger partition 0 is the authority stream and
 * partitions 1..N the events partitions (N = `eventPartitions`):
 *
 * - `intake`: 1 + N partitions; partition 0 carries authority submissions,
 *   partition p the submissions for ledger partition p.
 * - `authority`: 1 partition, ledger partition 0.
 * - `events`: N partitions; ledger partition p is Kafka partition p - 1.
 * - `checkpoints`: 1 + N partitions; partition p seals ledger partition p.
 */
export const LedgerTopic = {
  intake: 'ledger.intake',
  authority: 'ledger.authority',
  events: 'ledger.events',
  checkpoints: 'ledger.checkpoints',
} as const;

/** One of the names in {@link LedgerTopic}. */
export type LedgerTopic = (typeof LedgerTopic)[keyof typeof LedgerTopic];

/** The topic that carries refusals of one code (a SIEM subscribes per code). */
export function refusalTopicName(code: ReasonCode): string {
  return `ledger.refusals.${code}`;
}
