import type { FastifyInstance } from 'fastify';
import { PINNED_ROLES, type PinnedKey } from '@agent-ledger/client';
import type { BodyOf, Entry, TrustRoot } from '@agent-ledger/core';
import type { AuthorityFollower } from '../authority-follower.js';
import type { LogIndex } from './log-index.js';
import { badArgument, notFound } from './errors.js';

/** Longest a receipt request waits for the checkpoint that covers its entry. */
const MAX_RECEIPT_WAIT_MS = 30_000;

/**
 * Trust discovery and receipts: `GET /v1/trust` serves the trust document a
 * client pins (the trust root in the trust-root file format, the genesis
 * statement, and the registry of sequencer, gate, timer, service, approver
 * and bridge keys with the authority indexes where each is valid), so that no
 * client reads another role's key file; `GET /v1/receipts/:partition/:index`
 * serves an entry's receipt (SPEC.md section 10), waiting up to `waitMs` for
 * the checkpoint that covers it.
 */
export function registerTrustRoutes(app: FastifyInstance, deps: { readonly follower: AuthorityFollower; readonly logIndex: LogIndex }): void {
  app.get('/v1/trust', async () => {
    const text = await deps.logIndex.entryText(0, 0);
    const { state, size } = deps.follower.current();
    if (text === undefined || size === 0) throw notFound('the genesis is not indexed yet', true);
    const genesis = (JSON.parse(text) as Entry).envelope;
    const body = genesis.statement.body as BodyOf<'genesis'>;
    const trustRoot: TrustRoot = { v: 1, origin: body.origin, rootKeys: [...body.rootKeys], threshold: body.rootThreshold };
    const keys: PinnedKey[] = [];
    for (const key of state.keys()) {
      if (!key.roles.some((role) => PINNED_ROLES.includes(role))) continue;
      keys.push({ keyId: key.keyId, principal: key.principal, roles: [...key.roles], registeredAt: key.registeredAt, revokedAt: key.revokedAt ?? null });
    }
    keys.sort((a, b) => a.registeredAt - b.registeredAt || (a.keyId < b.keyId ? -1 : 1));
    return { v: 1, trustRoot, genesis, authoritySize: size, keys };
  });

  app.get<{ Params: { partition: string; index: string }; Querystring: { waitMs?: string } }>('/v1/receipts/:partition/:index', async (req) => {
    const partition = wholeNumber(req.params.partition, 'partition');
    const index = wholeNumber(req.params.index, 'index');
    const waitMs = Math.min(wholeNumber(req.query.waitMs ?? '0', 'waitMs'), MAX_RECEIPT_WAIT_MS);
    const deadline = Date.now() + waitMs;
    for (;;) {
      const receipt = await deps.logIndex.receipt(partition, index);
      if (receipt !== undefined) return receipt;
      const remaining = deadline - Date.now();
      if (remaining <= 0) break;
      // The checkpoint and the entries arrive on two subscriptions: once the checkpoint is in, the tree follows shortly.
      const covered = await deps.logIndex.waitForCheckpoint(partition, index + 1, remaining);
      if (covered) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw notFound('no checkpointed entry at that position yet', true);
  });
}

function wholeNumber(text: string, name: string): number {
  if (!/^\d{1,12}$/.test(text)) throw badArgument(`${name} must be a whole number`);
  return Number(text);
}
