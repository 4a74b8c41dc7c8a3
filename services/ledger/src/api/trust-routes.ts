import type { FastifyInstance, FastifyRequest } from 'fastify';
import { buildTrust, type RegistrationProof } from '@agent-ledger/client';
import type { Entry } from '@agent-ledger/core';
import type { AuthorityFollower } from '../authority-follower.js';
import type { LogIndex } from './log-index.js';
import { badArgument, notFound } from './errors.js';
import { hiddenOrMissing, principalOf, readsEverything, type Reader } from './read-auth.js';

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
export function registerTrustRoutes(app: FastifyInstance, deps: { readonly follower: AuthorityFollower; readonly logIndex: LogIndex; readonly readerOf: (req: FastifyRequest) => Reader }): void {
  app.get('/v1/trust', async () => {
    const text = await deps.logIndex.entryText(0, 0);
    const { state, size } = deps.follower.current();
    if (text === undefined || size === 0) throw notFound('the genesis is not indexed yet', true);
    // Each key registered after genesis with the proof of its registration: the first authority checkpoint covering it.
    const keys = [...state.keys()];
    const proofs = new Map<number, RegistrationProof | null>();
    for (const key of keys) {
      if (key.registeredAt === 0 || proofs.has(key.registeredAt)) continue;
      const receipt = await deps.logIndex.receipt(0, key.registeredAt, 'first');
      proofs.set(key.registeredAt, receipt === undefined ? null : { entry: receipt.entry as unknown as RegistrationProof['entry'], inclusionProof: receipt.inclusionProof, checkpoint: receipt.checkpoint });
    }
    // A client accepts only proven keys: while a registration is not covered by a checkpoint yet, the document
    // describes the authority stream up to that registration (its keys and revocations before it), never a gap.
    let asOf = size;
    for (const [at, proof] of proofs) if (proof === null) asOf = Math.min(asOf, at);
    const prefix = keys
      .filter((k) => k.registeredAt < asOf)
      .map((k) => ({ ...k, revokedAt: k.revokedAt !== undefined && k.revokedAt < asOf ? k.revokedAt : undefined }));
    return buildTrust((JSON.parse(text) as Entry).envelope, prefix, asOf, (at) => proofs.get(at) ?? null);
  });

  app.get<{ Params: { partition: string; index: string }; Querystring: { waitMs?: string } }>('/v1/receipts/:partition/:index', async (req) => {
    const partition = wholeNumber(req.params.partition, 'partition');
    const index = wholeNumber(req.params.index, 'index');
    const waitMs = Math.min(wholeNumber(req.query.waitMs ?? '0', 'waitMs'), MAX_RECEIPT_WAIT_MS);
    const deadline = Date.now() + waitMs;
    const reader = deps.readerOf(req);
    // Someone else's entry is answered with the body of a position without a checkpointed entry. At once: which
    // positions hold entries is no secret (any principal reads the checkpoints' sizes), whose entries they are is.
    const missing = hiddenOrMissing('no checkpointed entry at that position for this reader (yet)', true);
    for (;;) {
      // Whose the entry is is known before any proof is computed.
      if (!readsEverything(reader)) {
        const text = await deps.logIndex.entryText(partition, index);
        if (text !== undefined && !entryIsAbout(reader, JSON.parse(text) as unknown)) throw missing;
      }
      const receipt = await deps.logIndex.receipt(partition, index);
      if (receipt !== undefined && (readsEverything(reader) || entryIsAbout(reader, receipt.entry))) return receipt;
      const remaining = deadline - Date.now();
      if (remaining <= 0) break;
      // The checkpoint and the entries arrive on two subscriptions: once the checkpoint is in, the tree follows shortly.
      const covered = await deps.logIndex.waitForCheckpoint(partition, index + 1, remaining);
      if (covered) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw missing;
  });
}

/**
 * Whether an entry is the reader's to read: an admin's or auditor's always,
 * else the principal the entry is about (its author, or the agent its body
 * names).
 */
function entryIsAbout(reader: Reader, entry: unknown): boolean {
  if (readsEverything(reader)) return true;
  const statement = (entry as { envelope?: { statement?: { author?: { principal?: unknown }; body?: { agentId?: unknown } } } } | null)?.envelope?.statement;
  const principal = principalOf(reader);
  return principal !== undefined && (statement?.author?.principal === principal || statement?.body?.agentId === principal);
}

function wholeNumber(text: string, name: string): number {
  if (!/^\d{1,12}$/.test(text)) throw badArgument(`${name} must be a whole number`);
  return Number(text);
}
