import { createStatement, generateSeed, keyIdOf, nodeEd25519, statementHash, type Signer, type Statement } from '@agent-ledger/core';
import { pendingApprovalFrom } from '../../src/pending-approval.js';
import type { PendingApproval } from '../../src/types.js';

/** A fresh signer for a principal. */
export function makeSigner(principal: string): Signer {
  const seed = generateSeed();
  return { principal, keyId: keyIdOf(seed, nodeEd25519), seed };
}

/** A real proposal and the confirmation request for it, and the pending approval channels show. */
export function makePending(options: { tier?: number; deadlineMs?: number; recipient?: string } = {}): {
  pending: PendingApproval;
  proposal: Statement<'proposal.submitted'>;
  request: Statement<'confirmation.requested'>;
} {
  const agent = makeSigner('agent:builder-7');
  const gate = makeSigner('service:gate');
  const proposal = createStatement(
    'proposal.submitted',
    {
      agentId: agent.principal,
      tool: 'payments.transfer',
      actionType: 'transfer',
      targetResource: 'account:ops-main',
      recipient: options.recipient ?? 'vendor:acme-gmbh',
      scope: 'once',
      args: { amountCents: 125_000, currency: 'EUR', memo: 'invoice *2024-117* <@everyone>' },
      query: 'pay the acme invoice',
      labels: ['finance'],
      channel: 'api',
      context: {},
    },
    agent,
  );
  const request = createStatement(
    'confirmation.requested',
    {
      agentId: agent.principal,
      proposal: statementHash(proposal),
      tier: options.tier ?? 2,
      deadline: new Date(Date.now() + (options.deadlineMs ?? 60_000)).toISOString(),
      approvalsRequired: 1,
      channels: ['telegram', 'discord', 'cli', 'webhook'],
    },
    gate,
  );
  return { pending: pendingApprovalFrom(request, proposal), proposal, request };
}

/** Resolves with the next value a subscription delivers (event-driven waiting, no sleeps). */
export function next<T>(subscribe: (listener: (value: T) => void) => () => void, filter: (value: T) => boolean = () => true): Promise<T> {
  return new Promise((resolve) => {
    const off = subscribe((value) => {
      if (!filter(value)) return;
      off();
      resolve(value);
    });
  });
}
