import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { canonicalJson, statementHash, type Statement } from '@agent-ledger/core';
import type { PendingApproval } from './types.js';

/** Longest argument text shown to an approver before it is cut (platform message limits are ~2-4k characters). */
const MAX_ARGS_TEXT = 1500;

/**
 * Builds the pending approval a channel shows from the confirmation request
 * and the proposal it names. Refuses a request that is not bound to that
 * proposal, so an approver is never shown one operation and asked about another.
 */
export function pendingApprovalFrom(
  request: Statement<'confirmation.requested'>,
  proposal: Statement<'proposal.submitted'>,
): PendingApproval {
  if (request.type !== 'confirmation.requested' || proposal.type !== 'proposal.submitted') {
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'expected a confirmation request and a proposal');
  }
  if (request.body.proposal !== statementHash(proposal)) {
    throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, 'the confirmation request names another proposal');
  }
  if (request.body.agentId !== proposal.body.agentId) {
    throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, 'the confirmation request names another agent');
  }
  const p = proposal.body;
  return {
    proposal: request.body.proposal,
    request: statementHash(request),
    agentId: p.agentId,
    tier: request.body.tier,
    deadline: request.body.deadline,
    operation: {
      tool: p.tool,
      actionType: p.actionType,
      targetResource: p.targetResource,
      recipient: p.recipient,
      scope: p.scope,
      args: p.args,
    },
  };
}

/**
 * The human-readable text of a pending approval: every field of the exact
 * operation, the arguments in canonical JSON (cut, and saying so, past
 * {@link MAX_ARGS_TEXT} characters), and the hashes an approver can check.
 */
export function describePendingApproval(pending: PendingApproval): string {
  const op = pending.operation;
  let args = canonicalJson(op.args);
  if (args.length > MAX_ARGS_TEXT) args = `${args.slice(0, MAX_ARGS_TEXT)}… (${args.length} characters, cut; see the proposal)`;
  return [
    `Approval needed (tier ${pending.tier}) before ${pending.deadline}`,
    `agent: ${pending.agentId}`,
    `tool: ${op.tool}`,
    `action: ${op.actionType}`,
    `target: ${op.targetResource}`,
    `recipient: ${op.recipient}`,
    `scope: ${op.scope}`,
    `args: ${args}`,
    `proposal: ${pending.proposal}`,
    `request: ${pending.request}`,
  ].join('\n');
}
