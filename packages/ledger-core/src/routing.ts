import { createHash } from 'node:crypto';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { AUTHORITY_TYPES, type Statement, type StatementType } from './statements.js';

/** The authority stream is ledger partition 0. */
export const AUTHORITY_PARTITION = 0;

/**
 * The ledger partition of an agent's events: 1 + (first four bytes of
 * SHA-256(agentId), big-endian) mod eventPartitions. Every statement about
 * one agent lands in one partition, so order and duplicates are decided there.
 */
export function eventPartitionOf(agentId: string, eventPartitions: number): number {
  const digest = createHash('sha256').update(agentId).digest();
  return 1 + (digest.readUInt32BE(0) % eventPartitions);
}

/** The ledger partition a statement belongs in. */
export function partitionOf(statement: Statement, eventPartitions: number): number {
  if (AUTHORITY_TYPES.has(statement.type)) return AUTHORITY_PARTITION;
  const body = statement.body as { agentId: string };
  return eventPartitionOf(body.agentId, eventPartitions);
}

/**
 * Checks that a statement of `type` about `agentId` may sit in `partition`
 * (SPEC.md section 5). `intake.rejected` is written by the sequencer of the
 * partition where the rejected input arrived, so it may sit in any partition.
 * Throws INTEGRITY_FAILURE otherwise.
 */
export function checkRouting(type: StatementType, agentId: string | null, partition: number, eventPartitions: number): void {
  if (type === 'intake.rejected') {
    if (partition > eventPartitions) throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `partition ${partition} does not exist`);
    return;
  }
  if (AUTHORITY_TYPES.has(type)) {
    if (partition !== AUTHORITY_PARTITION) throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `${type} belongs on the authority stream`);
    return;
  }
  if (partition === AUTHORITY_PARTITION || agentId === null) {
    throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `${type} does not belong on the authority stream`);
  }
  if (eventPartitionOf(agentId, eventPartitions) !== partition) {
    throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `statement about ${agentId} is in the wrong partition`);
  }
}
